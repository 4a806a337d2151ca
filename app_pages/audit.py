"""Audit: what the agent forgot at each compaction it made in its own session, beside ours."""

import streamlit as st

from compaction.ui.audit_views import audit_of, event_label, render_event
from compaction.ui.frame import current_settings
from compaction.ui.loader import render_loader

st.title("🔎 Audit")
current_settings()
loaded = render_loader()
if loaded is None:
    st.info("Load a session that its agent compacted to see what each compaction forgot.")
    st.stop()
if not loaded.recorded:
    st.info(
        "This session records no compaction its agent made. Claude Code sessions that were "
        "compacted (auto or /compact), Codex rollouts with a `compacted` item, hermes sessions "
        "with a summary and Gemini CLI sessions with a compression have them; the loader's "
        "'On this machine' table counts them per session."
    )
    st.stop()

result = audit_of(loaded)
st.caption(
    "For each compaction: the probe facts (latest request, constraints, files, errors, commands, "
    "identifiers) of what the agent compacted away; how many the agent's context after the "
    "compaction still held (its summary and system prompt, or for an encrypted summary the "
    "size the provider counted at the next call); and how many ours keeps when it compacts the "
    "same messages to that same total."
)
labels = [event_label(number, event) for number, event in enumerate(result.events, 1)]
chosen = st.selectbox(
    "Compaction", range(len(labels)), format_func=lambda i: labels[i], key="audit_event"
)
render_event(result.events[chosen or 0], loaded)
