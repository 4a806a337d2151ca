"""The Corpus page's helpers: run a scan with a progress bar, filter its table, chart its
distributions per agent, open a row in Inspect or Audit, and sweep the selection.

The scan is the library's (`lab/corpus/`), stored in the run history; this page only draws it.
Distributions are box plots with every point shown: a corpus may hold three compactions or
three thousand, and a box alone would hide the first case.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from compaction.lab.corpus.records import ERROR, FileScan
from compaction.lab.corpus.scanning import CorpusScan, scan_corpus, select
from compaction.lab.corpus.sources import machine_sources, sources_under
from compaction.lab.corpus.stats import ALL, GroupStats, aggregate
from compaction.lab.corpus.sweeping import CorpusSweep, sweep_corpus
from compaction.lab.sweep.grid import parse_grid
from compaction.lab.sweep.run import Sweep
from compaction.ui import nav
from compaction.ui.palette import DISTRIBUTION
from compaction.ui.stored_run import history_call
from compaction.ui.sweep.charts import frontier_scatter

PICK_KEY = "corpus_table"
GO_KEY = "_corpus_go"
PAGES = {"inspect": "app_pages/inspect.py", "audit": "app_pages/audit.py"}
#: Below this many files to read, one process is faster than starting spawned workers.
POOL_FROM_FILES = 16

#: Each chart: (title, metric on a compaction row, axis title).
CHARTS: tuple[tuple[str, str, str], ...] = (
    ("Tokens at trigger", "trigger_tokens", "tokens"),
    ("After / before", "ratio", "tokens after ÷ tokens before"),
    ("Facts forgotten per compaction", "forgotten", "probe facts"),
)


def auto_jobs(files: int) -> int:
    """Local workers for a scan from the app: spawned workers cost about a second each to
    start (Streamlit's threads rule out fork), so small scans run in this process."""
    return 1 if files < POOL_FROM_FILES else max(1, os.cpu_count() or 1)


def run_scan(folders: Sequence[str], full: bool = False) -> CorpusScan:
    """Scan the folders (none: this machine's sessions) with a progress bar; stored."""
    roots = list(folders) or ["this machine"]
    sources = sources_under(list(folders)) if folders else machine_sources()
    bar = st.progress(0.0, text=f"Scanning {len(sources)} file(s)…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Scanned {done} of {total} file(s)")

    result = history_call(
        lambda history: scan_corpus(
            sources,
            roots=roots,
            store=history,
            jobs=auto_jobs(len(sources)),
            progress=progress,
            full=full,
        )
    )
    bar.empty()
    return result


def latest_scan() -> tuple[Any, list[FileScan]] | None:
    """The latest stored scan and its files, or None when nothing was scanned yet."""
    if not history_call(lambda history: history.scans(limit=1)):
        return None
    return history_call(lambda history: history.scan_selection())


def session_rows(files: Sequence[FileScan]) -> list[dict[str, Any]]:
    """One row per conversation, and one per file that yielded none (with its error).

    Files in error come first: they are what a person scanning a corpus must act on, and a
    grid shows only its first screenful of rows until it is scrolled.
    """
    rows: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for scanned in files:
        base = {
            "path": scanned.path,
            "file": Path(scanned.path).name,
            "modified": datetime.fromtimestamp(scanned.mtime),
            "size KB": round(scanned.size / 1024, 1),
            "status": scanned.status,
            "error": scanned.error,
        }
        if not scanned.sessions:
            row = {**base, "agent": scanned.agent or "", "conversation": None}
            (failed if scanned.error else rows).append(row)
        for session in scanned.sessions:
            first = session.compactions[0] if session.compactions else None
            rows.append(
                {
                    **base,
                    "agent": session.agent,
                    "conversation": session.conversation,
                    "title": session.title,
                    "model": session.model,
                    "messages": session.messages,
                    "tokens": session.tokens,
                    "calls": session.calls,
                    "compactions": len(session.compactions),
                    "trigger tokens": first.trigger_tokens if first else None,
                    "forgotten": first.forgotten if first else None,
                }
            )
    return failed + rows


def failed_files(files: Sequence[FileScan]) -> list[FileScan]:
    """The files whose scan ended in an error, in scan order."""
    return [scanned for scanned in files if scanned.error and not scanned.sessions]


def compaction_rows(files: Sequence[FileScan]) -> list[dict[str, Any]]:
    return [
        {"agent": session.agent, "file": Path(scanned.path).name, **compaction.row()}
        for scanned in files
        for session in scanned.sessions
        for compaction in session.compactions
    ]


def filter_files(
    files: Sequence[FileScan],
    agents: Sequence[str],
    since: datetime | None,
    min_kb: float,
    compacted: bool,
    errors_only: bool = False,
) -> list[FileScan]:
    """The files the filters keep (a file with sessions of other agents only is dropped)."""
    kept = []
    for scanned in files:
        if since is not None and datetime.fromtimestamp(scanned.mtime) < since:
            continue
        if scanned.size / 1024 < min_kb:
            continue
        if errors_only and scanned.status != ERROR:
            continue
        file_agents = {s.agent for s in scanned.sessions} or {scanned.agent or ""}
        if agents and not file_agents & set(agents):
            continue
        if compacted and not scanned.compactions:
            continue
        kept.append(scanned)
    return kept


def group_rows(groups: Sequence[GroupStats]) -> list[dict[str, Any]]:
    rows = []
    for group in groups:
        d = group.distributions or {}
        rows.append(
            {
                "agent": group.agent,
                "files": group.files,
                "sessions": group.sessions,
                "errors": group.failed,
                "compactions": group.compactions,
                "auto": group.auto,
                "manual": group.manual,
                "median trigger tokens": d["trigger_tokens"].median if d else None,
                "median after/before": d["ratio"].median if d else None,
                "median forgotten": d["forgotten"].median if d else None,
                "pending lost": group.pending_lost,
            }
        )
    return rows


def distribution_chart(
    rows: Sequence[dict[str, Any]], metric: str, title: str, axis: str
) -> go.Figure:
    """One box per agent, every compaction a point."""
    figure = go.Figure()
    agents = sorted({str(row["agent"]) for row in rows if row.get(metric) is not None})
    for agent in agents:
        values = [
            row[metric] for row in rows if row["agent"] == agent and row.get(metric) is not None
        ]
        figure.add_trace(
            go.Box(
                y=values,
                name=agent,
                boxpoints="all",
                jitter=0.3,
                marker={"color": DISTRIBUTION},
                line={"color": DISTRIBUTION},
                hovertext=[
                    str(row["file"])
                    for row in rows
                    if row["agent"] == agent and row.get(metric) is not None
                ],
            )
        )
    figure.update_layout(
        title={"text": title},
        height=340,
        showlegend=False,
        yaxis={"title": axis},
        margin={"l": 40, "r": 10, "t": 50, "b": 40},
    )
    return figure


def request_open(rows: Sequence[dict[str, Any]], page: str) -> None:
    """Button callback: remember which page to open the selected row's session in."""
    selection = st.session_state.get(PICK_KEY)
    chosen = list(getattr(getattr(selection, "selection", None), "rows", []) or [])
    if not chosen and isinstance(selection, dict):
        chosen = list(selection.get("selection", {}).get("rows", []))
    if chosen and chosen[0] < len(rows):
        st.session_state[GO_KEY] = (page, str(rows[chosen[0]]["path"]))


def follow_open() -> None:
    """Switch to Inspect or Audit with the chosen session (switch_page cannot run in a callback).
    Without app.py's navigation (AppTest of the page alone) the request stays visible."""
    target = st.session_state.pop(GO_KEY, None)
    if target is None:
        return
    page_name, path = target
    page = st.session_state.get(nav.PAGES_KEY, {}).get(page_name, PAGES[page_name])
    try:
        st.switch_page(page, query_params={"session": path})
    except StreamlitPageNotFoundError:
        st.session_state["_corpus_opened"] = target
        st.info(f"Open {path} on the {page_name.title()} page.")


def recompute(files: Sequence[FileScan]) -> list[GroupStats]:
    """The per-agent aggregates of what the filters keep."""
    return aggregate(list(files))


def everything(groups: Sequence[GroupStats]) -> GroupStats:
    return next(group for group in groups if group.agent == ALL)


def run_corpus_sweep(
    files: Sequence[FileScan], specs: Sequence[str], context_length: int
) -> CorpusSweep:
    """Sweep the grid over the filtered sessions (a progress bar per file); the sweep is saved
    in the history, so the Sweep page can reopen it."""
    from compaction.config import CompactionConfig

    chosen = {path: sorted(numbers) for path, numbers in select(files).items()}
    bar = st.progress(0.0, text=f"Sweeping {len(chosen)} file(s)…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total if total else 1.0, text=f"Swept {done} of {total} file(s)")

    result = sweep_corpus(
        chosen,
        parse_grid(list(specs)),
        CompactionConfig(context_length=context_length),
        jobs=auto_jobs(len(chosen)),
        progress=progress,
    )
    bar.empty()
    history_call(lambda history: history.record_sweep(result.sweep, label="corpus sweep"))
    return result


def frontier_chart(sweep: Sweep, min_savings_pct: float) -> go.Figure:
    best = sweep.recommend(min_savings_pct)
    return frontier_scatter(
        sweep.rows(),
        sweep.parameters,
        [point.index for point in sweep.frontier()],
        best.index if best is not None else None,
    )
