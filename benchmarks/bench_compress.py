"""Benchmark: every path of `compress`, as ratios against the cost of tokenising once (issue 19).

The *floor* is tokenising every content and tool-call argument of the session once with its
encoding, single-threaded, measured in the same run (hermes-agent's whole compress is about
0.25 x floor). Each row runs in a fresh Python process so that "cold" means cold: no token
counts, one-liners or summariser caches left over from an earlier row or size (the encoding file
is loaded before the clock starts, except where the row is about loading it). The machine may be
shared: the rough and agent-loop rows are divided by a floor measured in their own process, just
before (or, for rough, just after) their timing, so that load changing between processes moves
both sides of the ratio.

Rows, per size (500 / 5,000 and, with --large, 20,000 messages):
- floor            tokenising the session once (seconds; the other rows divide by it)
- cold exact       the first `compress` in a process, exact tiktoken counts (goal <= 1.0 x)
- cold rough       the same with counter="rough", tiktoken never imported (goal <= 0.25 x)
- re-run first     the next `compress` with other budgets, a new Compactor given the first's
                   CompactionCache, as the app and the lab share one (goal <= 0.12 x)
- re-run later     the median of the re-runs after it (goal <= 0.12 x)
- agent loop       `should_compress` after every appended message, `compress` when it says so,
                   over the whole session (goal <= 3 x)
- CLI end to end   `compaction compress IN -o OUT` in a new process, minus the cold compress
                   (goal <= 0.30 s at 5,000 messages)
- stub: cold exact, stub: re-run (the slower of the re-runs)
                   the same with the summary stubbed (the static marker), as hermes' compress
                   was measured: what compaction itself costs an agent whose LLM writes the
                   summary. Every other row includes our offline extractive summariser, which
                   reads every middle message as the LLM would.
plus `import compaction` (seconds and peak RSS, goal <= 0.15 s and <= 50 MiB), the output size
of each run (messages, tokens) so a speed-up that keeps more context shows, and the linear-growth
check (cold exact per message vs the floor's own growth, goal within 1.2 x).

Run: `.venv/bin/python -m benchmarks.bench_compress` (add `--large` for 20,000 messages,
`--sizes 500` for a quick look). `--against PATH` runs every row on an earlier version's files
too (`git worktree add /tmp/before REV`), alternating with this tree size by size, and prints
both tables and this tree's ratio to the earlier one: a before/after from one run, under the
same load. Each tree's modules are compiled to bytecode first (`compileall`, as `pip install`
does), so the import and CLI rows measure what an installed copy pays, even where the
environment sets PYTHONDONTWRITEBYTECODE.

`--repeats N` runs it all N times and keeps each timing's fastest (the floors' too).

Timings are CPU seconds of the measuring process (its threads included; the CLI row: of the
child process), as the issue measures, since waiting for a core on a shared machine is not work;
`--clock wall` gives wall seconds, where threads pay off.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Budgets a sweep or a user's second try would use: each re-run changes what is kept.
OTHER_BUDGETS: list[dict[str, Any]] = [
    {"tail_token_ratio": 0.35, "summary_ratio": 0.1, "protect_first_n": 5},
    {"tail_token_ratio": 0.10, "summary_ratio": 0.3},
    {"tail_token_ratio": 0.25, "protect_first_n": 2},
    {"tail_token_ratio": 0.15, "summary_ratio": 0.15, "protect_first_n": 4},
    {"tail_token_ratio": 0.30},
]

IMPORT_PROBE = (
    "import os, resource, sys, time\n"
    "clock = time.process_time if os.environ.get('BENCH_CLOCK') == 'cpu' else time.perf_counter\n"
    "started = clock()\n"
    "import compaction\n"
    "elapsed = clock() - started\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "heavy = [m for m in ('sqlite_utils', 'pandas', 'numpy', 'litellm', 'plotly', 'tiktoken')\n"
    "         if m in sys.modules]\n"
    "print(elapsed, peak, ','.join(heavy) or '-')\n"
)


# -- workers: each runs in its own process and prints one JSON object ----------------------------


def clock() -> float:
    """CPU seconds of this process (all its threads) with BENCH_CLOCK=cpu, else wall seconds.

    CPU time is what the issue compares (and what a shared, overloaded machine does not
    inflate: waiting for a core is not counted); wall time shows what threads save.
    """
    if os.environ.get("BENCH_CLOCK") == "cpu":
        return time.process_time()
    return time.perf_counter()


def tokenise_once(messages: list[dict[str, Any]]) -> tuple[float, int]:
    """Seconds to encode every text the counter would see, once, single-threaded: the floor."""
    from compaction.messages import call_arguments, content_text, tool_calls
    from compaction.tokens import load_encoding

    encoding = load_encoding("o200k_base")
    started = clock()
    total = 0
    for message in messages:
        total += len(encoding.encode(content_text(message), disallowed_special=()))
        for call in tool_calls(message):
            total += len(encoding.encode(call_arguments(call), disallowed_special=()))
    return clock() - started, total


def _output(result: Any) -> dict[str, int]:
    return {"messages": len(result.messages), "tokens": result.tokens_after}


def _shared_cache() -> Any:
    """One CompactionCache for a worker's cold run and its re-runs, as the app and the lab
    share one (issue 30: the engine keeps no process-wide memory); None on a tree from before
    it, whose re-runs shared a process-wide one."""
    import compaction

    # Asked of the measured tree's files, not of the import system: the editable install's
    # finder would serve this tree's compaction.cache to an older tree that has none.
    if not (Path(compaction.__file__).parent / "cache.py").exists():
        return None
    from compaction.cache import CompactionCache

    return CompactionCache()


def _compactor(config: Any, summarizer: Any = None, cache: Any = None) -> Any:
    from compaction import Compactor

    if cache is None:
        return Compactor(config, summarizer)
    return Compactor(config, summarizer, cache=cache)


def worker_exact(size: int) -> dict[str, Any]:
    """The floor, then a cold exact compress and re-runs with other budgets, in one process."""
    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig

    messages = generate_session(size)
    floor, tokens = tokenise_once(messages)  # also loads the encoding, outside every timing
    config = CompactionConfig()  # the 128K default: every size is over the 64K trigger
    cache = _shared_cache()
    started = clock()
    result = _compactor(config, cache=cache).compress(messages, force=True)
    cold = clock() - started
    reruns = []
    for changes in OTHER_BUDGETS:
        started = clock()
        _compactor(config.replace(**changes), cache=cache).compress(messages, force=True)
        reruns.append(clock() - started)
    return {
        "tokens": tokens,
        "floor": floor,
        "cold": cold,
        "cold_out": _output(result),
        "rerun_first": reruns[0],
        "rerun_later": statistics.median(reruns[1:]),
    }


def worker_stubbed(size: int) -> dict[str, Any]:
    """Cold exact compress and a re-run with the summary stubbed (the static marker), as hermes'
    compress was measured: what compaction costs an agent whose LLM writes the summary, apart
    from the model's own time. The other rows include our offline extractive summariser."""
    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig
    from compaction.summarizers.base import StaticSummarizer

    messages = generate_session(size)
    floor, _ = tokenise_once(messages)
    config = CompactionConfig()
    cache = _shared_cache()
    started = clock()
    compactor = _compactor(config, StaticSummarizer(), cache)
    result = compactor.compress(messages, force=True)
    cold = clock() - started
    tokenised = tokenising_done(compactor)
    reruns = []
    for changes in OTHER_BUDGETS:
        started = clock()
        rerun = _compactor(config.replace(**changes), StaticSummarizer(), cache)
        rerun.compress(messages, force=True)
        reruns.append(clock() - started)
    return {
        "floor_stub": floor,
        "stub_cold": cold,
        "stub_out": _output(result),
        "stub_rerun": max(reruns),
        "stub_tokenising": tokenised,
    }


