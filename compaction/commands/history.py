"""`compaction history …`: list, show, compare, export, import, relabel and delete stored runs.

Also `save_run`, which `compaction compress --save [--label L]` calls to keep a run. Every
HistoryError (unreadable file, newer schema, missing run, bad bundle) ends with one line on
stderr and exit status 2, never a traceback.

Labels, titles, notes and summaries come from conversations and bundles nobody on this machine
wrote: text output goes through `terminal.printable` (an escape sequence is shown, never obeyed)
and JSON output escapes the C1 controls JSON itself leaves raw. Run ids and limits are checked
against SQLite's 64-bit integers by click. Reading commands open the file read-only
(`History.for_reading`), so a read-only history can be listed and reading never writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from compaction.commands.common import (
    check_outputs,
    dump_json,
    fail,
    write_output,
    write_stdout,
)
from compaction.commands.terminal import printable
from compaction.errors import HistoryError
from compaction.history import Comparison, History, RunRow
from compaction.history.store import MAX_SQLITE_INT, read_bundle

#: A run id: SQLite's rowids are positive 64-bit integers (a larger one is an OverflowError).
RUN_ID = click.IntRange(min=1, max=MAX_SQLITE_INT)
#: How many characters of a label the `list` table shows (`show` prints more, `--full` all).
LIST_LABEL_CHARS = 60

# DEL and the C1 controls: JSON escapes only U+0000–U+001F, but a terminal may obey these.
_JSON_CONTROLS = re.compile(r"[\x7f-\x9f]")


def save_run(
    conversation: Any,
    result: Any,
    label: str | None = None,
    note: str | None = None,
    summarizer_info: dict[str, Any] | None = None,
    path: str | Path | None = None,
) -> int:
    """Record one run in the history (default file unless `path`) and return its id.

    Raises HistoryError when the history cannot be used; the caller decides whether that fails
    the command or only warns (the compaction itself has already succeeded).
    """
    with History(path) as history:
        return history.record(
            conversation, result, label=label, note=note, summarizer_info=summarizer_info
        )


@contextmanager
def _open(ctx: click.Context, *, write: bool = True) -> Iterator[History]:
    try:
        with History(ctx.obj) if write else History.for_reading(ctx.obj) as history:
            yield history
    except HistoryError as exc:
        fail(str(exc))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_json(text: str) -> str:
    """JSON text with DEL and the C1 controls written as `\\u` escapes: the same JSON value,
    safe on a terminal (JSON's own escaping already covers the C0 controls)."""
    return _JSON_CONTROLS.sub(_json_escape, text)


def _echo_json(value: Any) -> None:
    click.echo(terminal_json(json.dumps(value, indent=2, ensure_ascii=False, default=str)))


def _cell(text: str | None, width: int) -> str:
    """Untrusted text on one line of a table: escaped, and cut to `width` with "…"."""
    shown = printable(text or "", newlines=False)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def _line(text: Any) -> str:
    return printable(str(text), newlines=False)


def _when(run: RunRow) -> str:
    return run.created_at[:19].replace("T", " ")


def _run_line(run: RunRow) -> str:
    fallback = f" fallback={_cell(run.fallback_used, 20)}" if run.fallback_used else ""
    skipped = " skipped" if run.skipped else ""
    return (
        f"{run.id:>5}  {_line(_when(run))}  {_line(run.session_id[:10])}  "
        f"{_line(run.summarizer):<10.10}  {run.tokens_before:>8} → {run.tokens_after:<8} "
        f"{run.savings_pct:6.1f}%  {_cell(run.label, LIST_LABEL_CHARS)}{fallback}{skipped}"
    )


@click.group("history")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="History file (default: $COMPACTION_LAB_DB, else the user data directory).",
)
@click.pass_context
def history_group(ctx: click.Context, db: Path | None) -> None:
    """Browse, compare and share the runs kept by `compress --save` and the app."""
    ctx.obj = db


