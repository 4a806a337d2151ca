"""The Sweep page's results: charts, the frontier, the recommendation, a point opened in Inspect.

Everything here reads a `Sweep` (fresh, or reopened from the history with `Sweep.from_dict`), so
a saved sweep looks exactly as it did when it ran. The recommendation is the library's rule
(`Sweep.recommend`: best recall at the savings target, valid points only) and its snippets are the
library's, so the page, the CLI and the stored recommendation never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from compaction.config import CompactionConfig
from compaction.lab.sweep.run import Sweep, SweepPoint
from compaction.messages import Message
from compaction.ui import nav
from compaction.ui.conversation_link import link_params
from compaction.ui.cost_views import loaded_model, render_dollars_axis
from compaction.ui.params import CONFIG_KEYS, apply_sample_settings
from compaction.ui.snippets_view import render_snippets
from compaction.ui.state import get_loaded, make_loaded, set_loaded
from compaction.ui.stored_run import HistoryUnavailable, history_call
from compaction.ui.sweep.charts import frontier_scatter, heatmap, metric_lines
from compaction.ui.untrusted import md_escape
from compaction.ui.words import when

VIEW_KEY = "_sweep_view"
POINT_KEY = "sweep_point"
SCATTER_KEY = "sweep_scatter"
GO_INSPECT_KEY = "_sweep_go_inspect"
INSPECT_PAGE = "app_pages/inspect.py"


@dataclass
class SweepView:
    """The sweep on screen: its points, and its id once it is in the history."""

    sweep: Sweep
    sweep_id: int | None = None


def current_view() -> SweepView | None:
    view = st.session_state.get(VIEW_KEY)
    return view if isinstance(view, SweepView) else None


def show(view: SweepView) -> None:
    """Put `view` on screen (the picked point starts again at the recommendation)."""
    st.session_state[VIEW_KEY] = view
    st.session_state.pop(POINT_KEY, None)


def _selected_point_from_chart() -> None:
    # The chart's on_select callback: runs before the script, so it may set the point picker.
    state = st.session_state.get(SCATTER_KEY)
    points = state["selection"]["points"] if state else []
    if not points:
        return
    custom = points[0].get("customdata")
    index = custom[0] if isinstance(custom, list) else custom
    if index is not None:
        st.session_state[POINT_KEY] = int(index)


def inspect_params(point: SweepPoint) -> dict[str, str]:
    """The Inspect page's URL parameters (the sidebar's `p_<field>` keys) for a point."""
    config = CompactionConfig.from_dict(point.config)
    return {
        CONFIG_KEYS[name]: str(getattr(config, name)) for name in CompactionConfig.field_names()
    }


def _conversation(view: SweepView, position: int) -> tuple[list[Message], str, str | None, str]:
    """The swept conversation's messages, title, format and source (a stored conversation
    is named by its history id, so the Inspect page's link reopens it)."""
    sweep = view.sweep
    meta = sweep.conversations[position] if position < len(sweep.conversations) else {}
    title = str(meta.get("title") or f"conversation {position + 1}")
    session_ids = sweep.session_ids or []
    stored = session_ids[position] if position < len(session_ids) else None
    source = f"stored:{stored}" if stored else f"sweep:{view.sweep_id or 'new'}"
    if position < len(sweep.messages):
        return sweep.messages[position], title, meta.get("format"), source
    if stored is None:
        raise HistoryUnavailable("this sweep's conversations were not stored with it")
    row = history_call(lambda h: h.session(stored))
    return row.messages or [], row.title or title, row.format or meta.get("format"), source


def _open_in_inspect(view: SweepView, point: SweepPoint, position: int) -> None:
    # A callback: widget values (the sidebar's p_* keys) may only be set before they are drawn.
    try:
        messages, title, fmt, source = _conversation(view, position)
    except HistoryUnavailable as exc:
        st.session_state["_sweep_open_error"] = str(exc)
        return
    loaded = get_loaded()
    if loaded is None or loaded.messages != messages:
        set_loaded(make_loaded(messages, title, fmt or "openai", source))
    apply_sample_settings(CompactionConfig.from_dict(point.config).to_dict())
    st.session_state[GO_INSPECT_KEY] = True


