"""Fit report: does automatic compaction keep every corpus session inside its window?

For each conversation of each file in the shared corpus (`../shared/corpus`), replay `simulate` at
16K and 32K windows and print: the compactions that ran, the model calls left over the window
after the first compaction that ran (a turn the provider would reject), the compactions that left
the context over the window, the largest cut the Fit step made, and whether the system prompt
plus the latest request alone could not fit. Issue 21's closing note is this table, before and
after the change (expected after: 0 turns over).

A "turn" is a step at which the agent calls the model (the next message is not a tool result,
see `compaction.lab.timeline.may_compact_after`). Files that do not import yet are listed with the
reason and skipped.

Run: `.venv/bin/python -m benchmarks.fit_report` (add `--windows 8000,16000,32000`,
`--largest-only` for the largest conversation of each file, `--corpus PATH`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from compaction import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import load_conversations
from compaction.lab.timeline import Timeline, may_compact_after, simulate

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def turns_over_window(timeline: Timeline, messages: list[Any]) -> int:
    """Model calls after the first compaction that ran whose context is over the window."""
    first = next((event.step for event in timeline.events if not event.skipped), None)
    if first is None:
        return 0
    return sum(
        1
        for step in timeline.steps
        if step.index >= first
        and may_compact_after(messages, step.index)
        and step.tokens > timeline.window
    )


def largest_fit_cut(timeline: Timeline) -> int:
    """The most characters one Fit cut removed in the replay (0 when Fit never cut)."""
    largest = 0
    for event in timeline.compactions:
        fit = getattr(event.result, "fit", None)
        for cut in getattr(fit, "cuts", None) or []:
            largest = max(largest, int(cut.chars_before) - int(cut.chars_after))
    return largest


def cannot_fit(timeline: Timeline) -> int:
    return sum(1 for event in timeline.compactions if getattr(event, "cannot_fit", None))


def rows_for(path: Path, windows: list[int], largest_only: bool) -> list[tuple[str, int]]:
    """(printed line, turns over the window) per conversation and window."""
    try:
        conversations = load_conversations(path)
    except CompactionError as exc:
        return [(f"{path.name}: skipped, does not import ({type(exc).__name__}: {exc})"[:160], 0)]
    if largest_only:
        conversations = [max(conversations, key=lambda c: len(c.messages))]
    lines = []
    for number, conversation in enumerate(conversations):
        name = path.name if len(conversations) == 1 else f"{path.name}#{number}"
        for window in windows:
            started = time.perf_counter()
            timeline = simulate(conversation, CompactionConfig(context_length=window))
            messages = conversation.messages
            over_events = sum(1 for event in timeline.compactions if event.over_window)
            over = turns_over_window(timeline, messages)
            line = (
                f"{name[:58]:<58} {len(messages):>6,} {window:>7,} "
                f"{len(timeline.compactions):>5} {over:>6} "
                f"{over_events:>6} {largest_fit_cut(timeline):>11,} {cannot_fit(timeline):>5} "
                f"{time.perf_counter() - started:>6.1f}"
            )
            lines.append((line, over))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", default="16000,32000")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--largest-only", action="store_true")
    args = parser.parse_args()
    windows = [int(window) for window in args.windows.split(",")]
    if not args.corpus.is_dir():
        raise SystemExit(f"no corpus at {args.corpus}")
    print(
        f"{'session':<58} {'msgs':>6} {'window':>7} {'comp':>5} {'over':>6} {'ev>w':>6} "
        f"{'largest cut':>11} {'nofit':>5} {'sec':>6}"
    )
    print(
        "comp = compactions run; over = model calls over the window after one ran; ev>w = "
        "compactions that left it over; largest cut = chars one Fit cut removed; nofit = "
        "compactions where the system prompt plus the latest request alone exceed the window"
    )
    total = 0
    for path in sorted(args.corpus.iterdir()):
        if path.name == "README.md" or not path.is_file():
            continue
        for line, over in rows_for(path, windows, args.largest_only):
            print(line, flush=True)
            total += over
    print(f"total turns over the window after a compaction that ran: {total:,}")


if __name__ == "__main__":
    main()