def tokenising_done(compactor: Any) -> float:
    """Seconds to encode again, single-threaded, every text the cold run's counter counted (the
    texts its count cache holds): the tokenising share of the run, so that what is left is the
    work beyond tokenising. A fresh cache per worker, so it holds this run's texts only."""
    from compaction.tokens import load_encoding

    texts = list(getattr(compactor.counter, "_cache", {}))
    encoding = load_encoding("o200k_base")
    started = clock()
    for text in texts:
        encoding.encode(text, disallowed_special=())
    return clock() - started


def worker_rough(size: int) -> dict[str, Any]:
    """A cold compress with the rough counter in a process that has never loaded tiktoken."""
    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig, Compactor

    messages = generate_session(size)
    started = clock()
    result = Compactor(CompactionConfig(counter="rough")).compress(messages, force=True)
    elapsed = clock() - started
    imported = "tiktoken" in sys.modules
    floor, _ = tokenise_once(messages)  # after the timing: it loads tiktoken
    return {
        "rough": elapsed,
        "rough_out": _output(result),
        "tiktoken": imported,
        "floor_rough": floor,
    }


def worker_rough_stubbed(size: int) -> dict[str, Any]:
    """A cold compress with the rough counter and the summary stubbed: chars/4 like hermes, and
    like hermes no summary written."""
    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig, Compactor
    from compaction.summarizers.base import StaticSummarizer

    messages = generate_session(size)
    config = CompactionConfig(counter="rough")
    started = clock()
    result = Compactor(config, StaticSummarizer()).compress(messages, force=True)
    elapsed = clock() - started
    floor, _ = tokenise_once(messages)
    return {"stub_rough": elapsed, "stub_rough_out": _output(result), "floor_stub_rough": floor}


