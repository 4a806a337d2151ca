"""What `import compaction` and a rough-counter compress load, checked in a fresh interpreter.

Not timings (those are benchmarks/bench_compress.py's business): which heavy modules end up in
`sys.modules`. An agent that embeds the engine must not pay for the history's sqlite-utils and
pandas, the plots or litellm, and `counter="rough"` exists to avoid tiktoken altogether.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # benchmarks/ is importable from here
HEAVY = ("sqlite_utils", "pandas", "numpy", "litellm", "plotly", "pyarrow", "streamlit")


def loaded_after(code: str) -> dict[str, bool]:
    """For each heavy module and tiktoken: is it in sys.modules after running `code`?"""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps({{m: m in sys.modules for m in {[*HEAVY, 'tiktoken']!r}}}))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def test_import_compaction_loads_no_heavy_dependency() -> None:
    loaded = loaded_after("import compaction")
    assert [name for name in HEAVY if loaded[name]] == []
    assert not loaded["tiktoken"]  # the encoding loads with the first exact counter, not before


def test_import_compaction_loads_only_the_engine() -> None:
    """No lab, history, app helper or command-line module: an agent embeds the engine alone."""
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, compaction\n"
            "outside = ('compaction.lab', 'compaction.history', 'compaction.ui', "
            "'compaction.commands', 'compaction.cli', 'compaction.summarizers.llm_prompt')\n"
            "print(sorted(m for m in sys.modules if m.startswith(outside)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert completed.stdout.strip() == "[]"


def test_the_public_names_still_resolve_after_a_lazy_import() -> None:
    loaded = loaded_after(
        "from compaction import Conversation, load_conversation, validate, compress\n"
        "assert callable(validate) and callable(load_conversation)\n"
        "assert Conversation.__name__ == 'Conversation'"
    )
    assert [name for name in HEAVY if loaded[name]] == []


def test_rough_counter_compress_never_imports_tiktoken() -> None:
    loaded = loaded_after(
        "from compaction import CompactionConfig, Compactor\n"
        "from benchmarks.session_gen import generate_session\n"
        "messages = generate_session(400)\n"
        "compactor = Compactor(CompactionConfig(context_length=8_000, counter='rough'))\n"
        "assert compactor.should_compress(messages)\n"
        "result = compactor.compress(messages)\n"
        "assert not result.skipped and result.tokens_after < result.tokens_before"
    )
    assert not loaded["tiktoken"]
    assert [name for name in HEAVY if loaded[name]] == []


def test_cli_compress_loads_neither_the_history_nor_litellm() -> None:
    loaded = loaded_after(
        "from click.testing import CliRunner\n"
        "from compaction.cli import main\n"
        "result = CliRunner().invoke(main, ['compress', '--help'])\n"
        "assert result.exit_code == 0, result.output"
    )
    assert [name for name in HEAVY if loaded[name]] == []
