"""What every peer strategy shares: its run record, its state across compactions, the summary
call and the small message helpers the policies are written with.

A peer is a frozen dataclass whose fields are the peer's own published parameters (so a sweep can
vary them) with three methods: `threshold(window)` (when it compacts), `should_compact(...)` and
`compact(...)` (what it keeps). Where the peer asks its own model for the summary, the lab asks
ours (`write_summary`): only the *policy* — what is kept, dropped, truncated, where the summary
goes and when it triggers — is the peer's. No peer repairs what its policy breaks beyond what its
own description says it repairs: provider validity then reports it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from compaction.errors import ConfigError, SummarizationError
from compaction.messages import (
    Marks,
    Message,
    content_text,
    has_tool_calls,
    is_injected,
    is_summary_message,
    last_user_index,
    mark_of,
)
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.result import CompactionResult, Fate
from compaction.summarizers.base import Summarizer, SummaryRequest
from compaction.summary import Summary, parse_summary, render_summary, strip_summary_prefix
from compaction.tokens import TokenCounter

# Fates a peer gives a message beyond the engine's (compaction.result): the Inspect compare view
# colours them. A placeholder is a whole tool output replaced by one line (hermes' pruning,
# observation masking); truncated keeps part of the message (Codex's oldest user message,
# Gemini's old function responses).
PLACEHOLDER = "placeholder"
TRUNCATED = "truncated"
PEER_FATE_LABELS: dict[str, str] = {
    PLACEHOLDER: "replaced by a placeholder",
    TRUNCATED: "truncated",
}

#: Our pipeline's default summary clamp (CompactionConfig: 20% of the folded tokens, 2,000 to
#: 8,000): the budget our summariser gets for a peer whose own model chooses its summary length.
DEFAULT_SUMMARY_RATIO = 0.20
DEFAULT_SUMMARY_MIN = 2_000
DEFAULT_SUMMARY_MAX = 8_000


@dataclass
class PeerState:
    """What a peer remembers between compactions of one session (the Timeline replay)."""

    previous_summary: str | None = None
    ineffective: int = 0  # compactions in a row that freed little (hermes' anti-thrash)
    compactions: int = 0
    #: Which user turns of the conversation compacted the harness sent (messages.Marks, by
    #: index): never the request a peer's summary quotes.
    marks: dict[int, str] | None = None


@dataclass
class PeerRun:
    """One application of a peer's policy to a conversation.

    `fates` maps each input index to what the policy did to it; `origins[i]` is the input index
    output message i came from (None for what the policy inserted: a summary, an
    acknowledgement, a stub). `compacted` is False when the policy had nothing to do or refused
    its own result (`rejected` says why): the output is then the input.
    """

    peer: str
    messages: list[Message]
    origins: list[int | None]
    fates: dict[int, str]
    tokens_before: int
    tokens_after: int
    compacted: bool = True
    summary_text: str | None = None
    summary: Summary | None = None
    fallback: str | None = None  # why our summariser failed and the fallback wrote the summary
    rejected: str | None = None
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def savings_pct(self) -> float:
        if self.tokens_before <= 0:
            return 0.0
        return (self.tokens_before - self.tokens_after) / self.tokens_before * 100

    def fate_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for fate in self.fates.values():
            counts[fate] = counts.get(fate, 0) + 1
        return counts

    def to_result(self) -> CompactionResult:
        """The run as the engine's result type, for the views built on it (the Timeline)."""
        return CompactionResult(
            messages=list(self.messages),
            phases=[],
            tokens_before=self.tokens_before,
            tokens_after=self.tokens_after,
            summary=self.summary,
            skipped=not self.compacted,
            skip_reason=self.rejected or (None if self.compacted else "; ".join(self.notes)),
            fallback_used="extractive" if self.fallback else None,
            fallback_reason=self.fallback,
            fates=dict(self.fates),
            summarizer=str(self.details.get("summarizer", "")),
        )

    def to_dict(self, include_messages: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "peer": self.peer,
            "compacted": self.compacted,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "savings_pct": round(self.savings_pct, 2),
            "messages_after": len(self.messages),
            "rejected": self.rejected,
            "fallback": self.fallback,
            "notes": list(self.notes),
            "fates": {str(index): fate for index, fate in sorted(self.fates.items())},
            "details": dict(self.details),
        }
        if include_messages:
            data["messages"] = self.messages
        return data


class Peer(Protocol):
    """A peer's policy: its parameters are the dataclass fields (see the module doc)."""

    name: ClassVar[str]
    version: ClassVar[str]
    #: "tokens" (a share of the window) or "events" (a message count) or "none" (every call).
    trigger_kind: ClassVar[str]
    #: The counter the peer decides with ("rough": characters / 4), or None for the lab's own.
    estimate: ClassVar[str | None]

    def threshold(self, window: int) -> int: ...

    def window_for(self, target_tokens: int) -> int: ...

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        """`tokens` is the context counted with the peer's `estimate` (the caller keeps a
        running total, so a replay never recounts the whole context at every step)."""
        ...

    def compact(
        self,
        messages: Sequence[Message],
        window: int,
        counter: TokenCounter,
        summarizer: Summarizer,
        state: PeerState | None = None,
    ) -> PeerRun: ...


def peer_fields(peer: Any) -> dict[str, Any]:
    """The peer's parameters with their current values, in declaration order."""
    return {f.name: getattr(peer, f.name) for f in dataclasses.fields(peer)}


