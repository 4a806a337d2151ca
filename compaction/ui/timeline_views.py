"""The Timeline page's parts: the replay (cached), the sawtooth, one event's inspector, the drift.

The replay is `compaction.simulate` with the sidebar's config and summariser, cached per
conversation hash + config + summariser, so moving to another page and back costs nothing. An
LLM replay calls the model at every compaction, so it only runs on an explicit click. Each event
keeps its CompactionResult; the context it compacted is rebuilt from the steps (the transcript
plus what earlier compactions left), so the phase views get the exact input of that event.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from compaction.config import CompactionConfig
from compaction.formats.conversation import TOKENS_SOURCES
from compaction.input.checks import validate_messages
from compaction.lab.audit import AGENT_NAMES
from compaction.lab.drift import DriftEntry
from compaction.lab.peers import PEER_NAMES, PEERS
from compaction.lab.timeline import (
    EFFECTIVE,
    FALLBACK,
    INEFFECTIVE,
    OUTCOMES,
    SKIPPED,
    Timeline,
    TimelineEvent,
    simulate,
    simulate_peer,
)
from compaction.messages import Message
from compaction.summarizers.factory import make_summarizer
from compaction.ui.palette import INK, RECORDED_INK, REGION_COLORS
from compaction.ui.params import Settings
from compaction.ui.phase_views import PHASE_TITLES, render_phase
from compaction.ui.state import Loaded
from compaction.ui.untrusted import md_escape

OUTCOME_COLORS: dict[str, str] = {
    EFFECTIVE: REGION_COLORS["tail"],  # green: it did its job
    INEFFECTIVE: REGION_COLORS["middle"],  # orange: ran but saved too little
    SKIPPED: REGION_COLORS["removed"],  # grey: nothing happened
    FALLBACK: REGION_COLORS["stub"],  # red: the summariser failed
}
LLM_TIMELINES_KEY = "llm_timelines"


def replay_key(loaded: Loaded, settings: Settings) -> str:
    assert settings.config is not None
    config = json.dumps(settings.config.to_dict(), sort_keys=True)
    return f"{loaded.content_hash}|{config}|{settings.summarizer_key()}"


@st.cache_resource(max_entries=8, show_spinner="Replaying the session…")
def _offline_replay(
    key: str, _messages: list[Message], _config: CompactionConfig, _kind: str
) -> Timeline:
    # cache_resource: a Timeline holds every event's CompactionResult; copying it per rerun
    # would cost more than reading it.
    return simulate(_messages, _config, make_summarizer(_kind))


OURS = "compaction"


def policy_picker() -> str:
    """Whose trigger and policy replay the session: ours, or a peer's (bound to the URL)."""
    return str(
        st.selectbox(
            "Whose compaction",
            [OURS, *PEER_NAMES],
            key="timeline_policy",
            bind="query-params",
            format_func=lambda name: "ours (the five phases + Fit)" if name == OURS else name,
            help="A peer replays with its published trigger and policy (lab/peers/): when would "
            "hermes have compacted, when would OpenHands? Its summary is written by our "
            "offline summariser.",
        )
    )


@st.cache_resource(max_entries=8, show_spinner="Replaying the session with the peer's policy…")
def _peer_replay(
    key: str, _messages: list[Message], _config: CompactionConfig, _kind: str, _peer: str
) -> Timeline:
    return simulate_peer(_messages, PEERS[_peer], _config, make_summarizer(_kind))