@history_group.command("list")
@click.option("--session", default=None, help="Only runs of this session (id or id prefix).")
@click.option("--search", "query", default=None, help="Words found in the summary, label or note.")
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(min=1, max=MAX_SQLITE_INT)
)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_context
def list_command(
    ctx: click.Context, session: str | None, query: str | None, limit: int, as_json: bool
) -> None:
    """List runs, newest first."""
    with _open(ctx, write=False) as history:
        runs = history.runs(session=session, search=query, limit=limit)
    if as_json:
        _echo_json([run.to_dict() for run in runs])
        return
    if not runs:
        click.echo("no runs stored yet" if not (session or query) else "no matching runs")
        return
    click.echo(
        f"{'ID':>5}  {'CREATED (UTC)':<19}  {'SESSION':<10}  {'SUMMARISER':<10}  "
        f"{'TOKENS BEFORE → AFTER':<21} {'SAVED':>6}  LABEL"
    )
    for run in runs:
        click.echo(_run_line(run).rstrip())


@history_group.command("show")
@click.argument("run_id", type=RUN_ID)
@click.option("--json", "as_json", is_flag=True, help="Print the whole stored run as JSON.")
@click.option(
    "--full", is_flag=True, help="Print the whole label and title, however long (not cut)."
)
@click.pass_context
def show_command(ctx: click.Context, run_id: int, as_json: bool, full: bool) -> None:
    """Show one run: figures, config and its summary."""
    with _open(ctx, write=False) as history:
        run = history.run(run_id)
    if as_json:
        _echo_json(run.to_dict())
        return
    label = run.full_label if full else run.label
    title = run.full_session_title if full else run.session_title
    click.echo(f"run {run.id}  {_line(_when(run))} UTC  label: {_line(label or '-')}")
    if run.label_full is not None and not full:
        click.echo(
            f"  (label cut to {len(run.label or '')} of {len(run.label_full)} "
            "characters; --full prints it all)"
        )
    click.echo(f"session {_line(run.session_id)}  {_line(title or '')}".rstrip())
    click.echo(
        f"summariser {_line(run.summarizer)}  model {_line(run.model or '-')}  "
        f"focus {_line(run.focus or '-')}"
    )
    click.echo(
        f"tokens {run.tokens_before} → {run.tokens_after} ({run.savings_pct:.1f}% saved), "
        f"messages {run.messages_before} → {run.messages_after}, {run.duration_s:.2f} s"
    )
    if run.skipped:
        click.echo(f"skipped: {_line(run.skip_reason)}")
    if run.fallback_used:
        click.echo(f"fallback: {_line(run.fallback_used)} ({_line(run.fallback_reason)})")
    if run.llm_prompt_tokens is not None or run.llm_cost is not None:
        click.echo(
            f"LLM tokens {_line(run.llm_prompt_tokens)} in / "
            f"{_line(run.llm_completion_tokens)} out, cost {_line(run.llm_cost)}"
        )
    if run.note:
        click.echo(f"note: {printable(run.note)}")
    click.echo("config: " + _line(json.dumps(run.config, sort_keys=True, default=str)))
    for section, body in (run.summary or {}).items():
        click.echo(f"\n## {_line(section)}\n{printable(str(body))}")


@history_group.command("compare")
@click.argument("a", type=RUN_ID)
@click.argument("b", type=RUN_ID)
@click.option("--json", "as_json", is_flag=True, help="Print the whole comparison as JSON.")
@click.pass_context
def compare_command(ctx: click.Context, a: int, b: int, as_json: bool) -> None:
    """Compare two runs: settings, figures, summary sections and message fates."""
    with _open(ctx, write=False) as history:
        comparison = history.compare(a, b)
    if as_json:
        _echo_json(comparison.to_dict())
        return
    _print_comparison(comparison, click.echo)


