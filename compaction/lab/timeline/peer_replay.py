"""`simulate_peer`: a session replayed with a peer's trigger and policy (lab/peers/): when
would hermes have compacted, when would OpenHands, and what did each leave."""

from __future__ import annotations

import time
from typing import Any

from compaction.config import CompactionConfig
from compaction.input.checks import validate_messages
from compaction.lab.memory import with_lab_cache
from compaction.lab.peers import Peer, PeerRun, PeerState
from compaction.lab.timeline.records import (
    Step,
    Timeline,
    TimelineEvent,
    conversation_messages,
    may_compact_after,
)
from compaction.messages import Message, split_marks
from compaction.summarizers.base import Summarizer
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import make_counter

#: After a peer's attempt changed nothing (nothing to do, or a result it rejected), the replay
#: tries again only once the context has grown by this share: without it an attempt at every
#: step would make the replay quadratic. The rule is the replay's, not the peer's.
RETRY_GROWTH = 0.10


@with_lab_cache
def simulate_peer(
    conversation: Any,
    peer: Peer,
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
) -> Timeline:
    """Replay `conversation` with `peer`'s trigger and policy at `config`'s window.

    The same rule as `simulate` decides where a compaction may land (only where the agent calls
    the model). The trigger is the peer's: a token share of the window counted with the peer's
    own estimate (hermes: characters / 4), an event count (OpenHands), or none (observation
    masking applies at every call, so it has no events: each step's context is the masked one).
    One PeerState carries the previous summary and hermes' anti-thrash count across events.
    """
    started = time.perf_counter()
    messages, repairs = validate_messages(conversation_messages(conversation))
    messages, marks = split_marks(messages, getattr(conversation, "marks", None))
    config = config or CompactionConfig()
    summarizer = summarizer or ExtractiveSummarizer()
    counter = make_counter(config.counter, config.model)
    estimator = make_counter(peer.estimate) if peer.estimate else counter
    window = config.context_length
    if peer.trigger_kind == "none":
        steps = _masked_steps(messages, peer, counter)
        events: list[TimelineEvent] = []
    else:
        steps, events = _peer_steps(messages, peer, window, counter, estimator, summarizer, marks)
    return Timeline(
        steps=steps,
        events=events,
        window=window,
        threshold=peer.threshold(window),
        config=config,
        summarizer=getattr(summarizer, "name", type(summarizer).__name__),
        repairs=repairs,
        duration_s=time.perf_counter() - started,
        policy=peer.name,
        trigger=peer.trigger_kind,
    )


def _peer_steps(
    messages: list[Message],
    peer: Peer,
    window: int,
    counter: Any,
    estimator: Any,
    summarizer: Summarizer,
    marks: dict[int, str] | None = None,
) -> tuple[list[Step], list[TimelineEvent]]:
    marks = marks or {}
    state = PeerState(marks={})
    context: list[Message] = []
    running = 0  # the lab's count
    estimated = 0  # the peer's own estimate
    retry_at = 0  # after an attempt that changed nothing: the size to grow to first
    steps: list[Step] = []
    events: list[TimelineEvent] = []
    for index, message in enumerate(messages):
        if index in marks:  # the context's marks follow its messages through each compaction
            assert state.marks is not None
            state.marks[len(context)] = marks[index]
        context.append(message)
        running += counter.count_message(message)
        if estimator is not counter:
            estimated += estimator.count_message(message)
        peak = running
        own = estimated if estimator is not counter else running
        event_number: int | None = None
        model_call = may_compact_after(messages, index)
        if model_call and running >= retry_at and peer.should_compact(own, context, window, state):
            began = time.perf_counter()
            run = peer.compact(context, window, counter, summarizer, state)
            event = _peer_event(run, index, len(events), window, time.perf_counter() - began)
            events.append(event)
            event_number = event.number
            if run.compacted:
                context = list(run.messages)
                before = state.marks or {}
                state.marks = {
                    pos: before[origin]
                    for pos, origin in enumerate(run.origins)
                    if origin is not None and origin in before
                }
                running = run.tokens_after
                if estimator is not counter:
                    estimated = estimator.count_messages(context)
                retry_at = 0
            else:
                retry_at = int(running * (1 + RETRY_GROWTH)) + 1
        steps.append(
            Step(
                index=index,
                role=str(message.get("role")),
                peak_tokens=peak,
                tokens=running,
                context_messages=len(context),
                event=event_number,
                model_call=model_call,
            )
        )
    return steps, events


def _peer_event(
    run: PeerRun, step: int, number: int, window: int, duration: float
) -> TimelineEvent:
    result = run.to_result()
    return TimelineEvent(
        number=number,
        step=step,
        tokens_before=run.tokens_before,
        tokens_after=run.tokens_after,
        messages_before=len(run.fates),
        messages_after=len(run.messages),
        skipped=not run.compacted,
        skip_reason=result.skip_reason,
        fallback_used=result.fallback_used,
        fallback_reason=result.fallback_reason,
        ineffective_count=int(run.details.get("ineffective", 0)),
        iterative=run.summary is not None and number > 0,
        summary=run.summary.to_dict() if run.summary is not None else None,
        duration_s=duration,
        result=result,
        window=window,
        notes=list(run.notes),
    )


def _masked_steps(messages: list[Message], peer: Peer, counter: Any) -> list[Step]:
    """Observation masking's context at every step, kept incrementally: each new turn (an
    assistant message) masks the results of the turn that leaves the window of the last M."""
    from compaction.lab.peers.observation_masking import ObservationMasking, masked

    window_turns = peer.window_turns if isinstance(peer, ObservationMasking) else 10
    turns: list[list[int]] = []  # per turn (assistant message), the indices of its results
    running = 0
    steps: list[Step] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        running += counter.count_message(message)
        if role == "tool" and turns:
            turns[-1].append(index)
        elif role == "assistant":
            turns.append([])
            leaving = len(turns) - 1 - window_turns
            if leaving >= 0:
                for result in turns[leaving]:
                    running += counter.count_message(masked(messages[result]))
                    running -= counter.count_message(messages[result])
        steps.append(
            Step(
                index=index,
                role=str(role),
                peak_tokens=running,
                tokens=running,
                context_messages=index + 1,
                model_call=may_compact_after(messages, index),
            )
        )
    return steps
