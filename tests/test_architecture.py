"""The package layout's rules, read from the source with `ast` (docs/architecture.md).

The engine is what an agent embeds: it must import on its own, without the lab that measures
it, the run history, the app's Streamlit helpers or the command line. Nothing in `compaction/`
may import in a cycle, and the top level stays small enough to read at a glance.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import compaction

PACKAGE = Path(compaction.__file__).resolve().parent
OUTSIDE_ENGINE = (
    "compaction.lab",
    "compaction.history",
    "compaction.ui",
    "compaction.commands",
    "compaction.integrations",
)
OUTSIDE_ENGINE_MODULES = ("compaction.cli", "compaction.__main__")
MAX_TOP_LEVEL_MODULES = 20


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _executed(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except the bodies of `if TYPE_CHECKING:` (imports for the type checker only,
    never run)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))


def imports_of(module: str) -> Iterator[tuple[str, int]]:
    """(imported compaction module, line) for every import in `module`, lazy ones included.

    `from compaction.formats import detect` names the submodule, not the package."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in _executed(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("compaction"):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            if not base.startswith("compaction"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield (submodule if submodule in MODULES else base), node.lineno


def _is_engine(module: str) -> bool:
    return not (
        module in OUTSIDE_ENGINE_MODULES
        or any(module == p or module.startswith(p + ".") for p in OUTSIDE_ENGINE)
    )


def test_the_engine_imports_nothing_from_the_lab_history_ui_or_cli() -> None:
    broken = [
        f"{module} line {line} imports {target}"
        for module in MODULES
        if _is_engine(module)
        for target, line in imports_of(module)
        if not _is_engine(target)
    ]
    assert broken == []


def test_the_summariser_does_not_depend_on_the_scorer() -> None:
    # The probes score summaries; text patterns both need live in the engine (text_patterns).
    summarizers = [m for m in MODULES if m.startswith("compaction.summarizers")]
    assert summarizers
    for module in summarizers:
        for target, line in imports_of(module):
            assert not target.startswith("compaction.lab"), f"{module} line {line}: {target}"


def test_no_import_cycles_anywhere_in_the_package() -> None:
    graph = {module: {t for t, _ in imports_of(module) if t in MODULES} for module in MODULES}

    # A package's __init__ importing its own submodules is how packages re-export, and a
    # submodule naming its package is then the same import: only cycles between distinct
    # modules that are not each other's package count.
    def related(a: str, b: str) -> bool:
        return a.startswith(b + ".") or b.startswith(a + ".")

    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if related(module, target):
                continue
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert cycles == []


def test_the_top_level_is_small_and_has_no_prefix_families() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    families = [p for p in PACKAGE.rglob("*.py") if p.stem.startswith(("sweep_", "extractive_"))]
    assert families == []


def test_the_engine_imports_on_its_own() -> None:
    # Every engine module imports without pulling in the lab, history, UI or CLI packages.
    import subprocess
    import sys

    engine = sorted(m for m in MODULES if _is_engine(m))
    script = (
        "import importlib, sys\n"
        f"for name in {engine!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.startswith({OUTSIDE_ENGINE!r}) "
        f"or m in {OUTSIDE_ENGINE_MODULES!r})\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout


MAX_PUBLIC_NAMES = 30
LIBRARY_DOC = PACKAGE.parent / "docs" / "library.md"


def test_the_public_api_is_small_resolves_and_is_documented() -> None:
    module = importlib.import_module("compaction")
    assert len(module.__all__) <= MAX_PUBLIC_NAMES, len(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name
    documented = LIBRARY_DOC.read_text(encoding="utf-8")
    undocumented = [
        name
        for name in module.__all__
        if f"**`{name}`**" not in documented and f"**`{name}(" not in documented
    ]
    assert undocumented == [], f"not in docs/library.md: {undocumented}"
    rules = importlib.import_module("compaction.provider_rules")
    for name in ("validate", "Problem", "errors"):
        assert hasattr(rules, name), name


def test_the_root_loads_on_first_use_only_engine_modules() -> None:
    """The root's names loaded on first use are strings an import graph cannot see: read them
    here, so the root cannot hand out the lab or the history by the back door."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    tables = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict)
    ]
    targets = [
        value.value
        for table in tables
        for value in table.values
        if isinstance(value, ast.Constant) and isinstance(value.value, str)
    ]
    assert targets, "the root's table of names loaded on first use was not found"
    assert [t for t in targets if not _is_engine(t) or t not in MODULES] == []


def test_the_architecture_doc_names_every_top_level_part() -> None:
    """docs/architecture.md's tree holds every module and package at the top of compaction/ (it
    carries no line counts, which went stale two commits after each update)."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    parts = [p.name for p in PACKAGE.glob("*.py")] + [
        f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    ]
    missing = [part for part in parts if part not in doc]
    assert missing == []