def worker_loop(size: int) -> dict[str, Any]:
    """An agent: append each message, ask should_compress, compress when it says so."""
    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig, Compactor
    from compaction.tokens import load_encoding

    messages = generate_session(size)
    load_encoding("o200k_base")  # loading the file is the import row's business, not this one's
    floor, _ = tokenise_once(messages)
    compactor = Compactor(CompactionConfig())
    context: list[dict[str, Any]] = []
    compactions = 0
    started = clock()
    for message in messages:
        context.append(message)
        if compactor.should_compress(context):
            result = compactor.compress(context)
            if not result.skipped:
                compactions += 1
                context = list(result.messages)
    elapsed = clock() - started
    return {
        "loop": elapsed,
        "floor_loop": floor,
        "loop_compactions": compactions,
        "loop_out": {"messages": len(context), "tokens": compactor.count_tokens(context)},
    }


WORKERS = {
    "exact": worker_exact,
    "rough": worker_rough,
    "loop": worker_loop,
    "stubbed": worker_stubbed,
    "rough_stubbed": worker_rough_stubbed,
}


# -- the orchestrator ---------------------------------------------------------------------------


def _python_env(tree: Path = ROOT) -> dict[str, str]:
    """The environment of a measured process: `tree`'s compaction first on the path, and
    bytecode allowed (an installed copy has it; compile_tree wrote it)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(tree), str(ROOT), env.get("PYTHONPATH", "")) if part
    )
    return env


def compile_tree(tree: Path) -> None:
    """Byte-compile `tree`'s package, as `pip install` does, so no row pays for compiling."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "compaction")],
        check=True,
        capture_output=True,
        env=_python_env(tree),
    )


def run_worker(kind: str, size: int, tree: Path = ROOT) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.bench_compress", "--worker", kind]
    completed = subprocess.run(
        [*command, "--size", str(size), "--tree", str(tree)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,  # this tree's benchmark code, the measured tree's compaction (see main)
        env=_python_env(tree),
    )
    measured = dict(json.loads(completed.stdout.strip().splitlines()[-1]))
    if Path(measured.pop("package")) != tree.resolve():  # an installed copy came first
        raise SystemExit(f"the {kind} worker measured {measured} instead of {tree}")
    return measured


def measure_import(tree: Path = ROOT, repeats: int = 3) -> tuple[float, float, str]:
    """The fastest of `repeats` fresh imports: (seconds, peak RSS in MiB, heavy modules loaded)."""
    best: tuple[float, float, str] | None = None
    for _ in range(repeats):
        completed = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE],
            capture_output=True,
            text=True,
            check=True,
            cwd=tree,
            env=_python_env(tree),
        )
        seconds, peak_kib, heavy = completed.stdout.split()
        row = (float(seconds), int(peak_kib) / 1024, heavy)
        if best is None or row[0] < best[0]:
            best = row
    assert best is not None
    return best


