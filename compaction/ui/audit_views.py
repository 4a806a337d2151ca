"""The Audit page's views: each compaction the session's agent made, measured against ours.

Everything shown here comes from a session file nobody on this machine wrote: summaries, facts
and message text are shown with st.text / st.dataframe (plain text), never as Markdown.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from compaction.lab.audit import Audit, AuditEvent, audit
from compaction.ui.message_views import call_index, render_message
from compaction.ui.state import Loaded, conversation_of
from compaction.ui.tool_pairs import result_index


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
    columns = st.columns(3)
    columns[0].metric("Facts compacted away", event.facts_before)
    after = f"{event.agent_tokens_after:,} tokens" if event.agent_tokens_after is not None else None
    columns[1].metric(
        "Kept by the agent",
        "unreadable" if event.kept_by_agent is None else event.kept_by_agent,
        help=f"in the agent's context after the compaction ({after})" if after else None,
    )
    columns[2].metric(
        "Ours, same size",
        "—" if event.kept_at_agent_size is None else event.kept_at_agent_size,
        help=(
            f"ours compacting the same messages to the agent's size after "
            f"({event.tokens_at_agent_size:,} tokens)"
            if event.tokens_at_agent_size is not None
            else None
        ),
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
        + _budget_run(event)
    )
    left, right = st.columns(2)
    with left:
        _summary_column(
            "The agent's summary",
            event.summary,
            "Encrypted by the agent's provider: it cannot be read or scored"
            + (f" ({after} of context after it)." if after else "."),
        )
    with right:
        _summary_column("Ours at the same size", event.pipeline_summary, _no_summary(event))
    render_forgotten(event, loaded)


def _budget_run(event: AuditEvent) -> str:
    # The second run, with the agent's window and trigger but no size of its own, keeps a tail
    # and so far more tokens: said apart, so the verdict compares one size only.
    if event.kept_by_pipeline is None or event.pipeline_tokens_after is None:
        return ""
    return (
        f" Unbounded by the agent's size (its window and trigger only), ours keeps "
        f"{event.kept_by_pipeline} of {event.facts_before} facts in "
        f"{event.pipeline_tokens_after:,} tokens."
    )


def _no_summary(event: AuditEvent) -> str:
    if event.agent_tokens_after is None:
        return (
            "The agent's context size after this compaction is not recorded (its summary is "
            "encrypted and no later call records usage), so ours was not run at that size."
        )
    if event.tokens_at_agent_size is None:
        return "Our pipeline could not run at the agent's size."
    return (
        f"At {event.agent_tokens_after:,} tokens ours kept the compacted messages without a "
        "summary (they fit whole)."
    )


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
    # One entry per fact, opening the message that holds its text: a command lives in a tool
    # call's arguments (with its result beside it), which the message's prose does not show.
    facts = event.forgotten
    chosen = st.selectbox(
        "Read the message a forgotten fact came from",
        range(len(facts)),
        format_func=lambda i: (
            f"{facts[i].kind}: {_short(facts[i].text)} (message {facts[i].message_index})"
        ),
        key=f"audit_message_{event.position}",
    )
    if chosen is None:
        return
    index = facts[chosen].message_index
    if 0 <= index < len(loaded.messages):
        with st.container(height=420, key=f"audit_read_{event.position}"):
            render_message(
                loaded.messages[index],
                index,
                "compacted away",
                call_index(loaded.messages),
                messages=loaded.messages,
                results=result_index(loaded.messages),
            )


def _short(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
