"""Benchmark: scan, eval and sweep over the shared corpus, in one process, in 2 local worker
processes and on a 2-worker Dask LocalCluster (processes), from one run.

Run from the project root (needs ../shared/corpus; the Dask rows need the `[dask]` extra):

    .venv/bin/python benchmarks/bench_corpus.py [--markdown]

Each row is the wall time of the whole command's work as the CLI does it (scan: reading and
auditing every file, nothing reused; eval: the default strategies on every conversation, loaded
beforehand as the CLI loads them; sweep: a 4-point grid on every conversation, one task per
file), and the speed-up against the single process. What a process pays once (imports, the
token encoding) is paid before timing, in this process and in the Dask workers (a cluster
outlives many runs); the local workers are forked from the warmed process, as the CLI's are.
"""

from __future__ import annotations

import argparse
import os
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
    from compaction.lab.evaluate import evaluate
    from compaction.tokens import make_counter

    make_counter().count_messages([{"role": "user", "content": "warm"}])
    small = next(p for d in CORPUS_DIRS for p in sorted(d.glob("claudecode-yatra*")))
    evaluate(load_conversations(small)[0])


def timed(
    work: Callable[[int, str | None], str], jobs: int, scheduler: str | None
) -> tuple[float, str]:
    started = time.perf_counter()
    what = work(jobs, scheduler)
    return time.perf_counter() - started, what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="Print the table as markdown.")
    parser.add_argument("--no-dask", action="store_true", help="Skip the LocalCluster rows.")
    args = parser.parse_args()
    os.environ.setdefault("COMPACTION_LAB_DB", str(Path(tempfile.mkdtemp()) / "bench.db"))
    warm()
    works = (("scan", scan), ("eval", evaluate), ("sweep", sweep))
    times: dict[tuple[str, str], tuple[float, str]] = {}
    wheres = ["1 process", "2 processes"]
    # The local rows first: a running cluster's threads would make the local pool spawn its
    # workers (lab/sweep/worker.py) instead of forking them, which is not what the CLI does.
    for name, work in works:
        for label, jobs in (("1 process", 1), ("2 processes", 2)):
            times[name, label] = timed(work, jobs, None)
            print(f"{name:5}  {label:29}  {times[name, label][0]:7.2f} s", flush=True)
    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            print("(distributed is not installed: no Dask rows; pip install '.[dask]')")
        else:
            label = "Dask LocalCluster, 2 workers"
            wheres.append(label)
            with (
                LocalCluster(
                    n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                client.run(warm)
                for name, work in works:
                    times[name, label] = timed(work, 1, str(cluster.scheduler_address))
                    print(f"{name:5}  {label:29}  {times[name, label][0]:7.2f} s", flush=True)
    rows = []
    for name, _ in works:
        baseline = times[name, "1 process"][0]
        for label in wheres:
            elapsed, what = times[name, label]
            rows.append((name, what, label, elapsed, baseline / elapsed))
    print(f"\n{os.cpu_count()} cores; Python {sys.version.split()[0]}")
    if args.markdown:
        print("\n| command | work | where | wall time | speed-up |")
        print("|---|---|---|---:|---:|")
        for name, what, label, elapsed, speedup in rows:
            print(f"| {name} | {what} | {label} | {elapsed:.2f} s | ×{speedup:.2f} |")


if __name__ == "__main__":
    main()
