"""`compaction history …`: list, show, compare, export, import, relabel and delete stored runs.

Also `save_run`, which `compaction compress --save [--label L]` calls to keep a run. Every
HistoryError (unreadable file, newer schema, missing run, bad bundle) ends with one line on
stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
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
from compaction.errors import HistoryError
from compaction.history import Comparison, History, RunRow


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
def _open(ctx: click.Context) -> Iterator[History]:
    try:
        with History(ctx.obj) as history:
            yield history
    except HistoryError as exc:
        fail(str(exc))


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _when(run: RunRow) -> str:
    return run.created_at[:19].replace("T", " ")


def _run_line(run: RunRow) -> str:
    fallback = f" fallback={run.fallback_used}" if run.fallback_used else ""
    skipped = " skipped" if run.skipped else ""
    return (
        f"{run.id:>5}  {_when(run)}  {run.session_id[:10]}  "
        f"{run.summarizer:<10.10}  {run.tokens_before:>8} → {run.tokens_after:<8} "
        f"{run.savings_pct:6.1f}%  {run.label or ''}{fallback}{skipped}"
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
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_context
def list_command(
    ctx: click.Context, session: str | None, query: str | None, limit: int, as_json: bool
) -> None:
    """List runs, newest first."""
    with _open(ctx) as history:
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
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the whole stored run as JSON.")
@click.pass_context
def show_command(ctx: click.Context, run_id: int, as_json: bool) -> None:
    """Show one run: figures, config and its summary."""
    with _open(ctx) as history:
        run = history.run(run_id)
    if as_json:
        _echo_json(run.to_dict())
        return
    click.echo(f"run {run.id}  {_when(run)} UTC  label: {run.label or '-'}")
    click.echo(f"session {run.session_id}  {run.session_title or ''}".rstrip())
    click.echo(f"summariser {run.summarizer}  model {run.model or '-'}  focus {run.focus or '-'}")
    click.echo(
        f"tokens {run.tokens_before} → {run.tokens_after} ({run.savings_pct:.1f}% saved), "
        f"messages {run.messages_before} → {run.messages_after}, {run.duration_s:.2f} s"
    )
    if run.skipped:
        click.echo(f"skipped: {run.skip_reason}")
    if run.fallback_used:
        click.echo(f"fallback: {run.fallback_used} ({run.fallback_reason})")
    if run.llm_prompt_tokens is not None or run.llm_cost is not None:
        click.echo(
            f"LLM tokens {run.llm_prompt_tokens} in / {run.llm_completion_tokens} out, "
            f"cost {run.llm_cost}"
        )
    if run.note:
        click.echo(f"note: {run.note}")
    click.echo("config: " + json.dumps(run.config, sort_keys=True))
    for section, body in (run.summary or {}).items():
        click.echo(f"\n## {section}\n{body}")


@history_group.command("compare")
@click.argument("a", type=int)
@click.argument("b", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the whole comparison as JSON.")
@click.pass_context
def compare_command(ctx: click.Context, a: int, b: int, as_json: bool) -> None:
    """Compare two runs: settings, figures, summary sections and message fates."""
    with _open(ctx) as history:
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
        echo(f"  {entry['field']}: {entry['a']!r} → {entry['b']!r}")
    echo("figures:")
    for figure in comparison.figures:
        if figure["a"] is None and figure["b"] is None:
            continue
        delta = f"  ({figure['delta']:+g})" if figure["delta"] else ""
        mark = "*" if figure["changed"] else " "
        echo(f" {mark}{figure['name']}: {figure['a']} → {figure['b']}{delta}")
    changed = comparison.changed_sections
    echo(f"summary sections changed: {', '.join(changed) if changed else 'none'}")
    for section in comparison.sections:
        if section["changed"]:
            echo(f"\n## {section['section']}")
            for line in section["diff"][2:]:
                echo(f"  {line}")
    echo(f"\nmessage fates differing: {comparison.changed_fates} of {len(comparison.fates)}")
    for fate in comparison.fates:
        if fate["changed"]:
            echo(f"  message {fate['index']}: {fate['a'] or '-'} → {fate['b'] or '-'}")


@history_group.command("export")
@click.argument("run_id", type=int)
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
    with _open(ctx) as history:
        # The history file is this command's input: a bundle written over it would destroy
        # every stored run.
        database = history.path
        check_outputs([output], [database])
        bundle = history.export(run_id)
    text = dump_json(bundle, database) + "\n"
    if output is None:
        write_stdout(text)
        return
    write_output(output, text, inputs=[database])
    click.echo(f"exported run {run_id} to {output}", err=True)


@history_group.command("import")
@click.argument("bundle_path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def import_command(ctx: click.Context, bundle_path: Path) -> None:
    """Import a run bundle written by `history export`; prints the new run id."""
    try:
        bundle = json.loads(bundle_path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {bundle_path}: {exc.strerror or exc}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        fail(f"{bundle_path}: not a JSON run bundle ({exc})")
    with _open(ctx) as history:
        try:
            run_id = history.import_bundle(bundle)
        except HistoryError as exc:
            raise HistoryError(f"{bundle_path}: {exc}") from exc
    click.echo(f"imported run {run_id}")


@history_group.command("delete")
@click.argument("run_id", type=int)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete_command(ctx: click.Context, run_id: int, yes: bool) -> None:
    """Delete a run (its conversation stays for other runs)."""
    with _open(ctx) as history:
        run = history.run(run_id, full=False)
        if not yes and not click.confirm(f"delete run {run.id} ({run.label or 'no label'})?"):
            click.echo("nothing deleted")
            return
        history.delete(run_id)
    click.echo(f"deleted run {run_id}")


@history_group.command("label")
@click.argument("run_id", type=int)
@click.argument("label")
@click.option("--note", default=None, help="Also set the run's note.")
@click.pass_context
def label_command(ctx: click.Context, run_id: int, label: str, note: str | None) -> None:
    """Set a run's label (an empty LABEL clears it)."""
    with _open(ctx) as history:
        history.relabel(run_id, label or None, note=note)
    click.echo(f"run {run_id} labelled {label!r}" if label else f"run {run_id} label cleared")