def measure_cli(size: int, folder: Path, tree: Path = ROOT) -> float:
    """Seconds of `compaction compress` on the session written as JSON, in a new process."""
    from benchmarks.session_gen import generate_session

    source = folder / f"session-{size}.json"
    if not source.exists():
        source.write_text(json.dumps(generate_session(size)), encoding="utf-8")
    target = folder / f"out-{size}.json"
    started = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "compaction", "compress", str(source), "-o", str(target)],
        capture_output=True,
        check=True,
        cwd=tree,  # `-m` puts the working directory first on the path
        env=_python_env(tree),
    )
    if os.environ.get("BENCH_CLOCK") == "cpu":
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return time.perf_counter() - started


def fastest(kept: dict[str, Any] | None, row: dict[str, Any]) -> dict[str, Any]:
    """`row` with each timing the fastest of it and `kept`'s (the earlier repeats'): the
    run least disturbed by the machine's other work. Floors too, so ratios compare like with
    like."""
    if kept is None:
        return row
    return {key: min(kept[key], value) if key in TIMINGS else value for key, value in row.items()}


#: Issue 34's goals as judged in this run: (goal, met), in the order they are printed; the
#: closing tally reads them.
JUDGED: list[tuple[str, bool]] = []


def _goal(value: float, limit: float, name: str | None = None) -> str:
    """ "met" or "NOT met"; a goal with a `name` is one of issue 34's and joins the tally."""
    met = value <= limit
    if name is not None:
        JUDGED.append((name, met))
    return "met" if met else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="500,5000", help="comma-separated message counts")
    parser.add_argument("--large", action="store_true", help="add 20,000 messages (slow)")
    parser.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="CPU seconds (as the issue measures; robust on a loaded machine) or wall seconds",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="PATH",
        help="an earlier version's checkout: measure it too, in the same run, and compare",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run every row this many times (fresh processes each time) and keep each timing's "
        "fastest: on a shared machine one sample of a row can be 1.5x another",
    )
    parser.add_argument(
        "--no-hermes",
        action="store_true",
        help="skip the hermes row (hermes-agent's own compress, in a virtualenv of its own that "
        "the first run makes with pip: benchmarks/hermes_compress.py); its goals then show as "
        "not measured",
    )
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        # The measured tree's compaction, this tree's benchmark code (already imported).
        sys.path.insert(0, str(args.tree))
        measured = WORKERS[args.worker](args.size)
        import compaction

        measured["package"] = str(Path(compaction.__file__).resolve().parent.parent)
        print(json.dumps(measured))
        return

    os.environ["BENCH_CLOCK"] = args.clock  # the workers and probes read it
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.large and 20_000 not in sizes:
        sizes.append(20_000)
    trees = [ROOT]
    if args.against is not None:
        if not (args.against / "compaction" / "__init__.py").is_file():
            parser.error(f"--against {args.against}: no compaction package there")
        trees = [args.against.resolve(), ROOT]
    for tree in trees:
        compile_tree(tree)
    from benchmarks import hermes_compress  # the orchestrator's, run from this tree

    hermes = None if args.no_hermes else hermes_compress.ensure_hermes()
    imports = {tree: measure_import(tree) for tree in trees}
    rows: dict[Path, dict[int, dict[str, Any]]] = {tree: {} for tree in trees}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for size in sizes:
                for tree in trees:  # alternating, so both versions see the same load
                    row: dict[str, Any] = {}
                    for kind in ("exact", "rough", "loop", "stubbed", "rough_stubbed"):
                        row.update(run_worker(kind, size, tree))
                    row["cli"] = measure_cli(size, Path(folder), tree)
                    if hermes is not None:  # the same peer beside each tree, in turn
                        row.update(hermes_compress.run(size, hermes))
                    rows[tree][size] = fastest(rows[tree].get(size), row)

    print(f"clock: {args.clock} seconds (BENCH_CLOCK={args.clock})")
    for tree in trees:
        if len(trees) > 1:
            print(f"\n=== {'after' if tree == ROOT else 'before'}: {tree} ===")
        print_table(sizes, rows[tree], imports[tree])
    if len(trees) > 1:
        print_comparison(sizes, rows[trees[0]], rows[ROOT], imports[trees[0]], imports[ROOT])