def follow_inspect_link() -> None:
    """Switch to Inspect when "Open in Inspect" was clicked (switch_page cannot run in a callback).

    The settings are already in the sidebar's widgets, which are bound to the URL's `p_<field>`
    parameters, so Inspect's URL carries them and the view can be shared. `switch_page` without
    `query_params` clears the URL's parameters, which Streamlit refuses while widgets are bound
    to them (StreamlitAPIException); given the parameters to keep (the conversation's), it
    replaces the unbound ones and the bound widgets write theirs back on the next page. When
    the page runs without app.py's navigation (a page file run directly, as in AppTest) there
    is no Inspect page to switch to: the settings stay applied.
    """
    if not st.session_state.pop(GO_INSPECT_KEY, False):
        return
    page = st.session_state.get(nav.PAGES_KEY, {}).get("inspect", INSPECT_PAGE)
    try:
        st.switch_page(page, query_params=link_params())
    except StreamlitPageNotFoundError:
        st.info("The point's settings are applied: open the Inspect page to see them.")


def _charts(sweep: Sweep, rows: list[dict[str, Any]]) -> None:
    parameters = sweep.parameters
    if len(parameters) == 1:
        st.plotly_chart(metric_lines(rows, parameters[0]), key="sweep_lines")
    elif len(parameters) == 2:
        left, right = st.columns(2)
        with left:
            st.plotly_chart(
                heatmap(rows, parameters[0], parameters[1], "savings_pct"), key="sweep_heat_savings"
            )
        with right:
            st.plotly_chart(
                heatmap(rows, parameters[0], parameters[1], "recall"), key="sweep_heat_recall"
            )
    else:
        st.caption(f"{len(parameters)} parameters: see the scatter and the table.")


#: Settings that only act through the summary: with no summary written they cannot change a thing.
SUMMARY_SETTINGS = {"summary_ratio", "summary_min_tokens", "summary_max_tokens"}


def _no_summary_note(sweep: Sweep) -> None:
    """Say so when no point wrote a summary: a swept summary setting then looks broken (flat)."""
    if not sweep.points or any(point.summary_tokens for point in sweep.points):
        return
    flat = sorted(SUMMARY_SETTINGS & set(sweep.parameters))
    effect = f" so {', '.join(flat)} changes nothing here" if flat else ""
    st.info(
        "No point of this sweep wrote a summary: Phase 1's one-line tool outputs alone made "
        f"everything after the head fit the tail budget,{effect}. A smaller context length or "
        "tail ratio leaves a middle to summarise."
    )


def _table(
    points: list[SweepPoint], parameters: list[str], marked: int | None
) -> list[dict[str, Any]]:
    return [
        {
            "": "★" if point.index == marked else "",
            "point": point.index,
            **{name: point.params[name] for name in parameters},
            "tokens after": point.tokens_after,
            "savings %": round(point.savings_pct, 1),
            "recall %": round(point.recall * 100, 1),
            "recall (structural) %": (
                round(point.recall_structural * 100, 1)
                if point.recall_structural is not None
                else None
            ),
            "summary tokens": point.summary_tokens,
            "valid": point.valid,
        }
        for point in points
    ]


def _recommendation(sweep: Sweep, target: float) -> SweepPoint | None:
    best = sweep.recommend(target)
    if best is None:
        reach = max((p.savings_pct for p in sweep.points), default=0.0)
        st.warning(
            f"No valid point saves {target:g}% or more (the most is {reach:.1f}%): "
            "lower the target or widen the ranges."
        )
        return None
    recommendation = sweep.recommendation(target) or {}
    snippets: dict[str, str] = recommendation.get("snippets", {})
    st.success(
        f"Recommended for ≥ {target:g}% savings: **{best.label}** — saves "
        f"{best.savings_pct:.1f}%, probe recall {best.recall * 100:.1f}%."
    )
    render_snippets(snippets)
    return best


