"""Benchmark: a 100-point sweep over a 400-message session with the extractive summariser.

The issue's bar is "finishes in seconds". Run from the project root:

    .venv/bin/python benchmarks/bench_sweep.py [--messages 400] [--jobs 1 2]

It prints the session size, then for each --jobs value the wall time of the whole sweep (mining
the probe facts and warming the counter included) and the time per point.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from session_gen import generate_session

from compaction.config import CompactionConfig
from compaction.lab.sweep.run import sweep
from compaction.tokens import make_counter

GRID = ["tail_token_ratio=0.05:0.5:0.05", "summary_ratio=0.1:1.0:0.1"]  # 10 x 10 points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    messages = generate_session(args.messages)
    tokens = make_counter().count_messages(messages)
    # The window is set so the threshold is about a third of the session: compaction matters.
    config = CompactionConfig(context_length=max(1_000, int(tokens * 2 / 3)))
    print(f"session: {len(messages)} messages, {tokens:,} tokens; {config.context_length=:,}")
    for jobs in args.jobs:
        started = time.perf_counter()
        result = sweep([messages], GRID, base_config=config, jobs=jobs)
        elapsed = time.perf_counter() - started
        print(
            f"jobs={jobs}: {len(result.points)} points in {elapsed:.2f} s "
            f"({elapsed / len(result.points) * 1000:.0f} ms/point); "
            f"frontier {len(result.frontier())} points"
        )


if __name__ == "__main__":
    main()
