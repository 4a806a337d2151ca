"""The History page's parts: the runs table with its filters, one stored run, the session chart.

A run is shown from what the database holds (its report, phase messages included), through the
same phase views as the Inspect page, so the user sees exactly what they got at the time.
Relabel and delete go through callbacks: they change the database before the page redraws.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots
from streamlit.errors import StreamlitPageNotFoundError

from compaction.history import RunRow, SessionRow
from compaction.phases.pins import Pins
from compaction.result import PHASE_NAMES
from compaction.ui import nav
from compaction.ui.palette import FATE_LABELS, REGION_COLORS
from compaction.ui.params import CONFIG_KEYS, apply_sample_settings
from compaction.ui.phase_views import PHASE_TITLES, render_phase
from compaction.ui.pins_view import PINS_KEY, keep_pins_for_next_conversation, run_pin_specs
from compaction.ui.stored_run import HistoryUnavailable, history_call, result_from_report
from compaction.ui.untrusted import md_escape
from compaction.ui.words import when

RUN_KEY = "run"  # the opened run: bound to `?run=N`, which the Inspect page links to
SESSION_KEY = "history_session"
SEARCH_KEY = "history_search"
LABEL_KEY = "history_label"
CONFIRM_KEY = "_history_confirm_delete"
NOTICE_KEY = "_history_notice"
LIST_LIMIT = 500
#: How much of a label or title a table cell, a menu entry or a heading shows. The history
#: already stores them bounded (200 and 300 characters); this keeps one row one line high.
SHOWN_CHARS = 80


def bounded_text(text: str | None, limit: int = SHOWN_CHARS) -> str:
    """`text` cut to `limit` characters with "…" (whitespace runs, newlines included, as one
    space), for places where a long label or title would stretch the page."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def session_name(session: SessionRow) -> str:
    title = bounded_text(session.title) or "untitled"
    return f"{title} · {session.id[:10]} · {session.run_count} run(s)"


def filters(sessions: list[SessionRow]) -> tuple[str | None, str | None]:
    """The session filter and the search text (None when unset)."""
    by_id = {s.id: s for s in sessions}
    left, right = st.columns([2, 3])
    chosen = left.selectbox(
        "Session",
        ["", *by_id],
        format_func=lambda i: "All sessions" if not i else session_name(by_id[i]),
        key=SESSION_KEY,
    )
    search = right.text_input(
        "Search summaries, labels and notes",
        key=SEARCH_KEY,
        placeholder="e.g. IntegrityError or tasklog/users.py",
    )
    return (chosen or None), (search.strip() or None)


def run_rows(runs: list[RunRow]) -> dict[str, list[Any]]:
    """The runs table: one row per run, newest first."""
    return {
        "run": [r.id for r in runs],
        "time": [when(r.created_at) for r in runs],
        "session": [bounded_text(r.session_title) or r.session_id[:10] for r in runs],
        "label": [bounded_text(r.label) for r in runs],
        "summariser": [r.summarizer for r in runs],
        "tail budget": [r.tail_budget_tokens for r in runs],
        "summary budget": [r.summary_budget_tokens for r in runs],
        "tokens": [f"{r.tokens_before:,} → {r.tokens_after:,}" for r in runs],
        "savings %": [round(r.savings_pct, 1) for r in runs],
        "fallback": [r.fallback_used or ("skipped" if r.skipped else "") for r in runs],
    }


def _open_selected(runs: list[RunRow]) -> None:
    # A click on a table row opens that run (the bound number input follows).
    state = st.session_state.get("history_table")
    rows = list(getattr(getattr(state, "selection", None), "rows", []) or [])
    if rows and rows[0] < len(runs):
        st.session_state[RUN_KEY] = runs[rows[0]].id


def runs_table(runs: list[RunRow]) -> None:
    st.dataframe(
        run_rows(runs),
        hide_index=True,
        key="history_table",
        on_select=lambda: _open_selected(runs),
        selection_mode="single-row",
        column_config={"savings %": st.column_config.NumberColumn(format="%.1f%%")},
    )


