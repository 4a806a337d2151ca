"""History: every saved run, searchable; open one to see it again as recorded; relabel, delete,
and chart savings against the budgets across one session's runs."""

import html

import streamlit as st

from compaction.ui.frame import current_settings
from compaction.ui.history_views import (
    filters,
    manage_run,
    open_run_input,
    render_run,
    runs_table,
    session_chart,
    show_notice,
)
from compaction.ui.stored_run import HistoryUnavailable, history_call

st.title("🗂️ History")
current_settings()
show_notice()
try:
    sessions = history_call(lambda h: h.sessions())
except HistoryUnavailable as exc:
    st.error(f"The run history is unavailable, so this page has nothing to show: {exc}")
    st.stop()

session_id, search = filters(sessions)
runs = history_call(lambda h: h.runs(session=session_id, search=search, limit=500))
st.caption(f"{len(runs)} run(s)" + (" (search)" if search else ""))
if runs:
    runs_table(runs)
elif not sessions:
    st.info("No runs yet: compact a conversation on the Inspect page (history saving is on).")

run_id = open_run_input()
if run_id is not None:
    try:
        run = history_call(lambda h: h.run(run_id))
        original = history_call(lambda h: h.session(run.session_id)).messages or []
    except HistoryUnavailable as exc:
        st.warning(str(exc))
    else:
        manage_run(run)
        render_run(run, original)

chart_session = session_id or (sessions[0].id if sessions else None)
if chart_session:
    st.divider()
    points = history_call(lambda h: h.session_chart(chart_session))
    title = next((s.title for s in sessions if s.id == chart_session), None) or chart_session[:10]
    if points:
        st.plotly_chart(
            session_chart(points, f"Savings across the runs of “{html.escape(title)}”"),
            key="session_chart",
        )
