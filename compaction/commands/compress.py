"""`compaction compress` and `compaction inspect`: the engine from the command line.

Bad input ends with one line on stderr and exit status 2 — never a traceback, never a partial
output file (the output is written to a temporary file and renamed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from compaction.cache import CompactionCache
from compaction.commands.common import (
    check_outputs,
    dump_json,
    fail,
    json_printable,
    load_input,
    parse_settings,
    source_options,
    write_output,
    write_stdout,
)
from compaction.commands.terminal import printable
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import EXPORT_FORMATS, dump_conversation
from compaction.input.checks import rejected_arguments
from compaction.input.growing import remember_checked
from compaction.messages import content_text
from compaction.phases.pins import Pins
from compaction.phases.regions import plan_regions
from compaction.summary import render_sourced
from compaction.tokens import make_counter

API_KEY_VARIABLE = "COMPACTION_API_KEY"


def build_config(
    context_length: int | None,
    threshold: float | None,
    head: int | None,
    tail_ratio: float | None,
    counter: str | None,
    orphans: str | None,
    model: str | None,
    settings: tuple[str, ...],
    pins: tuple[str, ...] = (),
) -> CompactionConfig:
    values: dict[str, Any] = parse_settings(settings)
    if pins:
        try:
            values["pins"] = Pins.from_specs(pins)
        except CompactionError as exc:
            fail(f"invalid --pin: {exc}")
    named = {
        "context_length": context_length,
        "threshold_ratio": threshold,
        "protect_first_n": head,
        "tail_token_ratio": tail_ratio,
        "counter": counter,
        "orphan_strategy": orphans,
        "model": model,
    }
    values.update({key: value for key, value in named.items() if value is not None})
    try:
        return CompactionConfig(**values)
    except (CompactionError, TypeError, ValueError) as exc:
        fail(f"invalid setting: {exc}")


def config_options(function: Any) -> Any:
    """The budget options shared by compress and inspect."""
    options = [
        click.option("--context-length", type=int, help="Model window in tokens [128000]."),
        click.option("--threshold", type=float, help="Compaction trigger ratio [0.5]."),
        click.option("--head", type=int, help="Protected first messages [3]."),
        click.option("--tail-ratio", type=float, help="Tail budget as a share of the threshold."),
        click.option("--counter", type=click.Choice(["tiktoken", "rough"]), help="Token counter."),
        click.option("--orphans", type=click.Choice(["stub", "strip"]), help="Orphan strategy."),
        click.option("--model", help="The conversation's model (tokenizer; LLM main model)."),
        click.option(
            "--set",
            "settings",
            multiple=True,
            metavar="FIELD=VALUE",
            help="Any other CompactionConfig field; repeatable.",
        ),
        click.option(
            "--pin",
            "pins",
            multiple=True,
            metavar="PIN",
            help="Keep verbatim: a message number, role:ROLE, tool:NAME, text:REGEX, user (the "
            "user's messages) or instructions (AGENTS.md, CLAUDE.md…); repeatable.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return source_options(function)


@click.command("compress")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the compacted messages here instead of standard output.",
)
@config_options
@click.option("--focus", help="Focus topic: kept in full detail in the summary.")
@click.option(
    "--summarizer",
    type=click.Choice(["extractive", "static", "llm"]),
    default="extractive",
    show_default=True,
)
@click.option("--summary-model", help="LLM for the summary (falls back to --model once).")
@click.option("--api-base", help="OpenAI-compatible server URL for the LLM summariser.")
@click.option(
    "--fallback",
    type=click.Choice(["static", "extractive"]),
    default="static",
    show_default=True,
    help="What a failed LLM summary degrades to.",
)
@click.option(
    "--auto",
    "automatic",
    is_flag=True,
    help="Automatic compaction: apply the threshold and anti-thrash rules.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the full JSON report of every phase here.",
)
@click.option(
    "--to",
    "target",
    type=click.Choice(EXPORT_FORMATS),
    default="openai",
    show_default=True,
    help="Output message format.",
)
@click.option(
    "--summary",
    "summary_path",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write the summary with where each line came from ([#N] after each item, ⚠ under "
    "what the provenance check flagged); '-' prints it on standard error.",
)
@click.option("--save", is_flag=True, help="Record the run in the history database.")
@click.option("--label", help="Label for the saved run.")
def compress_command(
    input_path: Path,
    output: Path | None,
    context_length: int | None,
    threshold: float | None,
    head: int | None,
    tail_ratio: float | None,
    counter: str | None,
    orphans: str | None,
    model: str | None,
    settings: tuple[str, ...],
    pins: tuple[str, ...],
    source_format: str,
    index: int | None,
    focus: str | None,
    summarizer: str,
    summary_model: str | None,
    api_base: str | None,
    fallback: str,
    automatic: bool,
    report: Path | None,
    target: str,
    summary_path: Path | None,
    save: bool,
    label: str | None,
) -> None:
    """Compact INPUT (any supported format) and write the compacted messages as JSON.

    Forced by default (like /compress); --auto skips below the threshold and says why. The API
    key of the LLM summariser comes from the provider's usual variable (OPENAI_API_KEY...) or
    COMPACTION_API_KEY, never from the command line.
    """
    from compaction.summarizers.factory import make_summarizer

    summary_file = summary_path if summary_path is not None and str(summary_path) != "-" else None
    check_outputs([output, report, summary_file], [input_path])
    config = build_config(
        context_length, threshold, head, tail_ratio, counter, orphans, model, settings, pins
    )
    conversation = load_input(input_path, source_format, index)
    cache = CompactionCache()
    remember_checked(conversation.messages, cache)  # the importer checked them: compress need not
    try:
        chosen = make_summarizer(
            summarizer,
            model=model or (config.model if summarizer == "llm" else None),
            summary_model=summary_model,
            api_base=api_base,
            api_key=os.environ.get(API_KEY_VARIABLE),
            fallback=fallback,
        )
        compactor = Compactor(config, chosen, cache=cache)
        result = compactor.compress(
            conversation.messages,
            focus=focus,
            force=not automatic,
            recorded=conversation.record(),
        )
    except CompactionError as exc:
        fail(f"{input_path}: {exc}")
    if result.skipped:
        click.echo(f"skipped: {printable(str(result.skip_reason), newlines=False)}", err=True)
    if result.fallback_used:
        click.echo(
            f"warning: summary fell back to the {result.fallback_used} "
            f"summary ({printable(str(result.fallback_reason), newlines=False)})",
            err=True,
        )
    payload = dump_conversation(result.messages, target)
    text = dump_json(payload if target == "anthropic" else result.messages, input_path)
    if report is not None:
        write_output(report, dump_json(result.to_dict(), input_path), inputs=[input_path])
    if summary_path is not None:
        sourced = (
            render_sourced(result.summary)
            if result.summary is not None
            else "(no structured summary: " + (result.skip_reason or "the static marker") + ")"
        )
        if summary_file is not None:
            write_output(summary_file, sourced + "\n", inputs=[input_path])
        else:
            click.echo(printable(sourced), err=True)
    if output is not None:
        write_output(output, text + "\n", inputs=[input_path])
    else:
        write_stdout(json_printable(text) + "\n")
    before, after = len(conversation.messages), len(result.messages)
    rejected = rejected_arguments(result.messages)
    click.echo(
        f"{printable(input_path.name, newlines=False)}: {before:,} → {after:,} messages, "
        f"{result.tokens_before:,} → {result.tokens_after:,} tokens "
        f"({result.savings_pct:.1f}% saved)"
        + (
            f"; {rejected:,} tool call(s) kept with arguments that are not a JSON object, "
            "which a provider rejects (see the warnings)"
            if rejected
            else ""
        ),
        err=True,
    )
    if result.pinned_indexes:
        shown = ", ".join(f"#{i}" for i in result.pinned_indexes[:12])
        more = len(result.pinned_indexes) - 12
        click.echo(
            f"pins kept {len(result.pinned_indexes):,} message(s) verbatim: {shown}"
            + (f" and {more:,} more (see --report)" if more > 0 else ""),
            err=True,
        )
    for line in result.pinned.get("unresolved", []):
        click.echo(f"warning: a pin kept nothing: {printable(line, newlines=False)}", err=True)
    if result.tokens_after > config.context_length:
        reason = result.fit.cannot_fit if result.fit is not None else None
        click.echo(printable(over_window_warning(result.tokens_after, config, reason)), err=True)
    if result.suggestion:
        click.echo(printable(result.suggestion), err=True)
    if save:
        from compaction.commands.history import save_run

        try:
            run_id = save_run(conversation, result, label=label)
        except CompactionError as exc:
            fail(f"could not save the run: {exc}")
        click.echo(f"saved as run {run_id}", err=True)


def over_window_warning(tokens: int, config: CompactionConfig, reason: str | None = None) -> str:
    """Why a written result can still be too big: a skipped compaction changed nothing, and a
    compaction that ran fits the window unless the system message and the latest request alone
    exceed it (Fit never cuts those)."""
    why = reason or (
        "nothing was compacted, so the protected head (first "
        f"{config.protect_first_n} messages) and tail are as they were"
    )
    return (
        f"warning: the result ({tokens:,} tokens) still exceeds the model's window "
        f"({config.context_length:,}): {why}"
    )


def _preview(text: str, width: int) -> str:
    """One line of at most `width` characters, escapes shown (never obeyed by the terminal)."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= width else flat[: width - 1] + "…"
    return printable(flat, newlines=False)