def replay(loaded: Loaded, settings: Settings, policy: str = OURS) -> Timeline | None:
    """The Timeline for the sidebar's settings; None while an LLM replay has not been asked for.
    A peer's replay (`policy`) runs with the offline summariser (extractive for the LLM one)."""
    assert settings.config is not None
    key = replay_key(loaded, settings)
    if policy != OURS:
        kind = "extractive" if settings.summarizer == "llm" else settings.summarizer
        return _peer_replay(f"{key}|{policy}", loaded.messages, settings.config, kind, policy)
    if settings.summarizer != "llm":
        return _offline_replay(key, loaded.messages, settings.config, settings.summarizer)
    done: dict[str, Timeline] = st.session_state.setdefault(LLM_TIMELINES_KEY, {})
    if key in done:
        return done[key]
    st.info("With the LLM summariser every compaction of the replay calls the model.")
    if st.button(f"Replay with {settings.llm_model}", key="timeline_llm_run"):
        summarizer = make_summarizer(
            "llm",
            model=settings.llm_model,
            summary_model=settings.llm_summary_model or None,
            api_base=settings.llm_api_base or None,
            api_key=settings.api_key,
            timeout=60,
        )
        with st.spinner("Replaying with the model…"):
            done[key] = simulate(loaded.messages, settings.config, summarizer)
        return done[key]
    return None


def event_inputs(messages: Sequence[Message], timeline: Timeline) -> dict[int, list[Message]]:
    """The context each event compacted, rebuilt as simulate built it (event number → messages)."""
    repaired, _ = validate_messages(messages)
    context: list[Message] = []
    inputs: dict[int, list[Message]] = {}
    for step in timeline.steps:
        context.append(repaired[step.index])
        if step.event is None:
            continue
        event = timeline.events[step.event]
        if event.step != step.index:
            continue  # a later attempt folded into a skipped event: the context did not change
        inputs[event.number] = list(context)
        if not event.skipped:
            context = list(event.result.messages)
    return inputs


RECORDED_COLOR = RECORDED_INK


def recorded_hover(record: dict[str, Any]) -> str:
    """`Claude Code compacted here, auto, 167,094 tokens` (escaped: it goes into plotly HTML)."""
    agent = AGENT_NAMES.get(str(record.get("agent")), str(record.get("agent")))
    tokens = record.get("tokens_before")
    text = f"{agent} compacted here, {record.get('trigger', 'unknown')}"
    if isinstance(tokens, int):
        text += f", {tokens:,} tokens{TOKENS_SOURCES.get(str(record.get('tokens_source')), '')}"
    return html.escape(text)


