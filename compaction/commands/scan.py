"""`compaction scan`: every session under some folders (or every agent session on this machine),
its recorded usage and every compaction its agent made, with distributions per agent.

    compaction scan                       # the sessions the app's "On this machine" lists
    compaction scan ~/corpus --jobs 4 --json scan.json --csv sessions.csv
    compaction scan ~/corpus --scheduler tcp://10.0.0.5:8786

Stored in the run history (tables scan_files, scan_sessions, scan_compactions, scans,
scan_aggregates: `sqlite-utils` and Datasette read them), and incremental: a second scan reads
only the files whose size or mtime changed (`--full` reads all). A corrupt or unreadable file is
a row with its error, never a failed scan; Ctrl-C stops cleanly and keeps what finished.
Exit 0 when the scan ran (also with rows in error), 2 when a path or a setting cannot be used.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from compaction.commands.common import check_outputs, dump_json, fail, write_output
from compaction.commands.tables import aligned
from compaction.commands.terminal import printable
from compaction.errors import CompactionError
from compaction.lab.corpus.records import ERROR, CompactionScan
from compaction.lab.corpus.scanning import CorpusScan, scan_corpus
from compaction.lab.corpus.sources import Source, machine_sources, sources_under
from compaction.lab.corpus.stats import ALL, Distribution

MACHINE = "this machine"
ERRORS_SHOWN = 20


def default_jobs() -> int:
    """Local worker processes when --jobs is not given: one per core."""
    return max(1, os.cpu_count() or 1)


def _tokens(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _spread(dist: Distribution | None, cell: Any = _tokens) -> str:
    """`median (p10–p90)`, or `-` when the group has no value."""
    if dist is None or not dist.n:
        return "-"
    if dist.n == 1:
        return str(cell(dist.median))
    return f"{cell(dist.median)} ({cell(dist.p10)}–{cell(dist.p90)})"


def compaction_lines(result: CorpusScan) -> list[str]:
    """One line per compaction an agent made: where, what kind, how large, what it forgot."""
    rows = []
    for scanned in result.files:
        for session in scanned.sessions:
            for c in session.compactions:
                where = Path(scanned.path).name + (
                    f"#{session.conversation}" if len(scanned.sessions) > 1 else ""
                )
                rows.append(
                    [
                        printable(_short(where), newlines=False),
                        session.agent,
                        c.kind,
                        f"{_tokens(c.trigger_tokens)} ({c.trigger_source})",
                        _share(c.ratio),
                        _tokens(c.summary_tokens),
                        _forgotten(c),
                        "-" if c.pending_request_lost is None else str(c.pending_request_lost),
                    ]
                )
    columns = ["session", "agent", "kind", "trigger tokens", "after/before", "summary"]
    columns += ["forgotten (of facts)", "pending lost"]
    return aligned(columns, rows) if rows else []


def _short(name: str, limit: int = 56) -> str:
    """A long file name cut in the middle (its agent prefix and its extension stay)."""
    if len(name) <= limit:
        return name
    half = (limit - 1) // 2
    return f"{name[:half]}…{name[-half:]}"


def _forgotten(c: CompactionScan) -> str:
    if c.forgotten is None:
        return "summary not readable"
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(c.forgotten_by_kind.items()) if n)
    return f"{c.forgotten} of {c.facts_before}" + (f": {kinds}" if kinds else "")


def aggregate_lines(result: CorpusScan) -> list[str]:
    """Per agent and overall: counts, and median (p10–p90) of each compaction measure."""
    rows = []
    for group in result.groups:
        d = group.distributions or {}
        rows.append(
            [
                group.agent,
                str(group.files),
                str(group.sessions),
                str(group.failed),
                f"{group.compactions} ({group.auto}/{group.manual})",
                _spread(d.get("trigger_tokens")),
                _spread(d.get("ratio"), _share),
                _spread(d.get("forgotten")),
                f"{group.pending_lost} of {group.readable}" if group.readable else "-",
                _spread(d.get("tokens")),
            ]
        )
    columns = ["agent", "files", "sessions", "errors", "compactions (auto/manual)"]
    columns += ["trigger tokens", "after/before", "forgotten", "pending lost", "session tokens"]
    return aligned(columns, rows)


def _csv(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO(newline="")
    names = list(dict.fromkeys(key for row in rows for key in row))
    writer = csv.DictWriter(buffer, fieldnames=names)
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _sources(paths: tuple[str, ...], agents: tuple[str, ...]) -> tuple[list[Source], list[str]]:
    if not paths:
        return machine_sources(agents or None), [MACHINE]
    found = sources_under(paths)
    return found, list(paths)


@click.command("scan")
@click.argument("paths", metavar="[PATH]...", nargs=-1)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    help="Only this agent's sessions on this machine (claude-code, codex, gemini-cli, …); "
    "repeatable. Without PATH only.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Local worker processes [one per core].",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run on this Dask cluster (tcp://HOST:8786) instead of local processes: pip install "
    "'compaction-lab[dask]'. The workers must be able to read the paths.",
)
@click.option("--full", is_flag=True, help="Read every file again, changed or not.")
@click.option(
    "--ours",
    is_flag=True,
    help="Also run our pipeline at each compaction's size (slower): how many facts it keeps.",
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write everything.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), help="One row per session.")
@click.option(
    "--compactions-csv",
    "compactions_out",
    type=click.Path(dir_okay=False),
    help="One row per compaction.",
)
def scan_command(
    paths: tuple[str, ...],
    agents: tuple[str, ...],
    jobs: int | None,
    scheduler: str | None,
    full: bool,
    ours: bool,
    json_out: str | None,
    csv_out: str | None,
    compactions_out: str | None,
) -> None:
    """Scan every session under PATH... (default: every agent session on this machine) for its
    usage and the compactions its agent made; store the rows and per-agent distributions in
    the run history."""
    from compaction.history import History

    if agents and paths:
        fail("--agent picks sessions on this machine: give it without PATH")
    try:
        sources, roots = _sources(paths, agents)
        inputs = [s.path for s in sources if "#" not in s.path]
        check_outputs([json_out, csv_out, compactions_out], inputs)
        history = History()
    except CompactionError as exc:
        fail(str(exc))
    if not sources:
        where = "on this machine" if not paths else "under " + ", ".join(paths)
        fail(f"no session file found {where}")
    workers = jobs or default_jobs()
    with history, click.progressbar(length=len(sources), label="Scanning", file=sys.stderr) as bar:

        def advance(done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.update(done - bar.pos)

        try:
            result = scan_corpus(
                sources,
                roots=roots,
                store=history,
                jobs=workers,
                scheduler=scheduler,
                progress=advance,
                ours=ours,
                full=full,
            )
        except CompactionError as exc:
            fail(str(exc))
    _report(result, history.path)
    if json_out:
        write_output(
            json_out, dump_json(result.to_dict(), json_out, indent=1) + "\n", inputs=inputs
        )
    if csv_out:
        write_output(csv_out, _csv(result.session_rows()), inputs=inputs)
    if compactions_out:
        rows = result.compaction_rows()
        text = _csv(rows) if rows else "path,conversation,agent,number\n"
        write_output(compactions_out, text, inputs=inputs)


def _report(result: CorpusScan, where: Path) -> None:
    everything = next(g for g in result.groups if g.agent == ALL)
    click.echo(
        f"{len(result.files)} file(s), {everything.sessions} session(s): {result.read} read, "
        f"{result.reused} unchanged since the last scan; {everything.compactions} compaction(s) "
        f"recorded by their agents; {result.failed} file(s) in error, "
        f"{everything.not_sessions} not a session ({result.where}, {result.duration_s:.2f} s)"
    )
    if result.stopped:
        click.echo(
            f"stopped: {len(result.not_read)} file(s) not read; what finished is stored "
            "(run the scan again to read the rest)"
        )
    lines = compaction_lines(result)
    if lines:
        click.echo("")
        for line in lines:
            click.echo(line)
    click.echo("")
    click.echo(
        "per agent: median (p10–p90); trigger tokens from the recorded usage, else the agent's "
        "record; forgotten = probe facts of what was compacted away that the agent's context "
        "no longer holds; pending lost = the user's latest request among them"
    )
    for line in aggregate_lines(result):
        click.echo(line)
    errors = [f for f in result.files if f.status == ERROR]
    for scanned in errors[:ERRORS_SHOWN]:
        click.echo(
            f"error: {printable(scanned.path, newlines=False)}: "
            f"{printable(str(scanned.error), newlines=False)}",
            err=True,
        )
    if len(errors) > ERRORS_SHOWN:
        click.echo(
            f"… and {len(errors) - ERRORS_SHOWN} more file(s) in error (--csv has all)", err=True
        )
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    click.echo(
        f"\nscan {result.scan_id} stored in {printable(str(where), newlines=False)} ({stamp})",
        err=True,
    )