def print_table(
    sizes: list[int], rows: dict[int, dict[str, Any]], imported: tuple[float, float, str]
) -> None:
    import_s, import_mib, heavy = imported
    judged = _goal(import_s, 0.15, "import compaction <= 0.15 s")
    print(
        f"import compaction: {import_s:.3f} s, peak RSS {import_mib:.0f} MiB "
        f"(goal <= 0.15 s: {judged}; <= 50 MiB: {_goal(import_mib, 50)}); "
        f"heavy modules imported: {heavy}"
    )
    print()
    width = 34  # per size: seconds, x floor, output messages/tokens
    print(f"{'':<18}" + "".join(f"{f'{size:,} messages':>{width}}" for size in sizes))
    print(f"{'row':<18}" + "".join(f"{'s':>9}{'x floor':>9}{'out msgs/tokens':>16}" for _ in sizes))

    def line(label: str, key: str, out: str | None = None, floor: str = "floor") -> None:
        cells = []
        for size in sizes:
            row = rows[size]
            seconds = row[key]
            output = row.get(out) if out else None
            shown = f"{output['messages']:,}/{output['tokens']:,}" if output else ""
            cells.append(f"{seconds:>9.3f}{seconds / row[floor]:>8.2f}x{shown:>16}")
        print(f"{label:<18}" + "".join(cells))

    for label, key, out, floor in ROWS:
        if all(key in rows[size] for size in sizes):
            line(label, key, out, floor)
    for floor in dict.fromkeys(floor for *_, floor in ROWS if floor != "floor"):  # own processes
        label = f"floor ({floor.removeprefix('floor_')})"
        print(f"{label:<18}" + "".join(f"{rows[s][floor]:>9.3f}".ljust(width) for s in sizes))
    print(f"{'input tokens':<18}" + "".join(f"{rows[size]['tokens']:>{width},}" for size in sizes))
    print()
    for size in sizes:
        print_goals(size, rows[size])
    if len(sizes) > 1:
        first, last = rows[sizes[0]], rows[sizes[-1]]
        for label, key in (("cold exact", "cold"), ("stub: cold exact", "stub_cold")):
            growth = (last[key] / first[key]) / (last["floor"] / first["floor"])
            judged = _goal(growth, 1.2, f"{label}: linear to {sizes[-1]:,} messages")
            print(
                f"linear growth {sizes[0]:,} -> {sizes[-1]:,}: {label} grew {growth:.2f}x the "
                f"floor's growth (goal <= 1.2x: {judged})"
            )
    if sizes[-1] < 20_000:
        print("linear growth to 20,000 messages: not measured (add --large)")
    if JUDGED:
        met = sum(1 for _, ok in JUDGED if ok)
        print(f"\nissue 34's goals: {met} of {len(JUDGED)} met")
        for name, ok in JUDGED:
            print(f"  {'met    ' if ok else 'NOT met'}  {name}")
        JUDGED.clear()


