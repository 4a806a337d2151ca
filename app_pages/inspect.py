"""Inspect (the default page): load a conversation, see its regions, step through the phases."""

import streamlit as st

from compaction.ui import compute
from compaction.ui.final_view import render_final, run_llm_now
from compaction.ui.frame import current_settings, require_config
from compaction.ui.loader import render_loader
from compaction.ui.overview_view import render_overview
from compaction.ui.peer_compare import render_peer_compare
from compaction.ui.phase_views import render_phase
from compaction.ui.skip_advice import skip_advice
from compaction.ui.snippets_view import render_settings_export
from compaction.ui.stepper import (
    CLEANUP_STEP,
    LLM_REQUEST_KEY,
    RESULT_LABEL,
    go_to,
    phase_picker,
    render_stepper,
)
from compaction.ui.untrusted import md_escape

st.title("🔍 Inspect")
settings = current_settings()
loaded = render_loader()
if loaded is None:
    st.info("Load a sample, upload an agent transcript or paste JSON to begin.")
    st.stop()
config = require_config(settings)

render_overview(loaded, settings)
render_settings_export(
    config, agent_model_summary=settings.summarizer == "llm", focus=settings.focus
)
st.divider()

use_llm = settings.summarizer == "llm"
if use_llm and (no_key := compute.missing_llm_key(settings)):
    st.warning(no_key)
if use_llm and st.session_state.pop(LLM_REQUEST_KEY, False):
    run_llm_now(loaded, settings)
llm_result = compute.llm_result(loaded, settings) if use_llm else None
step = render_stepper(use_llm, llm_done=llm_result is not None)

result = llm_result or compute.shown_result(loaded, settings, step)
if result is None:
    st.stop()  # before the first step of a run that summarises, nothing of it is on view
if use_llm and llm_result is None and step > 2:
    go_to(2)  # the LLM has not run for these settings: only phases 1–2 are known
    step = 2
    st.info("Parameters changed since the last LLM summary: click Phase 3 to call the model.")
if result.skipped:
    # Which budget decided, and the change that would compact, from this conversation's numbers.
    advice = skip_advice(compute.region_plan(loaded, settings), result.skip_reason)
    why = f" {md_escape(advice.sentence())}" if advice is not None else ""
    st.warning(f"Compaction skipped: {md_escape(result.skip_reason)}.{why}")
shown = phase_picker(step, [phase.name for phase in result.phases], result=not result.skipped)
key = compute.run_key(loaded, settings)
if shown == RESULT_LABEL:
    # What a run is for, in one view: before → after, the summary's 13 sections, the orphan
    # fixes and what the pins kept (Run all lands here), then every message's fate.
    render_final(loaded, result, settings, key, whole=True)
elif shown is not None:
    render_phase(result, shown, loaded.messages)
if shown != RESULT_LABEL and step >= CLEANUP_STEP and not result.skipped:
    st.divider()
    render_final(loaded, result, settings, key)
if step >= CLEANUP_STEP:
    st.divider()
    render_peer_compare(loaded, result, settings)  # issue 18: a peer's policy beside ours
