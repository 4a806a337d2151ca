"""Benchmark: `compress` against the cost of merely tokenising the conversation once.

Goals (issue 2), all printed as ratios against baselines measured in this same run:
- 5,000 messages (~1M tokens): a cold `compress` with the extractive summariser within 3x the time
  of tokenising every message's content once with tiktoken;
- a second `compress` of the same messages with different budgets within 0.3 s (cached counts);
- time growing linearly with the number of messages (500 / 2,000 / 5,000).

Run: `.venv/bin/python -m benchmarks.bench_compress` (add `--sizes 500,2000` for a quick look).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks.session_gen import generate_session
from compaction import CompactionConfig, Compactor
from compaction.messages import call_arguments, content_text, tool_calls
from compaction.tokens import TiktokenCounter, load_encoding


def tokenise_once(messages: list[dict[str, Any]]) -> tuple[float, int]:
    """Seconds to encode every text the counter would see, with no cache: the baseline."""
    encoding = load_encoding("o200k_base")
    started = time.perf_counter()
    total = 0
    for message in messages:
        total += len(encoding.encode(content_text(message), disallowed_special=()))
        for call in tool_calls(message):
            total += len(encoding.encode(call_arguments(call), disallowed_special=()))
    return time.perf_counter() - started, total


def timed_compress(
    messages: list[dict[str, Any]], config: CompactionConfig, counter: TiktokenCounter
) -> tuple[float, Any]:
    started = time.perf_counter()
    result = Compactor(config, counter=counter).compress(messages, force=True)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,2000,5000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    config = CompactionConfig()  # the 128K default: every size is over the 64K trigger
    rows = []
    for size in sizes:
        messages = generate_session(size)
        baseline, tokens = tokenise_once(messages)
        counter = TiktokenCounter("gpt-4o")  # a fresh, empty cache: the cold case
        cold, result = timed_compress(messages, config, counter)
        other = config.replace(tail_token_ratio=0.35, summary_ratio=0.1, protect_first_n=5)
        warm, _ = timed_compress(messages, other, counter)
        summarize = result.phase("summarize").duration_s
        rows.append((size, tokens, baseline, cold, warm, summarize, result.savings_pct))
    print(f"{'messages':>8} {'tokens':>10} {'tokenise s':>10} {'compress s':>10} "
          f"{'ratio':>6} {'2nd run s':>9} {'summary s':>9} {'saved %':>7} {'us/msg':>7}")
    for size, tokens, baseline, cold, warm, summarize, savings in rows:
        print(f"{size:>8,} {tokens:>10,} {baseline:>10.3f} {cold:>10.3f} {cold / baseline:>5.2f}x "
              f"{warm:>9.3f} {summarize:>9.3f} {savings:>7.1f} {cold / size * 1e6:>7.0f}")
    largest = rows[-1]
    print()
    print(f"goal 1: cold compress / tokenise once at {largest[0]:,} messages = "
          f"{largest[3] / largest[2]:.2f}x (goal <= 3x)")
    print(f"goal 2: second compress with other budgets = {largest[4]:.3f} s (goal <= 0.3 s)")
    if len(rows) > 1:
        first = rows[0]
        growth = (largest[3] / largest[0]) / (first[3] / first[0])
        print(f"goal 3: time per message at {largest[0]:,} vs {first[0]:,} = {growth:.2f}x "
              "(1.0 is linear)")


if __name__ == "__main__":
    main()
