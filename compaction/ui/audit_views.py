"""The Audit page's views: each compaction the session's agent made, measured against ours.

Everything shown here comes from a session file nobody on this machine wrote: summaries, facts
and message text are shown with st.text / st.dataframe (plain text), never as Markdown.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from compaction.lab.audit import Audit, AuditEvent, audit
from compaction.messages import content_text
from compaction.ui.state import Loaded, conversation_of


@st.cache_data(show_spinner="Auditing the agent's compactions…", max_entries=4)
def _audit(content_hash: str, _loaded: Loaded) -> Audit:
    # Keyed by the content hash: the messages themselves are not hashed on every rerun.
    return audit(conversation_of(_loaded))


def audit_of(loaded: Loaded) -> Audit:
    return _audit(loaded.content_hash, loaded)


def event_label(number: int, event: AuditEvent) -> str:
    tokens = f", {event.tokens_before:,} tokens" if event.tokens_before else ""
    where = f"message {event.position} ({event.trigger}{tokens})"
    return f"{number}. {event.agent_name} compacted at {where}"


def render_event(event: AuditEvent, loaded: Loaded) -> None:
    st.text(f"Verdict: {event.verdict()}")
    columns = st.columns(4)
    columns[0].metric("Facts compacted away", event.facts_before)
    columns[1].metric(
        "Kept by the agent", "unreadable" if event.kept_by_agent is None else event.kept_by_agent
    )
    columns[2].metric(
        "Ours, same size", "—" if event.kept_at_agent_size is None else event.kept_at_agent_size
    )
    columns[3].metric(
        "Ours, agent's budget", "—" if event.kept_by_pipeline is None else event.kept_by_pipeline
    )
    recorded = (
        f"; the provider counted {event.recorded_prompt:,} tokens at the last call before it "
        f"({event.recorded_prompt / event.window:.0%} of the window)"
        if event.recorded_prompt is not None
        else ""
    )
    st.caption(
        f"Compacted away: messages {event.compacted_from}–{event.position - 1}; window "
        f"{event.window:,} ({event.window_source}); tokens before {event.tokens_before:,} "
        f"({'as recorded' if event.tokens_before_recorded else 'counted'}){recorded}."
    )
    left, right = st.columns(2)
    with left:
        _summary_column(
            "The agent's summary",
            event.summary,
            "Encrypted by the agent's provider: it cannot be read or scored.",
        )
    with right:
        _summary_column(
            "Ours at the same size",
            event.pipeline_summary,
            "Our pipeline wrote no summary at this size (nothing left to summarise).",
        )
    render_forgotten(event, loaded)


def _summary_column(title: str, text: str | None, missing: str) -> None:
    st.markdown(f"**{title}**")
    if text is None:
        st.info(missing)
        return
    with st.container(height=420):
        st.text(text)  # untrusted: plain text


def render_forgotten(event: AuditEvent, loaded: Loaded) -> None:
    if event.kept_by_agent is None:
        return
    st.markdown(f"**Forgotten by the agent: {len(event.forgotten)} fact(s)**")
    if not event.forgotten:
        st.success("The agent's summary still holds every probe fact of what it compacted.")
        return
    rows: list[dict[str, Any]] = [
        {
            "kind": fact.kind,
            "fact": fact.text,
            "message #": fact.message_index,
            "ours kept it": "yes" if fact.kept_by_pipeline else "no",
        }
        for fact in event.forgotten
    ]
    st.dataframe(rows, hide_index=True, key=f"audit_forgotten_{event.position}")
    indices = sorted({fact.message_index for fact in event.forgotten})
    chosen = st.selectbox(
        "Read the message a forgotten fact came from",
        indices,
        format_func=lambda i: f"message {i} ({loaded.messages[i].get('role', '?')})",
        key=f"audit_message_{event.position}",
    )
    if chosen is not None and 0 <= chosen < len(loaded.messages):
        with st.container(height=300):
            st.text(content_text(loaded.messages[chosen]) or "(no text: tool calls only)")