def sawtooth_chart(timeline: Timeline, recorded: Sequence[dict[str, Any]] = ()) -> go.Figure:
    """Context tokens per step, window and threshold lines, a marker per compaction event, and
    the compactions the session's own agent recorded (`recorded`, RecordedCompaction dicts) as
    markers of their own, distinct from the simulated ones."""
    xs, ys = timeline.sawtooth()
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            name="context",
            line={"color": REGION_COLORS["head"], "width": 1.5},
            hovertemplate="message %{x}: %{y:,} tokens<extra></extra>",
        )
    )
    for outcome in OUTCOMES:
        events = [e for e in timeline.events if e.outcome == outcome]
        if not events:
            continue
        figure.add_trace(
            go.Scatter(
                x=[e.step for e in events],
                y=[e.tokens_before for e in events],
                mode="markers",
                name=f"{outcome} ({len(events)})",
                marker={"color": OUTCOME_COLORS[outcome], "size": 11, "symbol": "diamond"},
                hovertext=[_event_hover(e) for e in events],
                hoverinfo="text",
            )
        )
    if recorded:
        at = dict(zip(xs, ys, strict=False))
        points = [
            (
                int(r["position"]),
                r["tokens_before"]
                if isinstance(r.get("tokens_before"), int)
                else at.get(int(r["position"]), 0),
                recorded_hover(r),
            )
            for r in recorded
        ]
        figure.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                mode="markers",
                name=f"recorded by the agent ({len(points)})",
                marker={"color": RECORDED_COLOR, "size": 15, "symbol": "star"},
                hovertext=[p[2] for p in points],
                hoverinfo="text",
            )
        )
        for x, _, _ in points:
            figure.add_vline(x=x, line_dash="dot", line_color=RECORDED_COLOR)
    lines = [(timeline.window, f"window {timeline.window:,}", "solid")]
    if timeline.trigger == "tokens":  # an event-count trigger is no line on a token axis
        lines.insert(0, (timeline.threshold, f"threshold {timeline.threshold:,}", "dash"))
    for y, label, dash in lines:
        figure.add_hline(y=y, line_dash=dash, line_color=INK, annotation_text=label)
    figure.update_layout(
        height=360,
        margin={"l": 10, "r": 10, "t": 20, "b": 10},
        xaxis={"title": "message of the transcript"},
        yaxis={"title": "context tokens", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def _event_hover(event: TimelineEvent) -> str:
    text = (
        f"event #{event.number} · message {event.step} · {event.outcome}<br>"
        f"{event.tokens_before:,} → {event.tokens_after:,} tokens ({event.savings_pct:.1f}%)"
    )
    if event.skip_reason:
        text += f"<br>skipped: {html.escape(event.skip_reason)}"
    if event.fallback_used:
        text += f"<br>fallback: {html.escape(event.fallback_used)}"
    return text


def event_label(event: TimelineEvent) -> str:
    return (
        f"#{event.number} · message {event.step} · {event.outcome} · "
        f"{event.tokens_before:,} → {event.tokens_after:,} ({event.savings_pct:.1f}%)"
    )


def render_event(event: TimelineEvent, original: list[Message]) -> None:
    """One event's inspector view: its phases, with the context it compacted as the input."""
    if event.skipped:
        st.warning(
            f"Skipped: {md_escape(event.skip_reason)}"
            + (f" (and {event.attempts - 1} later attempt(s))" if event.attempts > 1 else "")
        )
    if event.fallback_used:
        st.warning(
            f"Fallback used: **{md_escape(event.fallback_used)}** "
            f"({md_escape(event.fallback_reason)})."
        )
    columns = st.columns(3)
    columns[0].metric("Context before", f"{event.tokens_before:,}")
    columns[1].metric("Context after", f"{event.tokens_after:,}")
    columns[2].metric("Saved", f"{event.savings_pct:.1f}%")
    for note in event.notes:  # what a peer's policy decided here
        st.caption(md_escape(note))
    names = [phase.name for phase in event.result.phases]
    if not names:
        return
    # Open on the phase that did the work: the summary, else Phase 1's pruning (a later phase
    # alone would show 'before = after' beside a large saving).
    default = next((name for name in ("summarize", "prune") if name in names), names[-1])
    shown = st.segmented_control(
        "Phase",
        names,
        default=default,
        format_func=lambda n: PHASE_TITLES.get(n, n),
        key=f"timeline_phase_{event.number}",
    )
    render_phase(event.result, shown or default, original)


def render_drift(entries: list[DriftEntry]) -> None:
    """Each summary version against the previous one: section diffs and the facts that vanished."""
    if not entries:
        st.caption("Fewer than two summaries in this replay: nothing to compare yet.")
        return
    st.dataframe(
        {
            "version": [e.version for e in entries],
            "event": [e.event for e in entries],
            "at message": [e.step for e in entries],
            "sections changed": [len(e.changed_sections) for e in entries],
            "facts vanished": [len(e.vanished) for e in entries],
        },
        hide_index=True,
        key="drift_table",
    )
    by_version = {e.version: e for e in entries}
    version = st.selectbox(
        "Summary version",
        list(by_version),
        format_func=lambda v: f"v{v} (event #{by_version[v].event}) against v{v - 1}",
        key="drift_version",
    )
    entry = by_version[version]
    if entry.vanished:
        st.markdown(f"**Facts that vanished** ({len(entry.vanished)}) — gone for good")
        st.dataframe(
            [fact.to_dict() for fact in entry.vanished], hide_index=True, key="drift_vanished"
        )
    else:
        st.caption("No fact of the previous version vanished.")
    for section in entry.sections:
        if section.changed:
            st.markdown(f"**{section.name}** · +{len(section.added)} −{len(section.removed)}")
            st.code(section.diff, language="diff", wrap_lines=True)
    unchanged = [s.name for s in entry.sections if not s.changed]
    if unchanged:
        st.caption("Unchanged: " + ", ".join(unchanged))