def open_run_input() -> int | None:
    value = st.number_input(
        "Open run #", min_value=1, value=None, step=1, key=RUN_KEY, bind="query-params"
    )
    return int(value) if value is not None else None


def _relabel(run_id: int) -> None:
    label = str(st.session_state.get(LABEL_KEY, "")).strip() or None
    try:
        history_call(lambda h: h.relabel(run_id, label))
    except HistoryUnavailable as exc:
        st.session_state[NOTICE_KEY] = ("error", str(exc))
        return
    st.session_state[NOTICE_KEY] = ("success", f"Run #{run_id} relabelled to {label or '(none)'}.")


def _delete(run_id: int) -> None:
    try:
        history_call(lambda h: h.delete(run_id))
    except HistoryUnavailable as exc:
        st.session_state[NOTICE_KEY] = ("error", str(exc))
        return
    st.session_state.pop(CONFIRM_KEY, None)
    st.session_state[RUN_KEY] = None
    st.session_state[NOTICE_KEY] = ("success", f"Run #{run_id} deleted.")


def show_notice() -> None:
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice is None:
        return
    kind, text = notice
    (st.error if kind == "error" else st.success)(text)


def manage_run(run: RunRow) -> None:
    """Relabel (text + button) and delete (with a confirmation step)."""
    if st.session_state.get("_history_label_for") != run.id:
        st.session_state["_history_label_for"] = run.id  # a newly opened run shows its label
        st.session_state[LABEL_KEY] = run.full_label or ""  # saving must not cut it
    left, middle, right = st.columns([3, 1, 1], vertical_alignment="bottom")
    left.text_input("Label", key=LABEL_KEY)
    middle.button("Save label", key="history_relabel", on_click=_relabel, args=(run.id,))
    if st.session_state.get(CONFIRM_KEY) == run.id:
        right.button(
            f"Yes, delete #{run.id}",
            key="history_delete_confirm",
            type="primary",
            on_click=_delete,
            args=(run.id,),
        )
        st.warning(f"Delete run #{run.id} for good? Click “Yes, delete #{run.id}” to confirm.")
        st.button(
            "Cancel",
            key="history_delete_cancel",
            on_click=st.session_state.pop,
            args=(CONFIRM_KEY, None),
        )
    else:
        right.button(
            "Delete run",
            key="history_delete",
            on_click=st.session_state.__setitem__,
            args=(CONFIRM_KEY, run.id),
        )


def render_run(run: RunRow, original: list[Any]) -> None:
    """One stored run: figures, fates, orphan fixes and every phase view, from its report."""
    assert run.report is not None
    result = result_from_report(run.report)
    label = f" · {md_escape(bounded_text(run.label))}" if run.label else ""
    st.subheader(f"Run #{run.id}{label}")
    title = md_escape(bounded_text(run.session_title) or run.session_id[:10])
    st.caption(
        f"{when(run.created_at)} · {title} · summariser {md_escape(run.summarizer)}"
        + (f" ({md_escape(run.model)})" if run.model else "")
        + (f" · focus: {md_escape(run.focus)}" if run.focus else "")
    )
    _reopen_with_settings(run)
    columns = st.columns(4)
    columns[0].metric("Tokens before", f"{run.tokens_before:,}")
    columns[1].metric("Tokens after", f"{run.tokens_after:,}")
    columns[2].metric("Savings", f"{run.savings_pct:.1f}%")
    columns[3].metric("Messages", f"{run.messages_before} → {run.messages_after}")
    if run.skipped:
        st.warning(f"Compaction skipped: {md_escape(run.skip_reason)}.")
    if run.fallback_used:
        st.warning(
            f"Fallback used: **{md_escape(run.fallback_used)}** ({md_escape(run.fallback_reason)})."
        )
    counts: dict[str, int] = {}
    for index in range(run.messages_before):
        fate = result.fates.get(index, "kept")
        counts[fate] = counts.get(fate, 0) + 1
    st.dataframe(
        {"fate": [FATE_LABELS.get(f, f) for f in counts], "messages": list(counts.values())},
        hide_index=True,
        key="stored_fate_counts",
    )
    if result.orphan_fixes:
        st.markdown(f"**Orphan fixes** ({len(result.orphan_fixes)})")
        st.dataframe(
            [fix.to_dict() for fix in result.orphan_fixes], hide_index=True, key="stored_fixes"
        )
    names = [p.name for p in result.phases if p.name in PHASE_NAMES]
    if not names:
        st.info("This run's report holds no phases.")
        return
    default = "summarize" if "summarize" in names else names[-1]
    shown = st.segmented_control(
        "Phase",
        names,
        default=default,
        format_func=lambda n: PHASE_TITLES.get(n, n),
        key=f"stored_phase_{run.id}",
    )
    render_phase(result, shown or default, original)