@click.command("inspect")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@config_options
@click.option("--width", type=int, default=60, show_default=True, help="Preview width.")
def inspect_command(
    input_path: Path,
    context_length: int | None,
    threshold: float | None,
    head: int | None,
    tail_ratio: float | None,
    counter: str | None,
    orphans: str | None,
    model: str | None,
    settings: tuple[str, ...],
    pins: tuple[str, ...],
    source_format: str,
    index: int | None,
    width: int,
) -> None:
    """Print each message's index, role, tokens, region and a preview, then the budgets."""
    config = build_config(
        context_length, threshold, head, tail_ratio, counter, orphans, model, settings, pins
    )
    conversation = load_input(input_path, source_format, index, notes=False)  # listed below
    try:
        plan = plan_regions(
            conversation.messages,
            config,
            make_counter(config.counter, config.model),
            marks=conversation.marks,
        )
    except CompactionError as exc:
        fail(f"{input_path}: {exc}")
    for repair in plan.repairs:
        click.echo(f"repair: {printable(repair, newlines=False)}", err=True)
    click.echo(f"{'#':>5}  {'role':<9} {'tokens':>8} {'pruned':>8}  {'region':<6}  preview")
    for position, message in enumerate(plan.messages):
        text = content_text(message)
        calls = message.get("tool_calls") or []
        if calls and not text:
            text = "→ " + ", ".join(str(c.get("function", {}).get("name")) for c in calls)
        role = printable(str(message.get("role", "?")), newlines=False)
        click.echo(
            f"{position:>5}  {role:<9} {plan.tokens[position]:>8,} "
            f"{plan.pruned_tokens[position]:>8,}  {plan.boundaries.region(position):<6}  "
            f"{_preview(text, width)}"
        )
    totals = plan.region_tokens()
    counts = plan.region_counts()
    click.echo("")
    click.echo(f"format            {conversation.format}")
    if conversation.report is not None:
        click.echo(f"import            {conversation.report.summary_line()}")
        for line in conversation.report.skip_lines():
            click.echo(f"  skipped         {printable(line, newlines=False)}")
    click.echo(f"usage             {printable(conversation.usage_line(), newlines=False)}")
    for line in conversation.compaction_lines():
        click.echo(f"agent compaction  {printable(line, newlines=False)}")
    click.echo(f"tokens            {plan.total_tokens:,} ({config.counter}, {config.model})")
    click.echo(f"context window    {config.context_length:,}")
    click.echo(
        f"threshold         {config.threshold_tokens:,} ({config.threshold_ratio:.0%}) — "
        + (
            "over: compaction would run"
            if plan.total_tokens >= config.threshold_tokens
            else "under: automatic compaction would wait"
        )
    )
    click.echo(
        f"tail budget       {config.tail_budget_tokens:,} (soft ceiling "
        f"{config.tail_soft_ceiling:,}); raw walk stopped at {plan.boundaries.raw_walk_stop}"
    )
    for region in ("head", "middle", "tail"):
        click.echo(f"{region:<17} {counts[region]:,} messages, {totals[region]:,} tokens")
    # What Phase 3 summarises: the middle without the pinned request and the user's pins.
    pruned_middle = sum(plan.pruned_tokens[i] for i in plan.boundaries.middle)
    click.echo(
        f"summary budget    {config.summary_budget(pruned_middle):,} "
        f"({config.summary_ratio:.0%} of the pruned middle {pruned_middle:,}, clamped to "
        f"{config.summary_min_tokens:,}–{config.summary_max_tokens:,})"
    )
    for move in plan.boundaries.moves:
        reason = printable(str(move["reason"]), newlines=False)
        click.echo(f"boundary move     {move['from']} → {move['to']}: {reason}")
    for pinned, why in plan.pinned.reasons.items():
        click.echo(f"pinned            #{pinned}: {printable(why, newlines=False)}")
    for line in plan.pinned.unresolved:
        click.echo(f"pin kept nothing  {printable(line, newlines=False)}")
