"""Benchmark: scan, eval and sweep over the shared corpus, in one process, in 2 local worker
processes and on a 2-worker Dask LocalCluster (processes), from one run.

Run from the project root (needs ../shared/corpus; the Dask rows need the `[dask]` extra):

    .venv/bin/python benchmarks/bench_corpus.py [--markdown]

Each row is the wall time of the whole command's work as the CLI does it (scan: reading and
auditing every file, nothing reused; eval: the default strategies on every conversation, loaded
beforehand as the CLI loads them; sweep: a 4-point grid on every conversation, one task per
file), and the speed-up against the single process: the best of --repeat 3 runs (on a shared
machine, noise only ever slows a run down), each in a fresh process so that none inherits what
another cached. What a process pays once (imports, the token encoding) is paid before timing,
there and in the Dask workers (a cluster outlives many runs); the local workers are forked
from that warmed process, as the CLI's are. The last line is the machine's own ceiling: how
much faster two busy loops run in two processes than in one.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from corpus_paths import CORPUS_DIRS  # noqa: E402

GRID = ["tail_token_ratio=0.1,0.3", "summary_ratio=0.1,0.2"]
CONTEXT_LENGTH = 16_000


def folders() -> list[str]:
    found = [str(d) for d in CORPUS_DIRS if d.is_dir()]
    if not found:
        raise SystemExit("the shared corpus (../shared/corpus) is not beside the project")
    return found


def scan(jobs: int, scheduler: str | None) -> str:
    from compaction.history import History
    from compaction.lab.corpus.scanning import scan_corpus
    from compaction.lab.corpus.sources import sources_under

    # Stored (the sweep reads its selection), and read in full every time: nothing reused.
    with History() as history:
        result = scan_corpus(
            sources_under(folders()), store=history, jobs=jobs, scheduler=scheduler, full=True
        )
    compactions = sum(len(f.compactions) for f in result.files)
    return f"{len(result.files)} files, {compactions} compactions"


def evaluate(jobs: int, scheduler: str | None) -> str:
    from compaction.commands.evaluate import collect_tasks, run_task
    from compaction.lab.corpus.runner import run_each
    from compaction.lab.evaluate import STRATEGY_NAMES

    tasks, _ = collect_tasks(tuple(folders()), STRATEGY_NAMES, 0.33, None)
    outcome = run_each(
        run_task,
        tasks,
        jobs=jobs,
        scheduler=scheduler,
        weight=lambda task: len(task[1]),
        on_error=lambda task, exc: {"source": task[0], "error": str(exc)},
    )
    return f"{len(outcome.results)} sessions × {len(STRATEGY_NAMES)} strategies"


def sweep(jobs: int, scheduler: str | None) -> str:
    from compaction.config import CompactionConfig
    from compaction.history import History
    from compaction.lab.corpus.scanning import select
    from compaction.lab.corpus.sweeping import sweep_corpus
    from compaction.lab.sweep.grid import parse_grid

    # The sessions of a scan's selection, as `compaction sweep --scan` takes them.
    with History() as history:
        _, scanned = history.scan_selection()
    files = {path: sorted(numbers) for path, numbers in select(scanned).items()}
    result = sweep_corpus(
        files,
        parse_grid(GRID),
        CompactionConfig(context_length=CONTEXT_LENGTH),
        jobs=jobs,
        scheduler=scheduler,
    )
    return f"{len(result.sessions)} sessions × {len(result.sweep.points)} points"


def warm() -> None:
    """What any first run in a process pays once (the importers, the token encoding): paid
    before timing, in this process and (through `client.run`) in the Dask workers."""
    from compaction.formats import load_conversations
    from compaction.history import History
    from compaction.lab.corpus.scan import scan_file
    from compaction.lab.corpus.sources import sources_under
    from compaction.lab.evaluate import evaluate
    from compaction.tokens import make_counter

    make_counter().count_messages([{"role": "user", "content": "warm"}])
    small = next(p for d in CORPUS_DIRS for p in sorted(d.glob("claudecode-yatra*")))
    evaluate(load_conversations(small)[0])
    scan_file(sources_under([small])[0])
    with History():
        pass  # the history file created and migrated


def _busy(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def ceiling(n: int = 20_000_000) -> tuple[float, float]:
    """What two processes can gain on this machine at best: the time of two busy loops in one
    process, then in two (a VM's two vCPUs may not run two processes at full speed at once)."""
    from concurrent.futures import ProcessPoolExecutor

    started = time.perf_counter()
    _busy(n), _busy(n)
    serial = time.perf_counter() - started
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_busy, [1, 1]))  # the workers started before timing
        started = time.perf_counter()
        list(pool.map(_busy, [n, n]))
        parallel = time.perf_counter() - started
    return serial, parallel