def print_goals(size: int, row: dict[str, Any]) -> None:
    """Issue 34's goals at one size: ratios against hermes-agent's own compress and the floor,
    measured in the same run. Our rows compared with hermes are the ones with the summary
    stubbed, as hermes' is (its LLM writes it); the extractive summary's rows are shown beside."""
    floor = row["floor"]
    per_message_ms = row["loop"] / size * 1000
    print(f"{size:,} messages:")
    if "hermes_cold" in row:
        cold, warm = row["hermes_cold"], row["hermes_warm"]
        version = row.get("hermes_version", "")
        beyond = row["stub_cold"] - row["stub_tokenising"]
        rerun = row["stub_rerun"]
        print(
            f"  hermes-agent {version} compress(): cold {cold:.3f} s ({cold / floor:.2f}x floor), "
            f"warm {warm:.3f} s"
        )
        goals = [
            ("cold exact", row["stub_cold"] / cold, "x hermes cold", 1.0),
            ("beyond tokenising", beyond / cold, "x hermes cold", 1.0),
            ("warm re-run", rerun / warm, "x hermes warm", 0.5),
            ("rough", row["stub_rough"] / cold, "x hermes cold", 1.0),
        ]
        for label, ratio, unit, limit in goals:
            judged = _goal(ratio, limit, f"{size:,} messages: {label} <= {limit:g}{unit}")
            print(f"  {label:<18}{ratio:6.2f}{unit:<15}(goal <= {limit:g}: {judged})")
        print(
            f"  {'':<18}(tokenising in the cold run: {row['stub_tokenising']:.3f} s; "
            f"with the extractive summary: cold {row['cold'] / cold:.2f}x hermes cold, re-run "
            f"{max(row['rerun_first'], row['rerun_later']) / warm:.2f}x hermes warm)"
        )
    else:
        print("  hermes not measured (--no-hermes): the goals against it are not judged")
    moonshot = row["stub_cold"] / floor
    print(
        f"  {'cold exact':<18}{moonshot:6.2f}x floor{'':<9}(moonshot <= 0.25: "
        f"{_goal(moonshot, 0.25, f'{size:,} messages: moonshot cold exact <= 0.25x floor')})"
    )
    loop_goal = ""
    if size == 5_000:
        judged = _goal(per_message_ms, 0.2, "agent loop <= 0.2 ms per appended message at 5,000")
        loop_goal = f" (goal <= 0.2 ms: {judged})"
    print(
        f"  {'agent loop':<18}{per_message_ms:6.3f} ms per appended message over "
        f"{row['loop_compactions']} compactions{loop_goal}"
    )
    cli_over = row["cli"] - row["cold"]
    print(f"  {'CLI':<18}{cli_over:+.3f} s over the cold compress")
    if row["tiktoken"]:
        print("  (the rough row imported tiktoken)")


#: (label, key, output key, the floor it is divided by) of each timed row.
ROWS: list[tuple[str, str, str | None, str]] = [
    ("floor", "floor", None, "floor"),
    ("cold exact", "cold", "cold_out", "floor"),
    ("cold rough", "rough", "rough_out", "floor_rough"),
    ("re-run first", "rerun_first", None, "floor"),
    ("re-run later", "rerun_later", None, "floor"),
    ("agent loop", "loop", "loop_out", "floor_loop"),
    ("CLI end to end", "cli", None, "floor"),
    ("stub: cold exact", "stub_cold", "stub_out", "floor_stub"),
    ("stub: re-run", "stub_rerun", None, "floor_stub"),
    ("stub: cold rough", "stub_rough", "stub_rough_out", "floor_stub_rough"),
    ("hermes: cold", "hermes_cold", "hermes_out", "floor"),
    ("hermes: warm", "hermes_warm", None, "floor"),
]

# The keys of a row that are seconds (each row's and its floor's, and the cold run's tokenising);
# the others (outputs, token totals) are the same on every repeat.
TIMINGS = frozenset(
    [*(key for _, timing, _, floor in ROWS for key in (timing, floor)), "stub_tokenising"]
)


def print_comparison(
    sizes: list[int],
    before: dict[int, dict[str, Any]],
    after: dict[int, dict[str, Any]],
    import_before: tuple[float, float, str],
    import_after: tuple[float, float, str],
) -> None:
    """after / before of each row's ratio to its own floor (each version's floor is measured in
    its own processes, so the ratio of ratios cancels load that differed between them)."""
    print("\n=== after / before (x floor of each, so < 1.00 is faster) ===")
    print(f"{'import (s)':<16}{import_after[0] / import_before[0]:>9.2f}")
    print(f"{'row':<16}" + "".join(f"{f'{size:,} msgs':>12}" for size in sizes))
    for label, key, _, floor in ROWS[1:]:
        if key.startswith("hermes"):
            continue  # the same peer measured beside each tree: not a version of ours
        cells = [
            (after[size][key] / after[size][floor]) / (before[size][key] / before[size][floor])
            for size in sizes
        ]
        print(f"{label:<16}" + "".join(f"{cell:>12.2f}" for cell in cells))


if __name__ == "__main__":
    main()