REOPEN_KEY = "_history_reopen"  # the run whose conversation to open in Inspect, set by a click


def _use_run_settings(run_id: int, config: dict[str, Any]) -> None:
    # A callback: the sidebar's widgets are not drawn yet, so their values may be set.
    apply_sample_settings(
        {name: value for name, value in config.items() if name in CONFIG_KEYS and name != "pins"}
    )
    st.session_state[PINS_KEY] = run_pin_specs(config)
    keep_pins_for_next_conversation()  # they are this run's conversation's numbers
    st.session_state[REOPEN_KEY] = run_id


def _reopen_with_settings(run: RunRow) -> None:
    """The run's pins, and a button opening its conversation in Inspect with its settings and
    pins, so a run is repeated as it was (a pin kept only in a URL would be lost)."""
    specs = run_pin_specs(run.config)
    if specs:
        st.caption(
            "📌 Pinned in this run: " + md_escape("; ".join(Pins.from_specs(specs).describe()))
        )
    st.button(
        "Open in Inspect with this run's settings" + (" and pins" if specs else ""),
        key="history_reopen",
        on_click=_use_run_settings,
        args=(run.id, run.config),
    )
    run_id = st.session_state.pop(REOPEN_KEY, None)
    if run_id is None:
        return
    page = st.session_state.get(nav.PAGES_KEY, {}).get("inspect") or "app_pages/inspect.py"
    try:
        st.switch_page(page, query_params={"from_run": str(run_id)})
    except StreamlitPageNotFoundError:
        # Without app.py's navigation (an AppTest of this page alone) there is no page to open.
        st.info(f"Open run #{run_id}'s conversation on the Inspect page.")


def session_chart(points: list[dict[str, Any]], title: str) -> go.Figure:
    """Savings against the tail budget and the summary budget, one marker per run."""
    figure = make_subplots(
        rows=1, cols=2, shared_yaxes=True, subplot_titles=("tail budget", "summary budget")
    )
    hover = [
        f"run #{p['run_id']}"
        f"{' · ' + html.escape(bounded_text(p['label'])) if p['label'] else ''}<br>"
        f"{html.escape(str(p['summarizer']))} · {p['savings_pct']:.1f}% saved"
        for p in points
    ]
    for column, field, color in (
        (1, "tail_budget_tokens", REGION_COLORS["tail"]),
        (2, "summary_budget_tokens", REGION_COLORS["summary"]),
    ):
        figure.add_trace(
            go.Scatter(
                x=[p[field] for p in points],
                y=[p["savings_pct"] for p in points],
                mode="markers",
                marker={"size": 11, "color": color},
                name=field.replace("_tokens", "").replace("_", " "),
                hovertext=hover,
                hoverinfo="text",
            ),
            row=1,
            col=column,
        )
        values = [p[field] for p in points if p[field] is not None]
        if values and min(values) == max(values):
            # One budget value only: plotly would zoom to ±0.001 of it (12.799k, 12.7995k…).
            centre = values[0]
            span = max(abs(centre) * 0.2, 1)
            figure.update_xaxes(range=[centre - span, centre + span], row=1, col=column)
        figure.update_xaxes(title_text="tokens", tickformat=",d", row=1, col=column)
    figure.update_yaxes(title_text="savings %", row=1, col=1)
    figure.update_layout(
        height=320,
        title=bounded_text(title, 160),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        showlegend=False,
    )
    return figure
