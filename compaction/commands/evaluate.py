"""`compaction eval`: compare strategies over many sessions, in parallel, and print one table.

Files and folders of any supported format are read in the main process (every conversation of a
multi-conversation file counts, up to --limit per file); the conversations are evaluated in
worker processes (--jobs; 1 runs in-process), each sending back only a small digest, and the
digests are folded into one row per strategy: mean savings, mean recall per probe category and
the number of sessions a provider would reject; then a second table of the structural recall
per category and per third of the conversation (lab/structural/). `--by-session` adds the
pipeline against head-tail-matched, session by session, and each category it loses with facts
it lost that head-tail kept (lab/per_session.py); --json always holds both. Exit 0 on success,
2 when an input or a setting cannot be used (a file named on the command line that cannot be
read; a folder with nothing readable), 1 when no session could be evaluated (each failure is a
warning line). Files in a folder that are not conversations are skipped with a warning line
each.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

import click

from compaction.commands.common import check_outputs, dump_json, print_warnings, write_output
from compaction.commands.corpus import corpus_lines, corpus_options, corpus_report, scan_paths
from compaction.commands.tables import (
    aligned,
    by_session_lines,
    session_markdown,
    structural_lines,
)
from compaction.commands.terminal import printable
from compaction.errors import CompactionError, ConfigError, FormatError
from compaction.formats import load_conversations
from compaction.formats.conversation import Conversation
from compaction.lab.corpus.runner import run_each
from compaction.lab.corpus.sources import NOT_SESSIONS, walk
from compaction.lab.evaluate import (
    COMPACTION,
    DEFAULT_TARGET_RATIO,
    MATCHED,
    STRATEGY_NAMES,
    aggregate,
    evaluate,
    parse_strategies,
)
from compaction.lab.judge import judge
from compaction.lab.per_session import compare_sessions, losses
from compaction.lab.probes import CATEGORIES
from compaction.provider_rules import PROVIDERS
from compaction.summarizers.factory import make_summarizer

#: (label, messages, strategies, target_ratio): one unit of work for a worker process.
#: How the worker reaches a model: {"model", "api_base", "judge"} (any may be None), or None for
#: the extractive summariser and no judged run. The key is read from the environment in the
#: worker (COMPACTION_API_KEY or the provider's usual variable), never passed on the command line.
LLMSpec = dict[str, str | None]
# The conversation itself, not its messages: its marks say which user turns the harness sent.
Task = tuple[str, Conversation, tuple[str, ...], float, LLMSpec | None]
API_KEY_VARIABLE = "COMPACTION_API_KEY"

_SHORT = {
    "latest_request": "latest",
    "constraints": "constr",
    "files": "files",
    "errors": "errors",
    "commands": "cmds",
    "identifiers": "idents",
}


def _files(paths: tuple[str, ...]) -> Iterator[tuple[Path, bool]]:
    """(file, named explicitly) for each path; folders are walked, hidden entries skipped."""
    return walk(paths, skip_suffixes=False)


def collect_tasks(
    paths: tuple[str, ...],
    strategies: tuple[str, ...],
    target_ratio: float,
    limit: int | None,
    llm: LLMSpec | None = None,
    only: Mapping[str, set[int]] | None = None,
) -> tuple[list[Task], list[str]]:
    """The conversations to evaluate and the warnings met while reading them (with `only`, the
    conversations of each file a scan selected, by index)."""
    tasks: list[Task] = []
    warnings: list[str] = []
    ignored: dict[str, int] = {}
    for path, explicit in _files(paths):
        if not explicit and path.suffix.lower() in NOT_SESSIONS:
            # Code and binaries beside the sessions (a samples folder's build scripts): one
            # line in total, not a warning per file.
            ignored[path.suffix.lower()] = ignored.get(path.suffix.lower(), 0) + 1
            continue
        try:
            conversations = load_conversations(path)
        except (CompactionError, OSError, ValueError, TypeError, KeyError) as exc:
            if explicit:
                raise FormatError(f"cannot read: {exc}", source=str(path)) from exc
            # One line per skipped file: the importer's list of every format tried is for
            # a file the user named, not for a stray README in a folder.
            reason = str(exc).split(" Tried:")[0]
            if isinstance(exc, FormatError) and exc.source:
                reason = reason.removeprefix(f"{exc.source}: ")
            warnings.append(f"skipped {path}: {reason}")
            continue
        chosen = conversations if limit is None else conversations[:limit]
        if len(chosen) < len(conversations):
            warnings.append(
                f"{path}: evaluating {len(chosen)} of {len(conversations)} conversations (--limit)"
            )
        for position, conversation in enumerate(chosen):
            if only is not None and position not in only.get(str(path), set()):
                continue
            label = str(path) if len(conversations) == 1 else f"{path}#{position}"
            # The loader's warnings (a broken line skipped, a repair), as every command prints.
            warnings.extend(f"{label}: {warning}" for warning in conversation.warnings)
            tasks.append((label, conversation, strategies, target_ratio, llm))
    if ignored:
        kinds = ", ".join(f"{count} {suffix}" for suffix, count in sorted(ignored.items()))
        warnings.append(f"ignored {sum(ignored.values())} file(s) that are not sessions: {kinds}")
    if not tasks:
        raise FormatError("no conversation found in the given paths", source=", ".join(paths))
    return tasks, warnings


def run_task(task: Task) -> dict[str, Any]:
    """Evaluate one conversation; the worker's entry point (module level, so it pickles)."""
    label, conversation, strategies, target_ratio, llm = task
    llm = llm or {}
    api_key = os.environ.get(API_KEY_VARIABLE)
    try:
        summarizer = None
        if llm.get("model"):
            summarizer = make_summarizer(
                "llm", model=llm["model"], api_base=llm.get("api_base"), api_key=api_key
            )
        evaluation = evaluate(
            conversation, strategies, target_ratio=target_ratio, summarizer=summarizer
        )
        if llm.get("judge"):
            judge(evaluation, str(llm["judge"]), api_base=llm.get("api_base"), api_key=api_key)
        digest = evaluation.summary_row()
    except CompactionError as exc:
        return {"source": label, "error": str(exc)}
    digest["source"] = label
    return digest