def _point_panel(view: SweepView, default: int) -> None:
    sweep = view.sweep
    by_index = {point.index: point for point in sweep.points}
    if st.session_state.get(POINT_KEY) not in by_index:
        st.session_state[POINT_KEY] = default
    index = st.selectbox(
        "Point (or click one in the chart)",
        list(by_index),
        format_func=lambda i: f"{i}: {by_index[i].label}",
        key=POINT_KEY,
    )
    point = by_index[index]
    st.caption(
        f"{point.label}: {point.tokens_before:,} → {point.tokens_after:,} tokens, "
        f"saves {point.savings_pct:.1f}%, recall {point.recall * 100:.1f}%"
    )
    titles = [
        str(c.get("title") or f"conversation {i + 1}") for i, c in enumerate(sweep.conversations)
    ]
    position = 0
    if len(titles) > 1:
        position = st.selectbox(
            "Conversation to open",
            range(len(titles)),
            format_func=titles.__getitem__,
            key="sweep_open_conversation",
        )
    st.button(
        "Open this configuration in Inspect",
        key="sweep_open_inspect",
        on_click=_open_in_inspect,
        args=(view, point, position),
        type="primary",
    )
    if error := st.session_state.pop("_sweep_open_error", None):
        st.warning(f"Cannot open it in Inspect: {md_escape(error)}")


def render_results(view: SweepView) -> None:
    """Charts, the frontier, the recommendation and the point picker of `view`."""
    sweep = view.sweep
    rows = sweep.rows()
    parameters = sweep.parameters
    frontier = sweep.frontier()
    saved = f" · saved as sweep #{view.sweep_id}" if view.sweep_id else ""
    st.subheader(f"{len(sweep.points)} points over {len(sweep.conversations)} conversation(s)")
    st.caption(
        f"{' × '.join(parameters)} · summariser {sweep.summarizer} · "
        f"{sweep.duration_s:.1f} s{saved}"
    )
    _charts(sweep, rows)
    _no_summary_note(sweep)
    target = float(
        st.slider(
            "Savings target (%)",
            0,
            100,
            50,
            step=5,
            key="sweep_target",
            help="The recommendation is the best recall among points saving at least this.",
        )
    )
    best = sweep.recommend(target)
    st.plotly_chart(
        frontier_scatter(
            rows, parameters, [p.index for p in frontier], best.index if best else None
        ),
        key=SCATTER_KEY,
        on_select=_selected_point_from_chart,
        selection_mode="points",
    )
    st.markdown(f"**Pareto frontier** ({len(frontier)} of {len(sweep.points)} points)")
    st.dataframe(_table(frontier, parameters, best.index if best else None), hide_index=True)
    _recommendation(sweep, target)
    with st.expander("Dollars: recall against what one compaction costs"):
        render_dollars_axis(rows, "point", loaded_model(get_loaded()), "sweep_price_model")
    st.divider()
    _point_panel(view, best.index if best else frontier[-1].index)
    with st.expander(f"All {len(sweep.points)} points"):
        st.dataframe(rows, hide_index=True)


def render_saved() -> None:
    """The saved sweeps, newest first, with a button to reopen one."""
    try:
        stored = history_call(lambda history: history.sweeps())
    except HistoryUnavailable as exc:
        st.caption(f"Saved sweeps are unavailable: {exc}")
        return
    if not stored:
        st.caption("No saved sweeps yet.")
        return
    labels = {
        row.id: f"#{row.id} · {when(row.created_at)} · "
        f"{row.label or ' × '.join(row.grid)} · {row.point_count} points"
        for row in stored
    }
    chosen = st.selectbox(
        "Saved sweeps", list(labels), format_func=labels.__getitem__, key="sweep_saved"
    )
    if st.button("Reopen", key="sweep_reopen"):
        try:
            row = history_call(lambda history: history.sweep(int(chosen)))
        except HistoryUnavailable as exc:
            st.warning(md_escape(exc))
            return
        if row.sweep is not None:
            show(SweepView(row.sweep, row.id))
