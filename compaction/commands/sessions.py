"""`compaction sessions`: the agent sessions stored on this machine, newest first.

Listing stats files only; messages, tokens and the agent's recorded compactions are counted by
importing each listed session once and cached by path, size and mtime (`--no-count` skips it).
"""

from __future__ import annotations

import json
import time

import click

from compaction.commands.common import json_printable
from compaction.commands.terminal import printable
from compaction.formats.local_sessions import (
    AGENTS,
    ROOTS,
    default_cache,
    describe,
    list_sessions,
    root_of,
)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:,.1f} KB"
    return f"{size / 1024 / 1024:,.1f} MB"


def _when(mtime: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))


@click.command("sessions")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(AGENTS),
    help="Only this agent's sessions; repeatable.",
)
@click.option("--limit", type=int, default=50, show_default=True, help="Newest N (0: all).")
@click.option("--no-count", is_flag=True, help="List files only; do not import them to count.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session.")
def sessions_command(agents: tuple[str, ...], limit: int, no_count: bool, as_json: bool) -> None:
    """List the agent sessions on this machine (Claude Code, Codex, Gemini CLI, hermes, Copilot
    CLI, Qwen Code, iFlow CLI, OpenCode, Cline, Roo Code, Kilo Code), newest first, with messages,
    tokens and the compactions the agent recorded."""
    found = list_sessions(agents or None)
    if limit > 0:
        found = found[:limit]
    if not found:
        roots = ", ".join(f"{root.agent} {root_of(root)} (${root.variable})" for root in ROOTS)
        click.echo(f"no agent sessions found under: {printable(roots, newlines=False)}", err=True)
        return
    cache = None if no_count else default_cache()
    rows = []
    for session in found:
        facts = describe(session, cache) if cache is not None else None
        rows.append((session, facts))
    if cache is not None:
        cache.save()
    if as_json:
        for session, facts in rows:
            record = {
                "path": str(session.path),
                "agent": session.agent,
                "project": session.project,
                "modified": session.modified,
                "size": session.size,
            }
            if facts is not None:
                record.update(
                    messages=facts.messages,
                    tokens=facts.tokens,
                    compactions=facts.compactions,
                    title=facts.title,
                    error=facts.error,
                )
            click.echo(json_printable(json.dumps(record, ensure_ascii=False)))
        return
    click.echo(
        f"{'modified':<16}  {'agent':<11}  {'size':>9}  {'msgs':>6}  {'tokens':>9}  "
        f"{'compact':>7}  project / path"
    )
    for session, facts in rows:
        if facts is None:
            counts = f"{'':>6}  {'':>9}  {'':>7}"
        elif facts.error is not None:
            counts = f"{'—':>6}  {'—':>9}  {'—':>7}"
        else:
            counts = (
                f"{facts.messages or 0:>6,}  {facts.tokens or 0:>9,}  {facts.compactions or 0:>7}"
            )
        click.echo(
            f"{_when(session.modified):<16}  {session.agent:<11}  {_size(session.size):>9}  "
            f"{counts}  {printable(str(session.project), newlines=False)}"
        )
        click.echo(f"{'':<16}  {printable(str(session.path), newlines=False)}")
        if facts is not None and facts.error is not None:
            click.echo(f"{'':<16}  cannot import: {printable(facts.error, newlines=False)}")
