"""What a replay records: each step's context size, each compaction event, and the timeline
that holds them; and the rule for where a compaction may land (`may_compact_after`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.messages import Message
from compaction.result import CompactionResult

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