def check_ranges(peer: Any, ranges: dict[str, tuple[float, float | None]]) -> None:
    """ConfigError naming the peer and the parameter when a value is out of its range."""
    for name, (low, high) in ranges.items():
        value = getattr(peer, name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{peer.name}.{name} must be a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{peer.name}.{name} must be a finite number, got {value!r}")
        if value < low or (high is not None and value > high):
            allowed = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(f"{peer.name}.{name} must be {allowed}, got {value!r}")


def text_tokens(counter: TokenCounter, text: str) -> int:
    """Tokens of `text` alone (the counter's protocol counts whole messages)."""
    if not text:
        return 0
    empty = counter.count_message({"role": "user", "content": ""})
    return counter.count_message({"role": "user", "content": text}) - empty


def clamp_budget(tokens: int, ratio: float, minimum: int, maximum: int) -> int:
    """`ratio` of `tokens`, at least `minimum` and at most `maximum` (the minimum wins a tie:
    a summary shorter than its floor says too little to be worth the call)."""
    return max(minimum, min(int(tokens * ratio), maximum))


def default_summary_budget(folded_tokens: int) -> int:
    """The budget our pipeline's defaults would give a summary of `folded_tokens`."""
    return clamp_budget(
        folded_tokens, DEFAULT_SUMMARY_RATIO, DEFAULT_SUMMARY_MIN, DEFAULT_SUMMARY_MAX
    )


def leading_system_end(messages: Sequence[Message]) -> int:
    """The index just past the system / developer messages that open the conversation."""
    index = 0
    while index < len(messages) and messages[index].get("role") in ("system", "developer"):
        index += 1
    return index


def is_real_user(message: Message) -> bool:
    """A user turn the person wrote: not a tool result, not an earlier compaction summary."""
    return message.get("role") == "user" and not is_summary_message(message)


def latest_user_text(messages: Sequence[Message], marks: Marks | None = None) -> str | None:
    """The user's own latest request, as the engine finds it (`last_user_index`: harness text
    such as stop-hook feedback is no request while the user has one of their own)."""
    index = last_user_index(messages, marks=marks)
    return None if index is None else content_text(messages[index])


def first_user_text(messages: Sequence[Message], marks: Marks | None = None) -> str | None:
    """The user's own first message (harness text skipped while the user wrote one)."""
    users = [(i, message) for i, message in enumerate(messages) if is_real_user(message)]
    own = next(
        (m for i, m in users if not is_injected(m, mark_of(m, i, marks))),
        None,
    )
    chosen = own if own is not None else next((m for _, m in users), None)
    return None if chosen is None else content_text(chosen)


def has_text(message: Message) -> bool:
    return bool(content_text(message).strip())


def is_tool_call_message(message: Message) -> bool:
    return message.get("role") == "assistant" and has_tool_calls(message)


def previous_summaries(messages: Sequence[Message]) -> list[int]:
    """Indices of earlier compaction summaries (ours, hermes', Claude Code's)."""
    return [index for index, message in enumerate(messages) if is_summary_message(message)]


def write_summary(
    folded: Sequence[Message],
    raw: Sequence[Message],
    budget: int,
    summarizer: Summarizer,
    counter: TokenCounter,
    whole: Sequence[Message],
    previous: str | None = None,
    marks: Marks | None = None,
) -> tuple[str, Summary | None, str | None]:
    """Our summariser's summary of `folded` (the text, the parsed sections, the fallback reason).

    `raw` is `folded` before the peer changed it (a pruned output's full text), `whole` the whole
    conversation (for the latest and the first request). A summariser that fails is replaced by
    the extractive one, and the reason kept: the lab measures the policy, so it does not leave a
    peer without a summary because a model call failed.
    """
    serialized = serialize_turns(folded)
    request = SummaryRequest(
        turns=list(folded),
        serialized=serialized,
        budget_tokens=budget,
        prompt=build_prompt(serialized, budget, previous),
        previous_summary=previous,
        latest_user_request=latest_user_text(whole, marks),
        raw_turns=list(raw),
        first_user_request=first_user_text(whole, marks),
        counter=counter,
    )
    fallback: str | None = None
    try:
        text = summarizer.summarize(request)
    except SummarizationError as exc:
        from compaction.summarizers.extractive import ExtractiveSummarizer

        fallback = f"{exc.kind}: {exc}"
        text = ExtractiveSummarizer().summarize(request)
    text = strip_summary_prefix(text)
    parsed = parse_summary(text)
    if getattr(summarizer, "name", "") == "static" or parsed.found_headings == 0:
        return text, None, fallback
    return render_summary(parsed), parsed, fallback


def unchanged(
    peer: str, messages: Sequence[Message], tokens: int, note: str, rejected: str | None = None
) -> PeerRun:
    """The run of a policy that left the conversation as it was."""
    return PeerRun(
        peer=peer,
        messages=[dict(message) for message in messages],
        origins=list(range(len(messages))),
        fates=dict.fromkeys(range(len(messages)), Fate.KEPT),
        tokens_before=tokens,
        tokens_after=tokens,
        compacted=False,
        rejected=rejected,
        notes=[note],
    )


def folded_fates(start: int, stop: int, summaries: Sequence[int] = ()) -> dict[int, str]:
    """FOLDED for every index in [start, stop) (earlier summaries are marked by the caller)."""
    skip = set(summaries)
    return {index: Fate.FOLDED_INTO_SUMMARY for index in range(start, stop) if index not in skip}
