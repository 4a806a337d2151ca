"""Compare: two saved runs side by side — config, figures, the 13 sections, every message's fate."""

import streamlit as st

from compaction.ui.compare_views import config_table, fate_table, figures, pick_runs, section_diffs
from compaction.ui.frame import current_settings
from compaction.ui.stored_run import HistoryUnavailable, history_call

st.title("⚖️ Compare runs")
current_settings()
try:
    runs = history_call(lambda h: h.runs(limit=None))
except HistoryUnavailable as exc:
    st.error(f"The run history is unavailable, so there is nothing to compare: {exc}")
    st.stop()

picked = pick_runs(runs)
if picked is None:
    st.stop()
a_id, b_id = picked
if a_id == b_id:
    st.info("Pick two different runs.")
    st.stop()
try:
    run_a = history_call(lambda h: h.run(a_id))
    run_b = history_call(lambda h: h.run(b_id))
    comparison = history_call(lambda h: h.compare(a_id, b_id))
except HistoryUnavailable as exc:
    st.warning(str(exc))
    st.stop()

figures(run_a, run_b)
st.divider()
config_table(comparison, run_a, run_b)
st.divider()
section_diffs(comparison)
st.divider()
fate_table(comparison, run_a, run_b)
