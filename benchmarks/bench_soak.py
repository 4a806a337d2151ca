"""Soak: thousands of `compress()` calls on distinct conversations in one process (issue 30).

An agent server embeds the engine and compacts conversation after conversation for days. Its
memory must not grow with their number: every reference to a conversation and its result is
dropped after each call, as a server drops a finished request, and the process's resident set
size is read after the first 100 calls (the working set: the encodings loaded, the allocator
warmed) and at the end. Growth between the two is what a leak would show; the goal is under
50 MB over 2,000 calls.

Each conversation is generated with its own seed (a coding agent's session of 400 messages, its
tool outputs distinct text), so no string is shared between calls: a process-wide cache keyed
by content would hold every one of them.

Run: `.venv/bin/python -m benchmarks.bench_soak` (`--calls 2000 --size 400`, the defaults).
"""

from __future__ import annotations

import argparse
import gc
import resource
import time


def rss_mb() -> float:
    """The process's current resident set size in MiB (from /proc: the peak would only grow)."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:  # not Linux: the peak is the best there is
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--size", type=int, default=400, help="messages per conversation")
    parser.add_argument("--warm", type=int, default=100, help="calls before the first reading")
    args = parser.parse_args()

    from benchmarks.session_gen import generate_session
    from compaction import CompactionConfig, compress

    config = CompactionConfig(context_length=32_000)
    start_rss = rss_mb()
    readings: list[tuple[int, float]] = []
    started = time.perf_counter()
    for call in range(1, args.calls + 1):
        messages = generate_session(args.size, seed=call)
        result = compress(messages, config)
        assert result.tokens_after <= config.context_length
        del messages, result  # a server drops the request and its answer
        if call == args.warm or call % 250 == 0 or call == args.calls:
            gc.collect()
            readings.append((call, rss_mb()))
            print(f"after {call:>5,} calls: RSS {readings[-1][1]:7.1f} MiB", flush=True)
    elapsed = time.perf_counter() - started
    warm = next(mb for calls, mb in readings if calls == args.warm)
    end = readings[-1][1]
    growth = end - warm
    print(
        f"\n{args.calls:,} compress() calls on distinct {args.size}-message conversations in "
        f"{elapsed:.0f} s: RSS {start_rss:.0f} MiB at start, {warm:.0f} MiB after {args.warm} "
        f"calls, {end:.0f} MiB at the end: growth {growth:+.1f} MiB "
        f"({'met' if growth < 50 else 'MISSED'}: goal under 50 MB)"
    )


if __name__ == "__main__":
    main()