def _print_comparison(comparison: Comparison, echo: Callable[[str], None]) -> None:
    echo(
        f"run {comparison.a} vs run {comparison.b}"
        + ("" if comparison.same_session else " (different sessions)")
    )
    echo("config differences:" if comparison.config else "config: identical")
    for entry in comparison.config:
        echo(f"  {_line(entry['field'])}: {_line(repr(entry['a']))} → {_line(repr(entry['b']))}")
    echo("figures:")
    for figure in comparison.figures:
        if figure["a"] is None and figure["b"] is None:
            continue
        delta = f"  ({figure['delta']:+g})" if figure["delta"] else ""
        mark = "*" if figure["changed"] else " "
        echo(f" {mark}{_line(figure['name'])}: {_line(figure['a'])} → {_line(figure['b'])}{delta}")
    changed = comparison.changed_sections
    echo(f"summary sections changed: {_line(', '.join(changed)) if changed else 'none'}")
    for section in comparison.sections:
        if section["changed"]:
            echo(f"\n## {_line(section['section'])}")
            for line in section["diff"][2:]:
                echo(f"  {_line(line)}")
    echo(f"\nmessage fates differing: {comparison.changed_fates} of {len(comparison.fates)}")
    for fate in comparison.fates:
        if fate["changed"]:
            echo(
                f"  message {_line(fate['index'])}: {_line(fate['a'] or '-')} → "
                f"{_line(fate['b'] or '-')}"
            )


@history_group.command("export")
@click.argument("run_id", type=RUN_ID)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the bundle here instead of standard output.",
)
@click.pass_context
def export_command(ctx: click.Context, run_id: int, output: Path | None) -> None:
    """Export a run as a JSON bundle (conversation, config, result) to share or re-import."""
    with _open(ctx, write=False) as history:
        # The history file is this command's input: a bundle written over it would destroy
        # every stored run.
        database = history.path
        check_outputs([output], [database])
        bundle = history.export(run_id)
    text = dump_json(bundle, database) + "\n"
    if output is None:
        write_stdout(terminal_json(text))
        return
    write_output(output, text, inputs=[database])
    click.echo(f"exported run {run_id} to {output}", err=True)


@history_group.command("import")
@click.argument("bundle_path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def import_command(ctx: click.Context, bundle_path: Path) -> None:
    """Import a run bundle written by `history export`; prints the new run id."""
    try:
        # The conversation loaders' guards: size, binary, UTF-8, nesting depth, huge integers.
        bundle = read_bundle(bundle_path)
    except HistoryError as exc:
        fail(str(exc))
    with _open(ctx) as history:
        try:
            run_id = history.import_bundle(bundle)
        except HistoryError as exc:
            raise HistoryError(f"{bundle_path}: {exc}") from exc
    click.echo(f"imported run {run_id}")


@history_group.command("delete")
@click.argument("run_id", type=RUN_ID)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete_command(ctx: click.Context, run_id: int, yes: bool) -> None:
    """Delete a run (its conversation stays for other runs)."""
    with _open(ctx) as history:
        run = history.run(run_id, full=False)
        shown = _cell(run.label, LIST_LABEL_CHARS) if run.label else "no label"
        if not yes and not click.confirm(f"delete run {run.id} ({shown})?"):
            click.echo("nothing deleted")
            return
        history.delete(run_id)
    click.echo(f"deleted run {run_id}")


@history_group.command("label")
@click.argument("run_id", type=RUN_ID)
@click.argument("label")
@click.option("--note", default=None, help="Also set the run's note.")
@click.pass_context
def label_command(ctx: click.Context, run_id: int, label: str, note: str | None) -> None:
    """Set a run's label (an empty LABEL clears it)."""
    with _open(ctx) as history:
        history.relabel(run_id, label or None, note=note)
    shown = _cell(label, LIST_LABEL_CHARS)
    click.echo(f"run {run_id} labelled '{shown}'" if label else f"run {run_id} label cleared")
