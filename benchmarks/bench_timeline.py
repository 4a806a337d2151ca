"""Benchmark: the auto-compaction replay of a 5,000-message session, and `eval` over the corpus.

The issue's bars: a 5,000-message session replays with the extractive summariser in seconds
(linear in the session plus the compactions), and `compaction eval` over a folder runs in
parallel processes. Run from the project root:

    .venv/bin/python benchmarks/bench_timeline.py [--messages 5000] [--jobs 1 2]

It prints the replay's time, events and outcomes, the replay time per message at a tenth of the
size (the ratio shows whether the replay stays linear), and for each --jobs value the wall time
of `eval` over ../shared/corpus (loading included) in sessions per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from session_gen import generate_session

from compaction.commands.evaluate import collect_tasks, run_all
from compaction.lab.evaluate import STRATEGY_NAMES, aggregate
from compaction.lab.timeline import simulate
from compaction.tokens import make_counter

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def bench_replay(n_messages: int) -> None:
    messages = generate_session(n_messages)
    tokens = make_counter().count_messages(messages)  # warms the shared counter's cache too
    print(f"session: {len(messages):,} messages, {tokens:,} tokens (default 128K window)")
    timings = {}
    for size in (n_messages // 10, n_messages):
        started = time.perf_counter()
        timeline = simulate(messages[:size])
        timings[size] = time.perf_counter() - started
        outcomes = timeline.to_dict()["outcomes"]
        compaction_s = sum(event.duration_s for event in timeline.events)
        print(
            f"replay of {size:,} messages: {timings[size]:.2f} s, {len(timeline.events)} events "
            f"{outcomes}, {compaction_s:.2f} s inside compactions, "
            f"{timings[size] / size * 1e6:.0f} µs/message"
        )
    small, large = n_messages // 10, n_messages
    print(
        f"time ratio {large:,}/{small:,} messages: {timings[large] / timings[small]:.1f}x "
        f"for {large / small:.0f}x the messages"
    )


def bench_eval(jobs_values: list[int]) -> None:
    if not CORPUS.is_dir():
        print(f"eval: skipped, {CORPUS} is absent")
        return
    baseline = None
    for jobs in jobs_values:
        started = time.perf_counter()
        tasks, _ = collect_tasks((str(CORPUS),), STRATEGY_NAMES, 0.33, None)
        loaded = time.perf_counter()
        digests = run_all(tasks, jobs)
        finished = time.perf_counter()
        elapsed = finished - started
        rate = len(digests) / elapsed
        baseline = baseline or rate
        print(
            f"eval over the corpus, jobs={jobs}: {len(digests)} sessions in {elapsed:.2f} s "
            f"(reading {loaded - started:.2f} s, evaluating {finished - loaded:.2f} s), "
            f"{rate:.1f} sessions/s ({rate / baseline:.2f}x jobs={jobs_values[0]})"
        )
    for row in aggregate(digests):
        print(
            f"  {row['strategy']:<17} savings {row['mean_savings_pct']:5.1f}%  "
            f"recall {row['mean_recall']:.3f}  invalid openai {row['openai_failures']}, "
            f"anthropic {row['anthropic_failures']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    bench_replay(args.messages)
    bench_eval(args.jobs)


if __name__ == "__main__":
    main()
