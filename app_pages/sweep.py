"""Sweep: measure a grid of settings on real sessions, read the savings/recall frontier, copy the
recommended configuration, open any point in Inspect; sweeps are saved and can be reopened."""

import streamlit as st

from compaction.errors import CompactionError
from compaction.ui.frame import current_settings, require_config
from compaction.ui.stored_run import HistoryUnavailable, history_call
from compaction.ui.sweep import form
from compaction.ui.sweep.results import (
    SweepView,
    current_view,
    follow_inspect_link,
    render_results,
    render_saved,
    show,
)
from compaction.ui.untrusted import md_escape

follow_inspect_link()
st.title("🎛️ Sweep")
settings = current_settings()
with st.expander("Saved sweeps", expanded=current_view() is None):
    render_saved()
require_config(settings)

st.markdown("#### What to sweep")
grid = form.choose_grid()
if grid.error:
    st.error(f"Invalid range: {md_escape(grid.error)}")
else:
    st.caption(f"**{grid.points:,} point(s)** per session")
    if grid.points > form.MANY_POINTS:
        st.warning(f"{grid.points:,} points run one after another here: expect a wait.")

st.markdown("#### On which sessions")
sources = form.choose_sessions()
context_length = st.number_input(
    "Base context length (tokens)",
    min_value=1_000,
    step=1_000,
    value=settings.config.context_length,
    key="sweep_context_length",
    help="The window every point assumes (other settings come from the sidebar).",
)
base = settings.config.replace(context_length=int(context_length))
save_col, label_col = st.columns([1, 2])
save = save_col.toggle("Save to history", value=True, key="sweep_save")
label = label_col.text_input("Label (optional)", key="sweep_label")

ready = grid.error is None and bool(sources)
if not sources:
    st.info("Choose at least one session: the loaded one, a sample or one from the history.")
use_llm = settings.summarizer == "llm"
key = form.signature(grid, sources, base, settings.summarizer_key())
run_now = False
if st.button("Run sweep", key="sweep_run", type="primary", disabled=not ready):
    try:
        conversations = form.load_sources(sources)
        if use_llm:
            with st.spinner("Estimating the LLM calls (nothing is sent)…"):
                form.remember_estimate(
                    key, form.llm_estimate(conversations, grid.specs, base, settings)
                )
        else:
            run_now = True
    except (CompactionError, HistoryUnavailable) as exc:
        st.error(f"Cannot run the sweep: {md_escape(exc)}")

if use_llm and (estimate := form.pending_estimate(key)) is not None:
    st.warning(f"This sweep makes {estimate}. Nothing has been sent yet.")
    confirm_col, cancel_col = st.columns(2)
    if confirm_col.button("Confirm and call the model", key="sweep_confirm", type="primary"):
        form.forget_estimate()
        run_now = True
    if cancel_col.button("Cancel", key="sweep_cancel"):
        form.forget_estimate()
        st.rerun()

if run_now:
    try:
        conversations = form.load_sources(sources)
        result = form.run_sweep(conversations, grid.specs, base, settings)
    except (CompactionError, HistoryUnavailable) as exc:
        st.error(f"The sweep failed: {md_escape(exc)}")
    else:
        sweep_id = None
        if save:
            target = float(st.session_state.get("sweep_target", 50))
            try:
                sweep_id = history_call(
                    lambda h: h.record_sweep(
                        result, label=label.strip() or None, min_savings_pct=target
                    )
                )
            except HistoryUnavailable as exc:
                st.warning(f"The sweep ran but was not saved: {md_escape(exc)}")
        show(SweepView(result, sweep_id))
        if sweep_id is not None:
            # The saved sweeps' list was drawn above, before this one was saved: draw again.
            st.rerun()

view = current_view()
if view is not None:
    st.divider()
    render_results(view)
