"""Replay a whole session as the agent lived it, with automatic compaction at the threshold.

A single compaction says little about an agent's life: what matters is the sawtooth — the context
filling up, being compacted, filling again — and what each successive summary kept. `simulate`
replays a conversation message by message through ONE `Compactor` (so the second compaction is an
iterative update of the first summary, and anti-thrash counts across events) and records the
context size after every step and every compaction event.

When compaction may run (the rule, documented because it decides where events land):
- the context has reached `threshold_tokens`, and
- the step is a point where the agent would call the model: the next message of the transcript
  is not a tool result. While a tool group's results are still arriving, the agent does not call
  the model, so it does not compact either; it compacts once the group's last result is in.
  (A call whose result never comes does not block compaction: the next non-tool message ends the
  group, and Phase 5 stubs the missing result.)
- Over the window, compaction runs even while anti-thrash suspends it (`forced` on the event):
  the provider would reject the call, and an agent compacts on that error. Every compaction that
  runs ends with Fit, so no turn after one is over the window — unless the system prompt and the
  latest request alone exceed it, which the event says (`request_exceeds_window`, `cannot_fit`).

`simulate_peer` replays the same way with a peer's trigger and policy (lab/peers/): when would
hermes have compacted, when would OpenHands, and what did each leave? See its docstring.

Cost is linear in the session plus the compactions: a running token total is kept with the shared
cached counter (only the appended message is counted; after a compaction the total is the
result's `tokens_after`). Once anti-thrash suspends automatic compaction, the Compactor would skip
at every later step; those steps are folded into the one skipped event (its `attempts`) without
calling the Compactor again. Consecutive skips for the same reason are folded the same way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.compactor import INEFFECTIVE_REASON, Compactor
from compaction.config import CompactionConfig
from compaction.errors import InvalidConversationError
from compaction.lab.peers import Peer, PeerRun, PeerState
from compaction.message_input import validate_messages
from compaction.messages import Message
from compaction.result import CompactionResult
from compaction.summarizers.base import Summarizer
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import make_counter

#: Event outcomes, as the Timeline page colours them.
EFFECTIVE = "effective"
INEFFECTIVE = "ineffective"
SKIPPED = "skipped"
FALLBACK = "fallback"
OUTCOMES = (EFFECTIVE, INEFFECTIVE, SKIPPED, FALLBACK)


@dataclass(frozen=True)
class Step:
    """The context after message `index` of the transcript was appended (and compacted, if so)."""

    index: int
    role: str
    peak_tokens: int  # the context right after the append, before any compaction
    tokens: int  # the context at the end of the step (after a compaction that ran)
    context_messages: int
    event: int | None = None  # the index of the compaction event at this step, if any
    model_call: bool = True  # the agent calls the model after this step (see may_compact_after)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "peak_tokens": self.peak_tokens,
            "tokens": self.tokens,
            "context_messages": self.context_messages,
            "event": self.event,
            "model_call": self.model_call,
        }


@dataclass
class TimelineEvent:
    """One automatic compaction attempt and what it did."""

    number: int  # position in Timeline.events
    step: int  # the transcript index at which it ran
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    skipped: bool
    skip_reason: str | None
    fallback_used: str | None
    fallback_reason: str | None
    ineffective_count: int
    iterative: bool
    summary: dict[str, str] | None  # the 13 sections (Summary.to_dict()), None without a summary
    duration_s: float
    result: CompactionResult = field(repr=False)
    #: Later steps folded into this skipped event (same reason, or compaction suspended).
    attempts: int = 1
    last_step: int | None = None
    ineffective_pct: float = 10.0
    window: int = 0  # the model's window: a context left above it is one the model rejects
    #: Run although anti-thrash suspended automatic compaction: the context was over the window.
    forced: bool = False
    #: What a peer's policy decided at this event (simulate_peer); empty for our pipeline.
    notes: list[str] = field(default_factory=list)

    @property
    def over_window(self) -> bool:
        """The context after this event is still larger than the window: only when it was
        skipped, or when the system prompt and the latest request alone exceed the window."""
        return self.window > 0 and self.tokens_after > self.window

    @property
    def cannot_fit(self) -> str | None:
        """Why the compaction could not bring the context under the window (None when it did)."""
        fit = self.result.fit
        return fit.cannot_fit if fit is not None else None

    @property
    def request_exceeds_window(self) -> bool:
        """The system prompt plus the latest request alone are over the window."""
        fit = self.result.fit
        return fit is not None and fit.request_exceeds_window

    @property
    def fit_cuts(self) -> int:
        fit = self.result.fit
        return len(fit.cuts) if fit is not None else 0

    @property
    def largest_fit_cut(self) -> int:
        """The most characters one Fit cut removed in this compaction."""
        fit = self.result.fit
        return fit.largest_cut_chars if fit is not None else 0

    @property
    def summary_discarded(self) -> bool:
        """A summary was written but dropped, because splicing it in would have grown the
        context (the pruned conversation was the result instead)."""
        return any(bool(phase.details.get("discarded")) for phase in self.result.phases)

    @property
    def savings_pct(self) -> float:
        if self.tokens_before <= 0:
            return 0.0
        return (self.tokens_before - self.tokens_after) / self.tokens_before * 100

    @property
    def outcome(self) -> str:
        """effective | ineffective | skipped | fallback (the marker colour on the Timeline)."""
        if self.skipped:
            return SKIPPED
        if self.fallback_used:
            return FALLBACK
        return INEFFECTIVE if self.savings_pct < self.ineffective_pct else EFFECTIVE

    def to_dict(self, include_result: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "number": self.number,
            "step": self.step,
            "last_step": self.last_step if self.last_step is not None else self.step,
            "attempts": self.attempts,
            "outcome": self.outcome,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "savings_pct": round(self.savings_pct, 2),
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "skipped": self.skipped,
            "skip_reason": self.skip_reason,
            "fallback_used": self.fallback_used,
            "fallback_reason": self.fallback_reason,
            "ineffective_count": self.ineffective_count,
            "iterative": self.iterative,
            "over_window": self.over_window,
            "forced": self.forced,
            "fit_cuts": self.fit_cuts,
            "largest_fit_cut": self.largest_fit_cut,
            "cannot_fit": self.cannot_fit,
            "request_exceeds_window": self.request_exceeds_window,
            "summary": self.summary,
            "duration_s": round(self.duration_s, 6),
        }
        if self.notes:
            data["notes"] = list(self.notes)
        if include_result:
            data["result"] = self.result.to_dict(include_phase_messages=False)
        return data


@dataclass
class Timeline:
    """The whole replay: a Step per transcript message and the compaction events."""

    steps: list[Step]
    events: list[TimelineEvent]
    window: int
    threshold: int
    config: CompactionConfig
    summarizer: str
    repairs: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    #: Whose policy replayed: "compaction" (ours) or a peer's name (simulate_peer).
    policy: str = "compaction"
    #: How the policy triggers: "tokens", "events" (a message count) or "none" (every call).
    trigger: str = "tokens"

    @property
    def compactions(self) -> list[TimelineEvent]:
        """The events that actually compacted (not skipped)."""
        return [event for event in self.events if not event.skipped]

    def turns_over_window(self) -> list[Step]:
        """The model calls after the first compaction that ran whose context is over the window
        (the calls a provider rejects; a step whose tool group is still arriving is no call)."""
        first = next((event.step for event in self.compactions), None)
        if first is None:
            return []
        return [
            step
            for step in self.steps
            if step.index >= first and step.model_call and step.tokens > self.window
        ]

    def step_rows(self) -> list[dict[str, Any]]:
        """One plain row per step, for a chart or a table."""
        return [step.to_dict() for step in self.steps]

    def event_rows(self) -> list[dict[str, Any]]:
        """One plain row per event without the summary (the events table)."""
        rows = []
        for event in self.events:
            row = event.to_dict()
            row.pop("summary")
            rows.append(row)
        return rows

    def sawtooth(self) -> tuple[list[int], list[int]]:
        """(x, y) of the context-size line: at an event step the line rises to the peak, then
        drops to what the compaction left, so each compaction shows as a vertical edge."""
        xs: list[int] = []
        ys: list[int] = []
        for step in self.steps:
            xs.append(step.index)
            ys.append(step.peak_tokens)
            if step.tokens != step.peak_tokens:
                xs.append(step.index)
                ys.append(step.tokens)
        return xs, ys

    def to_dict(self, include_results: bool = False) -> dict[str, Any]:
        outcomes = {name: 0 for name in OUTCOMES}
        for event in self.events:
            outcomes[event.outcome] += 1
        return {
            "policy": self.policy,
            "trigger": self.trigger,
            "window": self.window,
            "threshold": self.threshold,
            "summarizer": self.summarizer,
            "config": self.config.to_dict(),
            "messages": len(self.steps),
            "outcomes": outcomes,
            "turns_over_window": len(self.turns_over_window()),
            "repairs": list(self.repairs),
            "duration_s": round(self.duration_s, 6),
            "steps": self.step_rows(),
            "events": [event.to_dict(include_result=include_results) for event in self.events],
        }


def conversation_messages(conversation: Any, caller: str = "simulate") -> Sequence[Any]:
    """The message list of `conversation`: a list itself, or an object with `.messages`.

    `caller` names the public function in the error, so evaluate() does not blame simulate().
    """
    messages = getattr(conversation, "messages", conversation)
    if not isinstance(messages, list | tuple):
        raise TypeError(
            f"{caller}() takes a list of messages or an object with a .messages list, "
            f"not {type(conversation).__name__}"
        )
    return messages


def may_compact_after(messages: Sequence[Message], index: int) -> bool:
    """True when the agent would call the model after message `index`: no tool result follows."""
    following = index + 1
    return following >= len(messages) or messages[following].get("role") != "tool"


def simulate(
    conversation: Any,
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
) -> Timeline:
    """Replay `conversation` (never modified) with automatic compaction; see the module doc."""
    started = time.perf_counter()
    messages, repairs = validate_messages(conversation_messages(conversation))
    compactor = Compactor(config, summarizer)
    config = compactor.config
    counter = compactor.counter
    threshold = config.threshold_tokens
    context: list[Message] = []
    running = 0
    steps: list[Step] = []
    events: list[TimelineEvent] = []
    open_skip: TimelineEvent | None = None  # the skipped event later skips fold into

    for index, message in enumerate(messages):
        context.append(message)
        running += counter.count_message(message)
        peak = running
        event_number: int | None = None
        model_call = may_compact_after(messages, index)
        if running >= threshold and model_call:
            suspended = compactor.ineffective_count >= config.max_ineffective
            # Over the window the provider rejects the call: the agent compacts anyway.
            forced = suspended and running > config.context_length
            if (
                suspended
                and not forced
                and open_skip is not None
                and open_skip.skip_reason == INEFFECTIVE_REASON
            ):
                # Anti-thrash holds until a manual compaction: the Compactor would skip again.
                open_skip.attempts += 1
                open_skip.last_step = index
                event_number = open_skip.number
            else:
                event = _compact(compactor, context, index, len(events), forced)
                if (
                    event.skipped
                    and open_skip is not None
                    and (open_skip.skip_reason == event.skip_reason)
                ):
                    open_skip.attempts += 1
                    open_skip.last_step = index
                    event_number = open_skip.number
                else:
                    events.append(event)
                    event_number = event.number
                    open_skip = event if event.skipped else None
                if not event.skipped:
                    context = list(event.result.messages)
                    running = event.tokens_after
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
    return Timeline(
        steps=steps,
        events=events,
        window=config.context_length,
        threshold=threshold,
        config=config,
        summarizer=getattr(compactor.summarizer, "name", type(compactor.summarizer).__name__),
        repairs=repairs,
        duration_s=time.perf_counter() - started,
    )


def _compact(
    compactor: Compactor, context: list[Message], step: int, number: int, forced: bool = False
) -> TimelineEvent:
    began = time.perf_counter()
    try:
        result = compactor.compress(context, force=forced)
    except InvalidConversationError as exc:
        # So far the transcript is nothing but tool results (no call made them): nothing of it
        # would survive, so the agent could not compact yet; a skip that says why.
        tokens = compactor.count_tokens(context)
        result = CompactionResult(
            messages=list(context),
            phases=[],
            tokens_before=tokens,
            tokens_after=tokens,
            skipped=True,
            skip_reason=exc.problem,
            ineffective_count=compactor.ineffective_count,
        )
    return TimelineEvent(
        number=number,
        step=step,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        messages_before=len(context),
        messages_after=len(result.messages),
        skipped=result.skipped,
        skip_reason=result.skip_reason,
        fallback_used=result.fallback_used,
        fallback_reason=result.fallback_reason,
        ineffective_count=result.ineffective_count,
        iterative=result.iterative,
        summary=result.summary.to_dict() if result.summary is not None else None,
        duration_s=time.perf_counter() - began,
        result=result,
        ineffective_pct=compactor.config.ineffective_savings_pct,
        window=compactor.config.context_length,
        forced=forced,
    )


#: After a peer's attempt changed nothing (nothing to do, or a result it rejected), the replay
#: tries again only once the context has grown by this share: without it an attempt at every
#: step would make the replay quadratic. The rule is the replay's, not the peer's.
RETRY_GROWTH = 0.10


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
    config = config or CompactionConfig()
    summarizer = summarizer or ExtractiveSummarizer()
    counter = make_counter(config.counter, config.model)
    estimator = make_counter(peer.estimate) if peer.estimate else counter
    window = config.context_length
    if peer.trigger_kind == "none":
        steps = _masked_steps(messages, peer, counter)
        events: list[TimelineEvent] = []
    else:
        steps, events = _peer_steps(messages, peer, window, counter, estimator, summarizer)
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
) -> tuple[list[Step], list[TimelineEvent]]:
    state = PeerState()
    context: list[Message] = []
    running = 0  # the lab's count
    estimated = 0  # the peer's own estimate
    retry_at = 0  # after an attempt that changed nothing: the size to grow to first
    steps: list[Step] = []
    events: list[TimelineEvent] = []
    for index, message in enumerate(messages):
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