def run_all(
    tasks: list[Task], jobs: int, scheduler: str | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Every task's digest, in task order, with a progress bar on stderr, in this process, in
    local worker processes or on a Dask cluster (lab/corpus/runner.py); and whether a Ctrl-C
    stopped the run (the digests that finished are kept)."""
    with click.progressbar(length=len(tasks), label="Evaluating", file=sys.stderr) as bar:

        def advance(done: int, _total: int) -> None:
            bar.update(done - bar.pos)

        outcome = run_each(
            run_task,
            tasks,
            jobs=jobs,
            scheduler=scheduler,
            progress=advance,
            weight=lambda task: len(task[1].messages),
            on_error=lambda task, exc: {"source": task[0], "error": f"{type(exc).__name__}: {exc}"},
        )
    return outcome.results, outcome.stopped


def _cell(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}%" if percent else f"{value:.2f}"


def table_lines(table: list[dict[str, Any]]) -> list[str]:
    """The per-strategy table as aligned text."""
    judged = any(entry.get("mean_judged") is not None for entry in table)
    columns = ["strategy", "sessions", "savings", "× target", "over", "recall"]
    columns += ["recall (structural)"]
    columns += [_SHORT[c] for c in CATEGORIES]
    columns += ["judged"] if judged else []
    columns += [f"{provider} ✗" for provider in PROVIDERS]
    rows = []
    for entry in table:
        rows.append(
            [
                entry["strategy"],
                str(entry["sessions"]),
                _cell(entry["mean_savings_pct"], percent=True),
                _cell(entry["mean_target_ratio"]),
                str(entry["over_target"]),
                _cell(entry["mean_recall"]),
                _cell(entry.get("mean_recall_structural")),
                *(_cell(entry[f"recall_{c}"]) for c in CATEGORIES),
                *([_cell(entry.get("mean_judged"))] if judged else []),
                *(str(entry[f"{provider}_failures"]) for provider in PROVIDERS),
            ]
        )
    return aligned(columns, rows)


def csv_text(digests: list[dict[str, Any]]) -> str | None:
    """One CSV row per (session, strategy); None when there is no row to write."""
    rows = [
        {"source": d["source"], "tokens_before": d["tokens_before"], **row}
        for d in digests
        for row in d["strategies"].values()
    ]
    if not rows:
        return None
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _no_session_evaluated(
    failures: list[dict[str, Any]], target_ratio: float, json_out: str | None, inputs: list[Path]
) -> NoReturn:
    """Every session failed: say so and why (the first error; each is a warning above), keep
    the errors in --json, and exit 1 — an empty table would read as a result."""
    if json_out:
        report = {"target_ratio": target_ratio, "table": [], "sessions": failures}
        write_output(json_out, dump_json(report, json_out, indent=1) + "\n", inputs=inputs)
    first = failures[0]
    reason = printable(f"{first['source']}: {first['error']}", newlines=False)
    count = f"the {len(failures)} sessions all failed" if len(failures) > 1 else "it failed"
    click.echo(f"error: no session could be evaluated: {count} (first: {reason})", err=True)
    raise SystemExit(1)


@click.command("eval")
@click.argument("paths", metavar="[PATH]...", nargs=-1)
@click.option(
    "--strategies",
    default=",".join(STRATEGY_NAMES),
    show_default=True,
    help="Comma-separated strategies to compare. Peers' published policies may be added by "
    "name: hermes, codex, openhands, gemini-cli, observation-masking.",
)
@click.option(
    "--target-ratio",
    type=float,
    default=DEFAULT_TARGET_RATIO,
    show_default=True,
    help="Token target as a share of each conversation.",
)
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@corpus_options
@click.option("--limit", type=int, default=None, help="At most N conversations per file.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the results.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="Write one row per run.")
@click.option(
    "--model",
    default=None,
    help="Summarise with this LLM (litellm name, e.g. gpt-4o-mini or openai/NAME with "
    "--api-base) instead of the extractive summariser.",
)
@click.option(
    "--judge",
    "judge_model",
    default=None,
    help="Also run the judged probe run: this model answers four questions from each "
    "strategy's context, graded against the original's facts.",
)
@click.option("--api-base", default=None, help="An OpenAI-compatible server for --model/--judge.")
@click.option(
    "--by-session",
    is_flag=True,
    help="Also print, per session, the structural recall of compaction against "
    "head-tail-matched (total, per category, per third of the conversation), and every figure "
    "where compaction keeps less, with facts it lost that head-tail kept.",
)
@click.option(
    "--markdown",
    "markdown_out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the per-session table (compaction against head-tail-matched) as markdown.",
)
def eval_command(
    paths: tuple[str, ...],
    strategies: str,
    target_ratio: float,
    jobs: int,
    limit: int | None,
    json_out: str | None,
    csv_out: str | None,
    model: str | None,
    judge_model: str | None,
    api_base: str | None,
    by_session: bool,
    markdown_out: str | None,
    scan: str | None,
    agents: tuple[str, ...],
    compacted: bool,
    scheduler: str | None,
) -> None:
    """Compare compaction strategies over the sessions in PATH... (files or folders), or over
    a scan's selection (--scan).

    The full pipeline summarises with the extractive summariser, or with --model. API keys come
    from COMPACTION_API_KEY or the provider's usual variable, never from the command line.
    """
    try:
        chosen = parse_strategies(strategies)
        if not 0 < target_ratio <= 1:
            raise ConfigError(f"--target-ratio must be in (0, 1], got {target_ratio}")
        if jobs < 1:
            raise ConfigError(f"--jobs must be at least 1, got {jobs}")
        if limit is not None and limit < 1:
            raise ConfigError(f"--limit must be at least 1, got {limit}")
        if by_session and not {COMPACTION, MATCHED} <= set(chosen):
            raise ConfigError(
                f"--by-session compares {COMPACTION} with {MATCHED}: --strategies must name both"
            )
        only = None
        if scan is not None:
            paths, only = scan_paths(paths, scan, agents, compacted)
        elif not paths:
            raise ConfigError("give the sessions to evaluate: PATH..., or --scan")
        inputs = [path for path, _ in _files(paths)]
        check_outputs([json_out, csv_out, markdown_out], inputs)
        llm: LLMSpec | None = None
        if model or judge_model:
            llm = {"model": model, "api_base": api_base, "judge": judge_model}
        tasks, warnings = collect_tasks(paths, chosen, target_ratio, limit, llm, only)
    except CompactionError as exc:
        click.echo(f"Error: {printable(str(exc), newlines=False)}", err=True)
        raise SystemExit(2) from exc
    print_warnings(warnings)
    try:
        results, stopped = run_all(tasks, jobs, scheduler)
    except CompactionError as exc:
        click.echo(f"Error: {printable(str(exc), newlines=False)}", err=True)
        raise SystemExit(2) from exc
    if stopped:
        click.echo(
            f"stopped: {len(results)} of {len(tasks)} sessions evaluated; the table is theirs",
            err=True,
        )
    digests = [result for result in results if "error" not in result]
    failures = [result for result in results if "error" in result]
    for failed in failures:
        print_warnings([failed["error"]], failed["source"])
    if not digests:
        _no_session_evaluated(failures, target_ratio, json_out, inputs)
    table = aggregate(digests)
    if model:
        click.echo(f"the full pipeline summarised with {printable(model, newlines=False)}")
    click.echo(
        f"{len(digests)} sessions, target {target_ratio:.0%} of each session's tokens; "
        "× target = output tokens / target (mean), over = sessions left above the target; "
        "recall is the share of probe facts kept (mean per session); recall (structural) the "
        "share of facts defined by the transcript's structure alone, mined without the "
        "summariser's patterns (per category below); ✗ = sessions the provider would reject"
    )
    for line in table_lines(table):
        click.echo(line)
    for line in structural_lines(table):
        click.echo(line)
    compared = compare_sessions(digests)
    lost = losses(digests)
    if by_session and compared:
        for line in by_session_lines(compared, lost):
            click.echo(printable(line, newlines=False))
    invalid_inputs = {
        provider: sum(1 for d in digests if d["original_errors"].get(provider))
        for provider in PROVIDERS
    }
    if any(invalid_inputs.values()):
        shown = ", ".join(f"{provider} {count}" for provider, count in invalid_inputs.items())
        click.echo(f"inputs already invalid before compaction: {shown}")
    corpus = corpus_report(digests)
    if corpus is not None:
        for line in corpus_lines(corpus):
            click.echo(printable(line, newlines=False))
    if json_out:
        report = {
            "target_ratio": target_ratio,
            "table": table,
            "by_session": [row.to_dict() for row in compared],
            "losses": [loss.to_dict() for loss in lost],
            "sessions": results,
            "corpus": corpus,
        }
        write_output(json_out, dump_json(report, json_out, indent=1) + "\n", inputs=inputs)
    if markdown_out:
        table_text = "\n".join(session_markdown(compared)) + "\n"
        write_output(markdown_out, table_text, inputs=inputs)
    if csv_out:
        text = csv_text(digests)
        if text is not None:
            write_output(csv_out, text, inputs=inputs)