WORKS: dict[str, Callable[[int, str | None], str]] = {
    "scan": scan,
    "eval": evaluate,
    "sweep": sweep,
}
WHERE = {"1 process": 1, "2 processes": 2, "Dask LocalCluster, 2 workers": 0}


def one_row(name: str, where: str) -> None:
    """Time one command in one place, in this (fresh) process: print `seconds<TAB>work`.

    Each row runs in a process of its own so that no row inherits what an earlier one cached
    (token counts per text, parsed files): forked workers would, and would look faster."""
    warm()
    jobs = WHERE[where]
    if jobs:
        started = time.perf_counter()
        what = WORKS[name](jobs, None)
        print(f"{time.perf_counter() - started:.4f}\t{what}")
        return
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(warm)  # a cluster outlives many runs: its workers are warm
        started = time.perf_counter()
        what = WORKS[name](1, str(cluster.scheduler_address))
        print(f"{time.perf_counter() - started:.4f}\t{what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="Print the table as markdown.")
    parser.add_argument("--no-dask", action="store_true", help="Skip the LocalCluster rows.")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="Fresh runs per row; the best is kept (a shared machine's noise only slows).",
    )
    parser.add_argument("--row", nargs=2, metavar=("COMMAND", "WHERE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.row:
        one_row(*args.row)
        return
    os.environ["COMPACTION_LAB_DB"] = str(Path(tempfile.mkdtemp()) / "bench.db")
    # The sweep takes a stored scan's selection: scanned once here, before any row.
    subprocess.run(
        [sys.executable, __file__, "--row", "scan", "1 process"], check=True, capture_output=True
    )
    wheres = [w for w in WHERE if WHERE[w] or not args.no_dask]
    if not args.no_dask and importlib.util.find_spec("distributed") is None:
        print("(distributed is not installed: no Dask rows; pip install '.[dask]')")
        wheres = [w for w in wheres if WHERE[w]]
    rows = []
    for name in WORKS:
        baseline = None
        for where in wheres:
            times = []
            for _ in range(args.repeat):
                done = subprocess.run(
                    [sys.executable, __file__, "--row", name, where],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                seconds, what = done.stdout.strip().splitlines()[-1].split("\t")
                times.append(float(seconds))
            elapsed = min(times)
            baseline = baseline or elapsed
            rows.append((name, what, where, elapsed, baseline / elapsed))
            print(f"{name:5}  {where:29}  {elapsed:7.2f} s  ×{baseline / elapsed:.2f}", flush=True)
    loops = [ceiling() for _ in range(args.repeat)]
    best = min(serial for serial, _ in loops) / min(parallel for _, parallel in loops)
    print(
        f"\n{os.cpu_count()} cores; Python {sys.version.split()[0]}; two busy loops run "
        f"×{best:.2f} faster in 2 processes than in 1 (this machine's ceiling)"
    )
    if args.markdown:
        print("\n| command | work | where | wall time | speed-up |")
        print("|---|---|---|---:|---:|")
        for name, what, where, elapsed, speedup in rows:
            print(f"| {name} | {what} | {where} | {elapsed:.2f} s | ×{speedup:.2f} |")


if __name__ == "__main__":
    main()
