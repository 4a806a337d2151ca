"""`compaction sweep`: measure a grid of settings on real sessions, print the frontier and advice.

    compaction sweep session.jsonl --param tail_token_ratio=0.05:0.5:0.05 \\
        --param summary_ratio=0.1,0.2,0.3 --context-length 60000 --recommend-savings 60

Bad input (an unreadable file, a bad range) ends with one line on stderr and exit status 2. With
the LLM summariser the number of calls and litellm's price are shown first and the sweep waits
for a yes (`--yes` skips the question); declining sends nothing and exits 1.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from pathlib import Path
from typing import Any

import click

from compaction.commands.common import (
    check_outputs,
    dump_json,
    fail,
    parse_settings,
    print_warnings,
    write_output,
)
from compaction.commands.corpus import (
    corpus_options,
    corpus_sweep_lines,
    scan_paths,
)
from compaction.commands.terminal import printable
from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import FORMATS, Conversation, load_conversations
from compaction.lab.corpus.runner import describe_where
from compaction.lab.corpus.sources import walk
from compaction.lab.corpus.sweeping import CorpusSweep, SummarizerSpec, sweep_corpus
from compaction.lab.sweep.frontier import recommendation_snippets
from compaction.lab.sweep.grid import grid_configs, parse_grid
from compaction.lab.sweep.run import Sweep, SweepPoint, sweep

API_KEY_VARIABLE = "COMPACTION_API_KEY"


def _load(paths: tuple[Path, ...], fmt: str, index: int | None, limit: int | None) -> list[Any]:
    """Every conversation to sweep: per file, `--index` picks one, else the first `--limit`."""
    chosen: list[Conversation] = []
    for path in paths:
        try:
            found = load_conversations(path, format=fmt)
        except CompactionError as exc:
            fail(f"{path}: {exc}")
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            fail(f"{path}: cannot import: {type(exc).__name__}: {exc}")
        if index is not None:
            if not -len(found) <= index < len(found):
                fail(
                    f"{path}: --index {index} is out of range: the file holds "
                    f"{len(found)} conversation(s) (0..{len(found) - 1})"
                )
            found = [found[index]]
        elif limit is not None:
            found = found[:limit]
        for conversation in found:
            conversation.title = conversation.title or path.name
            print_warnings(conversation.warnings, path)
        chosen.extend(found)
    return chosen


def _percent(value: float) -> str:
    return f"{value:.1f}"


def frontier_table(result: Sweep, marked: SweepPoint | None) -> str:
    """The frontier as an aligned text table (the recommended point marked with *)."""
    headers = [
        " ",
        *result.parameters,
        "tokens after",
        "savings %",
        "recall %",
        "structural %",
        "summary tok",
        "errors oa/an",
    ]
    rows = [
        [
            "*" if marked is not None and point.index == marked.index else "",
            *(printable(str(point.params[name]), newlines=False) for name in result.parameters),
            f"{point.tokens_after:,}",
            _percent(point.savings_pct),
            _percent(point.recall * 100),
            "-" if point.recall_structural is None else _percent(point.recall_structural * 100),
            f"{point.summary_tokens:,}",
            f"{point.openai_errors}/{point.anthropic_errors}",
        ]
        for point in result.frontier()
    ]
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(cell.rjust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    header = "  ".join(cell.rjust(widths[i]) for i, cell in enumerate(headers))
    return "\n".join([header, "-" * len(header), *lines])


def _csv_text(result: Sweep) -> str:
    rows = result.rows()
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


@click.command("sweep")
@click.argument("paths", metavar="[PATH]...", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--param",
    "params",
    multiple=True,
    required=True,
    metavar="FIELD=RANGE",
    help="A swept field: FIELD=START:STOP:STEP or FIELD=V1,V2,...; repeatable.",
)
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True)
@corpus_options
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--recommend-savings",
    type=click.FloatRange(0, 100),
    default=50.0,
    show_default=True,
    help="Savings target (%) for the recommendation.",
)
@click.option("--target-tokens", type=click.IntRange(min=1), help="A size each must fit in.")
@click.option("--context-length", type=int, help="Model window in tokens [128000].")
@click.option("--set", "settings", multiple=True, metavar="FIELD=VALUE", help="Base config.")
@click.option(
    "--summarizer",
    type=click.Choice(["extractive", "static", "llm"]),
    default="extractive",
    show_default=True,
)
@click.option("--model", help="The conversation's model (tokenizer; the LLM summariser's model).")
@click.option("--api-base", help="OpenAI-compatible server URL for the LLM summariser.")
@click.option("--yes", is_flag=True, help="Do not ask before spending on LLM calls.")
@click.option("--save", is_flag=True, help="Store the sweep in the history database.")
@click.option("--label", help="Label for the saved sweep.")
@click.option(
    "--from",
    "source_format",
    type=click.Choice(["auto", *FORMATS]),
    default="auto",
    show_default=True,
)
@click.option("--index", type=int, default=None, help="Which conversation of each file.")
@click.option(
    "--limit", type=click.IntRange(min=1), help="At most N conversations of each file [all]."
)
def sweep_command(
    paths: tuple[Path, ...],
    params: tuple[str, ...],
    jobs: int,
    csv_path: Path | None,
    json_path: Path | None,
    recommend_savings: float,
    target_tokens: int | None,
    context_length: int | None,
    settings: tuple[str, ...],
    summarizer: str,
    model: str | None,
    api_base: str | None,
    yes: bool,
    save: bool,
    label: str | None,
    source_format: str,
    index: int | None,
    limit: int | None,
    scan: str | None,
    agents: tuple[str, ...],
    compacted: bool,
    scheduler: str | None,
) -> None:
    """Compact PATH... under every combination of --param values and show what each buys.

    A folder, --scan (a stored scan's sessions) or --scheduler sweeps a corpus: one task per
    session file, in local processes (--jobs) or on a Dask cluster, with the spread over the
    sessions and how often the recommended point wins a session.

    Ends with the savings/recall frontier and the settings with the best recall at
    --recommend-savings, as Python, CLI flags and hermes-agent YAML. The LLM summariser's key
    comes from the provider's usual variable or COMPACTION_API_KEY, never the command line.
    """
    from compaction.summarizers.factory import make_summarizer

    check_outputs([csv_path, json_path], paths)
    values = parse_settings(settings)
    if context_length is not None:
        values["context_length"] = context_length
    if model:
        values["model"] = model
    try:
        base = CompactionConfig(**values)
        grid = parse_grid(params)
        total = len(grid_configs(grid, base))
        chosen = make_summarizer(
            summarizer,
            model=model,
            api_base=api_base,
            api_key=os.environ.get(API_KEY_VARIABLE),
        )
    except (CompactionError, TypeError) as exc:
        fail(str(exc))
    if scan is not None or scheduler or any(path.is_dir() for path in paths):
        files = _corpus_files(paths, scan, agents, compacted, index)
        if summarizer == "llm" and not yes:
            fail(
                "a corpus sweep with the LLM summariser cannot be priced before it reads every "
                "session: pass --yes to run it anyway"
            )
        corpus = _sweep_corpus(
            files, grid, base, summarizer, model, api_base, jobs, scheduler, target_tokens, limit
        )
        _report(
            corpus.sweep,
            recommend_savings,
            csv_path,
            json_path,
            save,
            label,
            paths,
            corpus=corpus,
        )
        return
    if not paths:
        fail("give the sessions to sweep: PATH..., or --scan")
    conversations = _load(paths, source_format, index, limit)

    if summarizer == "llm":
        from compaction.lab.sweep.cost import estimate_cost

        estimate = estimate_cost(conversations, grid, str(model), base)
        click.echo(f"This sweep makes {estimate.describe()}.", err=True)
        if not yes and not click.confirm("Run it?", default=False, err=True):
            click.echo("Cancelled: nothing was sent.", err=True)
            raise SystemExit(1)

    click.echo(f"Sweeping {total} point(s) over {len(conversations)} conversation(s)...", err=True)
    with click.progressbar(length=total, label="points", file=sys.stderr) as bar:

        def advance(done: int, _total: int) -> None:
            bar.update(done - bar.pos)

        try:
            result = sweep(
                conversations,
                grid,
                summarizer=chosen,
                base_config=base,
                jobs=jobs,
                target_tokens=target_tokens,
                progress=advance,
            )
        except CompactionError as exc:
            fail(str(exc))

    _report(result, recommend_savings, csv_path, json_path, save, label, paths)


def _corpus_files(
    paths: tuple[Path, ...],
    scan: str | None,
    agents: tuple[str, ...],
    compacted: bool,
    index: int | None,
) -> dict[str, list[int] | None]:
    """The files of a corpus sweep and, per file, the conversations to take (None: all)."""
    try:
        if scan is not None:
            _, only = scan_paths([str(p) for p in paths], scan, agents, compacted)
            return {path: sorted(numbers) for path, numbers in only.items()}
        if not paths:
            fail("give the sessions to sweep: PATH..., or --scan")
        chosen = None if index is None else [index]
        return {str(path): chosen for path, _ in walk(paths)}
    except CompactionError as exc:
        fail(str(exc))


def _sweep_corpus(
    files: dict[str, list[int] | None],
    grid: Any,
    base: CompactionConfig,
    summarizer: str,
    model: str | None,
    api_base: str | None,
    jobs: int,
    scheduler: str | None,
    target_tokens: int | None,
    limit: int | None,
) -> CorpusSweep:
    total = len(grid_configs(grid, base))
    click.echo(
        f"Sweeping {total} point(s) over the sessions of {len(files)} file(s) "
        f"({describe_where(jobs, scheduler)})...",
        err=True,
    )
    with click.progressbar(length=len(files), label="files", file=sys.stderr) as bar:

        def advance(done: int, _total: int) -> None:
            bar.update(done - bar.pos)

        try:
            corpus = sweep_corpus(
                files,
                grid,
                base,
                SummarizerSpec(summarizer, model, api_base),
                jobs=jobs,
                scheduler=scheduler,
                progress=advance,
                target_tokens=target_tokens,
                limit=limit,
            )
        except CompactionError as exc:
            fail(str(exc))
    for error in corpus.errors:
        print_warnings([error["error"]], error["session"])
    if corpus.stopped:
        click.echo(
            f"stopped: the {len(corpus.sessions)} session(s) that finished are measured", err=True
        )
    return corpus


def _report(
    result: Sweep,
    target: float,
    csv_path: Path | None,
    json_path: Path | None,
    save: bool,
    label: str | None,
    inputs: tuple[Path, ...],
    corpus: CorpusSweep | None = None,
) -> None:
    if csv_path is not None:
        write_output(csv_path, _csv_text(result), inputs=inputs)
    if json_path is not None:
        data = {**result.to_dict(), "recommendation": result.recommendation(target)}
        if corpus is not None:
            data["corpus"] = corpus.to_dict(target)
        write_output(json_path, dump_json(data, json_path), inputs=inputs)
    best = result.recommend(target)
    click.echo(
        f"{len(result.points)} points in {result.duration_s:.2f} s; "
        f"frontier ({len(result.frontier())} points, savings vs probe recall):"
    )
    click.echo(frontier_table(result, best))
    click.echo("")
    if best is None:
        reach = max(point.savings_pct for point in result.points)
        click.echo(
            f"No valid point saves {target:g}% or more (the most is {reach:.1f}%): "
            "lower --recommend-savings or widen the grid."
        )
    else:
        click.echo(
            f"Recommended for >= {target:g}% savings: {printable(best.label, newlines=False)} "
            f"({best.savings_pct:.1f}% saved, recall {best.recall * 100:.1f}%)"
        )
        for kind, text in recommendation_snippets(best).items():
            click.echo(f"\n[{kind}]\n{printable(text)}")
    if corpus is not None:
        for line in corpus_sweep_lines(corpus, result, target):
            click.echo(printable(line, newlines=False))
    if save:
        from compaction.history import History

        try:
            with History() as history:
                sweep_id = history.record_sweep(result, label=label, min_savings_pct=target)
        except CompactionError as exc:
            fail(str(exc))
        where = printable(str(history.path), newlines=False)
        click.echo(f"\nSaved as sweep {sweep_id} in {where}", err=True)
