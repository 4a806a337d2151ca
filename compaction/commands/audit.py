"""`compaction audit`: what the agent forgot at each compaction it made in its own session.

One block per compaction the session file records (when, why, tokens before → after, facts kept
by the agent's context against our pipeline's at the agent's budget, the forgotten facts by kind,
the agent's summary's opening), and the whole audit as JSON with `--json`. Exit 0 also when the
session records no compaction (it says so); 2 when the file cannot be read.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import click

from compaction.commands.common import (
    dump_json,
    fail,
    json_printable,
    load_input,
    source_options,
    write_output,
)
from compaction.commands.terminal import printable
from compaction.errors import CompactionError
from compaction.lab.audit import AuditEvent, audit, summary_preview

FORGOTTEN_SHOWN = 8  # per kind; the JSON has them all


def _block(number: int, event: AuditEvent) -> list[str]:
    recorded = "as recorded" if event.tokens_before_recorded else "counted"
    lines = [
        f"compaction {number}: {printable(event.agent_name)}, {printable(event.trigger)}, "
        f"at message {event.position}"
        + (f" (line {event.line})" if event.line is not None else ""),
        f"  tokens before      {event.tokens_before:,} ({recorded}); window {event.window:,} "
        f"({event.window_source})",
    ]
    if event.recorded_prompt is not None:
        lines.append(
            f"  recorded usage     {event.recorded_prompt:,} tokens at the last call before it "
            f"(prompt + output, {event.recorded_prompt / event.window:.0%} of the window)"
        )
    lines += [
        f"  compacted away     messages {event.compacted_from}–{event.position - 1}, "
        f"{event.facts_before} probe facts",
    ]
    if event.kept_by_agent is None:
        lines.append("  kept by the agent  unknown: its summary is not readable (encrypted)")
    else:
        lines.append(
            f"  kept by the agent  {event.kept_by_agent} of {event.facts_before} "
            f"(summary {event.summary_tokens or 0:,} tokens)"
        )
    if event.kept_by_pipeline is not None:
        lines.append(
            f"  kept by ours       {event.kept_by_pipeline} of {event.facts_before} "
            f"({event.pipeline_tokens_after or 0:,} tokens, same window and trigger, a summary "
            "no larger than the agent's)"
        )
    else:
        lines.append(f"  kept by ours       not run: {printable(str(event.pipeline_error))}")
    if event.kept_at_agent_size is not None:
        lines.append(
            f"  ours, same size    {event.kept_at_agent_size} of {event.facts_before} "
            f"({event.tokens_at_agent_size or 0:,} tokens: the agent's context after as target)"
        )
    lines.append(f"  verdict            {event.verdict()}")
    by_kind: dict[str, list[str]] = defaultdict(list)
    for fact in event.forgotten:
        mark = " (ours kept it)" if fact.kept_by_pipeline else ""
        text = printable(fact.text, newlines=False)
        by_kind[fact.kind].append(f"#{fact.message_index}: {text}{mark}")
    if by_kind:
        lines.append(f"  forgotten          {len(event.forgotten)} fact(s):")
        for kind, items in by_kind.items():
            lines.append(f"    {kind} ({len(items)})")
            lines += [f"      {item}" for item in items[:FORGOTTEN_SHOWN]]
            if len(items) > FORGOTTEN_SHOWN:
                lines.append(f"      … and {len(items) - FORGOTTEN_SHOWN} more (--json has all)")
    if event.summary is not None:
        preview = printable(summary_preview(event.summary, 300), newlines=False)
        lines.append(f"  agent's summary    {preview}")
    return lines


@click.command("audit")
@click.argument("input_path", metavar="FILE", type=click.Path(path_type=Path))
@source_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the audit as JSON here ('-' for stdout).",
)
def audit_command(
    input_path: Path, source_format: str, index: int | None, json_path: Path | None
) -> None:
    """What the agent forgot at each compaction it recorded in its own session."""
    conversation = load_input(input_path, source_format, index, notes=False)  # audited below
    try:
        result = audit(conversation)
    except CompactionError as exc:
        fail(f"{input_path}: {exc}")
    if json_path is not None and str(json_path) == "-":
        click.echo(json_printable(dump_json(result.to_dict(), input_path)))
        return
    if json_path is not None:
        write_output(json_path, dump_json(result.to_dict(), input_path), inputs=[input_path])
    if not result.events:
        click.echo(
            f"{printable(str(input_path))}: no compaction recorded in this "
            f"{conversation.format} session (nothing to audit)"
        )
        return
    for number, event in enumerate(result.events, 1):
        if number > 1:
            click.echo("")
        for line in _block(number, event):
            click.echo(line)
