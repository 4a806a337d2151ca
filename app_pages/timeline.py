"""Timeline: replay the loaded session with automatic compaction — the sawtooth of the context,
each compaction event's inspector view, and how the summary drifted from one version to the next."""

from dataclasses import replace

import streamlit as st

from compaction.errors import CompactionError
from compaction.lab.drift import drift
from compaction.ui.cost_views import calibrated, render_cost_section
from compaction.ui.frame import current_settings, require_config
from compaction.ui.loader import render_loader
from compaction.ui.timeline_views import (
    event_inputs,
    event_label,
    policy_picker,
    render_drift,
    render_event,
    replay,
    sawtooth_chart,
)
from compaction.ui.untrusted import md_escape

st.title("📈 Timeline")
settings = current_settings()
loaded = render_loader()
if loaded is None:
    st.info("Load a conversation to replay it as the agent lived it.")
    st.stop()
require_config(settings)

policy = policy_picker()
settings = replace(settings, config=calibrated(loaded, settings.config))
try:
    timeline = replay(loaded, settings, policy)
except CompactionError as exc:
    st.error(f"The replay could not run: {md_escape(exc)}")
    st.stop()
if timeline is None:
    st.stop()

outcomes = timeline.to_dict()["outcomes"]
columns = st.columns(5)
columns[0].metric("Events", len(timeline.events))
for column, (outcome, count) in zip(columns[1:], outcomes.items(), strict=True):
    column.metric(outcome.capitalize(), count)
threshold = (
    f"{timeline.threshold:,} events"
    if timeline.trigger == "events"
    else ("none (every call)" if timeline.trigger == "none" else f"{timeline.threshold:,}")
)
st.caption(
    f"{len(timeline.steps):,} messages replayed in {timeline.duration_s:.2f} s with the "
    f"{timeline.summarizer} summariser · window {timeline.window:,} · threshold {threshold}"
    + (f" · {md_escape(timeline.policy)}'s trigger and policy" if policy != "compaction" else "")
)
st.plotly_chart(sawtooth_chart(timeline, loaded.recorded), key="sawtooth")
if loaded.recorded:
    st.caption(
        "★ marks the compactions the session's own agent made (as recorded in its file); "
        "the diamonds are this replay's. The Audit page shows what each recorded one forgot."
    )
if loaded.calls:
    with st.expander("Recorded usage and dollars (the provider's count per call)", expanded=True):
        render_cost_section(loaded)
if over := [event for event in timeline.events if event.over_window]:
    numbers = ", ".join(f"#{event.number}" for event in over)
    reason = (
        "the system prompt and the latest request alone do not fit, and they are never cut"
        if any(event.request_exceeds_window for event in over)
        else "these events were skipped, so nothing was compacted or cut"
    )
    st.warning(
        f"After event(s) {numbers} the context is still over the {timeline.window:,}-token "
        f"window, so a model with this window would reject the request: {reason}."
    )
if not timeline.events and timeline.trigger == "none":
    st.info(
        "Observation masking has no compaction events: it masks every observation older than "
        "its last turns at every call, so the line above is the masked context."
    )
    st.stop()
if not timeline.events:
    st.info(
        "The context never reached the threshold: lower the context length or the threshold "
        "ratio in the sidebar to see automatic compaction."
    )
    st.stop()
st.dataframe(
    # An empty cell, not "None", where an event has no skip or fallback reason.
    [{k: "" if v is None else v for k, v in row.items()} for row in timeline.event_rows()],
    hide_index=True,
    key="timeline_events",
    column_config={
        "number": "Event",
        "step": "At message",
        "last_step": "Last message",
        "attempts": "Attempts",
        "outcome": "Outcome",
        "tokens_before": st.column_config.NumberColumn("Tokens before", format="localized"),
        "tokens_after": st.column_config.NumberColumn("Tokens after", format="localized"),
        "savings_pct": st.column_config.NumberColumn("Saved %", format="%.1f"),
        "messages_before": "Messages before",
        "messages_after": "Messages after",
        "skipped": "Skipped",
        "skip_reason": "Why skipped",
        "fallback_used": "Fallback",
        "fallback_reason": "Why the fallback",
        "ineffective_count": "Ineffective in a row",
        "iterative": "Iterative update",
        "over_window": "Over the window",
        "forced": "Forced (over the window)",
        "fit_cuts": "Fit cuts",
        "largest_fit_cut": st.column_config.NumberColumn("Largest cut (chars)", format="localized"),
        "cannot_fit": "Why it cannot fit",
        "request_exceeds_window": "Request alone over the window",
        "duration_s": st.column_config.NumberColumn("Seconds", format="%.3f"),
    },
)

st.subheader("One event")
by_number = {event.number: event for event in timeline.events}
number = st.selectbox(
    "Compaction event",
    list(by_number),
    format_func=lambda n: event_label(by_number[n]),
    key="timeline_event",
)
render_event(by_number[number], event_inputs(loaded.messages, timeline)[number])

st.divider()
st.subheader("Summary drift")
render_drift(drift(timeline))
