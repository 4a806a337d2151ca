"""`compaction simulate`: replay a session with automatic compaction and print the events table.

The CLI twin of the Timeline page: the same `simulate()` replay, one line per compaction event
(where it ran, tokens before and after, savings, outcome, and why it was skipped or fell back),
and with --json the whole timeline (steps, events, summaries, drift) for a script or a chart.
Exit 0 on success, 2 when the input or a setting cannot be used.
"""

from __future__ import annotations

from pathlib import Path

import click

from compaction.commands.common import (
    check_outputs,
    dump_json,
    print_warnings,
    source_options,
    write_output,
)
from compaction.commands.terminal import printable
from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import load_for_cli
from compaction.lab.drift import drift
from compaction.lab.timeline import OUTCOMES, Timeline, TimelineEvent, simulate


def _note(event: TimelineEvent) -> str:
    note = _what_happened(event)
    if event.forced:
        note += " (forced: over the window while anti-thrash suspended compaction)"
    if event.fit_cuts:
        note += f"; Fit cut {event.fit_cuts} part(s) to fit the window"
    if event.over_window:
        note += f"; still over the {event.window:,}-token window"
        if event.request_exceeds_window:
            note += ": the system prompt and the latest request alone exceed the window"
    return note


def _what_happened(event: TimelineEvent) -> str:
    if event.skipped:
        note = event.skip_reason or ""
        if event.attempts > 1:
            note += f" (×{event.attempts}, through step {event.last_step})"
        return note
    if event.fallback_used:
        return f"{event.fallback_used} fallback: {event.fallback_reason or 'summary failed'}"
    if event.summary_discarded:
        return "summary dropped: splicing it in would have grown the context"
    if event.summary is None:
        # Phase 1 alone brought the context under budget: no summary was written, and the next
        # event will still be a first summary.
        return "pruned only (no summary written)"
    return "iterative update" if event.iterative else "first summary"


def events_table(timeline: Timeline) -> list[str]:
    """The events table as lines of text."""
    header = (
        f"{'#':>3}  {'step':>6}  {'before':>9}  {'after':>9}  {'savings':>7}  {'outcome':<11}  note"
    )
    lines = [header, "-" * len(header)]
    for event in timeline.events:
        lines.append(
            f"{event.number:>3}  {event.step:>6}  {event.tokens_before:>9,}  "
            f"{event.tokens_after:>9,}  {event.savings_pct:>6.1f}%  {event.outcome:<11}  "
            f"{printable(_note(event), newlines=False)}"
        )
    return lines


def closing_line(timeline: Timeline) -> str:
    counts = {name: 0 for name in OUTCOMES}
    for event in timeline.events:
        counts[event.outcome] += 1
    peak = max((step.peak_tokens for step in timeline.steps), default=0)
    final = timeline.steps[-1].tokens if timeline.steps else 0
    outcomes = ", ".join(f"{count} {name}" for name, count in counts.items())
    over = sum(1 for event in timeline.events if event.over_window)
    warning = f"; {over} left the context over the window" if over else ""
    turns = len(timeline.turns_over_window())
    if turns:
        warning += f"; {turns} model call(s) after a compaction over the window"
    return (
        f"{len(timeline.events)} events ({outcomes}{warning}); peak context {peak:,} tokens, "
        f"final {final:,}; replayed in {timeline.duration_s:.2f} s"
    )


@click.command("simulate")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option(
    "--context-length",
    type=int,
    default=None,
    help="The model's window in tokens [default: 128000].",
)
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Compact when the context reaches this share of the window [default: 0.5].",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the timeline.")
@source_options
def simulate_command(
    input_path: Path,
    context_length: int | None,
    threshold: float | None,
    json_out: str | None,
    source_format: str,
    index: int | None,
) -> None:
    """Replay INPUT message by message with automatic compaction at the threshold."""
    check_outputs([json_out], [input_path])
    try:
        overrides: dict[str, int | float] = {}
        if context_length is not None:
            overrides["context_length"] = context_length
        if threshold is not None:
            overrides["threshold_ratio"] = threshold
        config = CompactionConfig().replace(**overrides)
        conversation = load_for_cli(input_path, source_format, index)
        timeline = simulate(conversation, config)
    except CompactionError as exc:
        click.echo(f"Error: {printable(str(exc), newlines=False)}", err=True)
        raise SystemExit(2) from exc
    print_warnings(conversation.warnings, input_path)
    shown = printable(str(input_path), newlines=False)
    click.echo(
        f"{shown}: {len(timeline.steps):,} messages ({conversation.format}), window "
        f"{timeline.window:,}, threshold {timeline.threshold:,} tokens, "
        f"{timeline.summarizer} summariser"
    )
    if timeline.events:
        for line in events_table(timeline):
            click.echo(line)
    else:
        click.echo("The context never reached the threshold: no compaction.")
    click.echo(closing_line(timeline))
    if json_out:
        report = timeline.to_dict()
        report["input"] = str(input_path)
        report["format"] = conversation.format
        report["drift"] = [entry.to_dict() for entry in drift(timeline)]
        write_output(json_out, dump_json(report, input_path, indent=1) + "\n", inputs=[input_path])
        click.echo(f"wrote {printable(json_out, newlines=False)}")
