"""`compaction cost`: what a session cost, from the provider's usage it records.

The calls with usage and their dollars (fresh input, cache writes, cache reads, output; per turn
and in all), the cache hit ratio, the prompt the file does not show and the counter's drift, the
window the agent worked in, each compaction the agent made and what it cost, the cache model's
error against the record, and — unless `--no-what-if` — the same calls priced under our pipeline,
a cache-aware setting and each peer. `--json` writes all of it. An unpriced model says "unknown
price" (give one with `--price`); a file without usage says so and exits 0.
"""

from __future__ import annotations

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
from compaction.commands.tables import aligned
from compaction.commands.terminal import printable
from compaction.errors import CompactionError
from compaction.lab.cost.pricing import UNKNOWN_PRICE, PriceBook
from compaction.lab.cost.report import CostReport, cost_report

WORST_SHOWN = 5
TURNS_SHOWN = 12


def _usd(value: float | None) -> str:
    return UNKNOWN_PRICE if value is None else f"${value:,.4f}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def summary_lines(report: CostReport) -> list[str]:
    cost = report.cost
    price = report.price.source if report.price is not None else UNKNOWN_PRICE
    lines = [
        f"calls        {len(cost.calls):,} with the provider's usage "
        f"({len(cost.calls) - cost.unpriced:,} priced); model {report.model or '?'} ({price})",
    ]
    if not cost.calls:
        return lines
    tokens = {part: cost.tokens(part) for part in ("prompt", "fresh", "write", "read", "output")}
    one_hour = sum(c.write_1h_tokens for c in cost.calls)
    lines += [
        f"tokens       prompt {tokens['prompt']:,}: fresh {tokens['fresh']:,}, cache write "
        f"{tokens['write']:,}"
        + (f" (1 h: {one_hour:,})" if one_hour else "")
        + f", cache read {tokens['read']:,}; output {tokens['output']:,}",
        f"dollars      {cost.total_line()}: fresh {_usd(cost.total('fresh'))}, writes "
        f"{_usd(cost.total('write'))}, reads {_usd(cost.total('read'))}, output "
        f"{_usd(cost.total('output'))}",
        f"cache hit    {_share(cost.hit_ratio)} of the prompt tokens read from the cache",
        f"hidden       {report.calibration.hidden_line()}",
        f"window       {report.window.line()}",
    ]
    turns = cost.turns()
    if len(turns) > 1:
        lines.append(f"turns        {len(turns)} (calls, prompt tokens, dollars, cumulative):")
        for row in turns[:TURNS_SHOWN]:
            lines.append(
                f"  turn {row['turn']:>3}: {row['calls']:>4} call(s), {row['prompt_tokens']:>11,} "
                f"tokens, ${row['usd']:,.4f}, ${row['cumulative_usd']:,.4f}"
            )
        if len(turns) > TURNS_SHOWN:
            lines.append(f"  … and {len(turns) - TURNS_SHOWN} more (--json has all)")
    return lines


def compaction_lines(report: CostReport) -> list[str]:
    lines = []
    for number, item in enumerate(report.cost.compactions, 1):
        where = f", line {item.line}" if item.line is not None else ""
        before = (
            f"{item.tokens_before_recorded:,} tokens before (the agent's record)"
            if item.tokens_before_recorded is not None
            else "tokens before not recorded"
        )
        lines.append(
            f"compaction {number} at message {item.position} ({item.trigger}{where}): {before}"
        )
        if item.next_call is not None and item.uncached_after is not None:
            lines.append(
                f"  next call    prompt {item.next_call.prompt_tokens:,}, of which "
                f"{item.uncached_after:,} ({_share(item.uncached_share)}) not read from the "
                f"cache: {_usd(item.invalidated_usd)} above reading it"
            )
        if item.summary_call is not None:
            lines.append(f"  summary call {_usd(item.summary_call.usd)}")
        lines.append(f"  note         {printable(item.note, newlines=False)}")
    return lines


def model_lines(report: CostReport) -> list[str]:
    if report.check is None:
        return []
    lines = [f"cache model  {report.check.line()}"]
    worst = [row for row in report.check.worst(WORST_SHOWN) if row.error > 0.05]
    for row in worst:
        where = f"line {row.line}" if row.line is not None else f"call {row.number}"
        recorded_write = "—" if row.recorded_write is None else f"{row.recorded_write:,}"
        lines.append(
            f"  missed {where} (message {row.position}): read {row.predicted_read:,} predicted, "
            f"{row.recorded_read:,} recorded; write {row.predicted_write:,} vs {recorded_write}"
        )
    return lines


def scenario_lines(report: CostReport) -> list[str]:
    if not report.scenarios:
        return []
    rows = [
        [
            scenario.name,
            _usd(scenario.usd),
            f"{scenario.calls:,}",
            f"{scenario.compactions}",
            _usd(scenario.summary_usd) if scenario.summary_calls else "—",
            _share(scenario.hit_ratio),
            f"{scenario.peak_prompt:,}",
        ]
        for scenario in report.scenarios
    ]
    table = aligned(
        ["scenario", "dollars", "calls", "compactions", "summaries", "cache hit", "peak prompt"],
        rows,
    )
    return ["what-if      the same calls at the same times, priced by the cache model:", *table]


def report_lines(report: CostReport) -> list[str]:
    lines = summary_lines(report)
    lines += compaction_lines(report)
    lines += model_lines(report)
    lines += scenario_lines(report)
    lines += [f"note         {printable(note, newlines=False)}" for note in report.notes]
    lines += [f"note         {printable(note, newlines=False)}" for note in report.cost.notes]
    return lines


@click.command("cost")
@click.argument("input_path", metavar="FILE", type=click.Path(path_type=Path))
@source_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the whole report as JSON here ('-' for stdout).",
)
@click.option(
    "--price",
    "price_specs",
    multiple=True,
    metavar="MODEL=IN,OUT,CACHE_WRITE,CACHE_READ",
    help="A model's price in USD per million tokens (a fifth value: the 1-hour cache write); "
    "repeatable. Overrides litellm's bundled map, or prices a model it does not know.",
)
@click.option(
    "--what-if/--no-what-if",
    default=True,
    show_default=True,
    help="Price the same calls under our pipeline, a cache-aware setting and each peer (replays "
    "the session once per scenario).",
)
def cost_command(
    input_path: Path,
    source_format: str,
    index: int | None,
    json_path: Path | None,
    price_specs: tuple[str, ...],
    what_if: bool,
) -> None:
    """What a session cost: recorded usage, dollars, the prompt cache and what-ifs."""
    try:
        prices = PriceBook.from_specs(price_specs)
    except CompactionError as exc:
        fail(str(exc))
    conversation = load_input(input_path, source_format, index)
    try:
        report = cost_report(conversation, prices, what_if=what_if)
    except CompactionError as exc:
        fail(f"{input_path}: {exc}")
    if json_path is not None and str(json_path) == "-":
        click.echo(json_printable(dump_json(report.to_dict(), input_path)))
        return
    if json_path is not None:
        write_output(json_path, dump_json(report.to_dict(), input_path), inputs=[input_path])
    for line in report_lines(report):
        click.echo(line)
