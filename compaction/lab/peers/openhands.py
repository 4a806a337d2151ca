"""openhands: OpenHands' V0 `LLMSummarizingCondenser`, from ../shared/spec/PEERS.md.

The policy, as PEERS.md describes V0:

- Trigger by **event count**, not tokens: condense when `len(view) > max_size` (120 with the
  default condenser; the class default is 100).
- Condense to `max_size // 2` events: the first `keep_first` events (4 in the default chain),
  then the summary event, then as many of the last events as make up the rest.
- Each forgotten event is cut to `max_event_chars` 10,000 characters before the summariser
  sees it.
- The V1 SDK (max_size 80, a token trigger, tool batches kept atomic, `minimum_progress` 0.1) is
  not this strategy: V0 is.

What PEERS.md leaves open, and how the lab reads it:
- An event here is one message of the transcript. OpenHands makes one action event per tool call,
  so an assistant message carrying several calls counts as one event here, not several.
- Where the summary event sits: right after the kept head, sent as a user message.
- The prompt is built from the condensed view the way V0's `ConversationMemory` builds it: its
  last step, `_filter_unmatched_tool_calls` (PEERS.md, "OpenHands condensers"), removes every
  tool result whose call is not in the view and every call whose result is not; an assistant
  message left with no call is removed, one left with some keeps those (a message without
  calls is untouched). A condensation that cuts through a tool group therefore loses that
  group's call or result (the fates say which: `removed`, `stripped`), but sends no orphan to
  the provider, so none is reported as provider-invalid for that reason. The filter runs on the
  condensed view only: an input that is already unpaired is the input's fault, reported as such
  by the eval (`original_errors`).

OpenHands asks its model for a summary with its own sections (USER_CONTEXT, TASK_TRACKING,
COMPLETED, PENDING, CURRENT_STATE, …); the lab writes it with ours, given the budget our
pipeline's defaults would give: only the policy above is OpenHands'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from compaction.lab.peers.base import (
    PeerRun,
    PeerState,
    check_ranges,
    default_summary_budget,
    folded_fates,
    previous_summaries,
    unchanged,
    write_summary,
)
from compaction.messages import Message, content_text, tool_calls, with_content
from compaction.phases.assemble import summary_content
from compaction.result import Fate
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter


def filter_unmatched_tool_calls(
    messages: Sequence[Message], origins: Sequence[int | None]
) -> tuple[list[Message], list[int | None], dict[int, str]]:
    """The view as V0's ConversationMemory sends it: unmatched calls and results removed.

    Returns the messages, their origins, and the fate of each input index the filter changed
    (`removed`: the message is gone; `stripped`: it lost the calls that had no result).
    """
    call_ids = {
        call.get("id")
        for message in messages
        if message.get("role") == "assistant"
        for call in tool_calls(message)
        if call.get("id")
    }
    result_ids = {
        message.get("tool_call_id")
        for message in messages
        if message.get("role") == "tool" and message.get("tool_call_id")
    }
    kept: list[Message] = []
    kept_origins: list[int | None] = []
    fates: dict[int, str] = {}
    for message, origin in zip(messages, origins, strict=True):
        fate: str | None = None
        if message.get("role") == "tool" and message.get("tool_call_id"):
            if message["tool_call_id"] not in call_ids:
                fate = Fate.ORPHAN_REMOVED
        elif message.get("role") == "assistant" and tool_calls(message):
            calls = tool_calls(message)
            matched = [call for call in calls if call.get("id") in result_ids]
            if not matched:
                fate = Fate.ORPHAN_REMOVED
            elif len(matched) < len(calls):
                fate = Fate.CALL_STRIPPED
                message = {**message, "tool_calls": matched}
        if fate is not None and origin is not None:
            fates[origin] = fate
        if fate != Fate.ORPHAN_REMOVED:
            kept.append(message)
            kept_origins.append(origin)
    return kept, kept_origins, fates


@dataclass(frozen=True)
class OpenHands:
    """OpenHands V0 LLMSummarizingCondenser with the default condenser's settings."""

    name: ClassVar[str] = "openhands"
    version: ClassVar[str] = (
        "OpenHands V0 LLMSummarizingCondenser (default condenser), prompt built by "
        "ConversationMemory (unmatched tool calls and results filtered)"
    )
    trigger_kind: ClassVar[str] = "events"
    estimate: ClassVar[str | None] = None

    max_size: int = 120
    keep_first: int = 4
    max_event_chars: int = 10_000

    def __post_init__(self) -> None:
        check_ranges(
            self, {"max_size": (4, None), "keep_first": (0, None), "max_event_chars": (1, None)}
        )
        if self.keep_first + 1 >= self.max_size // 2:
            from compaction.errors import ConfigError

            raise ConfigError(
                f"openhands.keep_first ({self.keep_first}) must leave room in max_size // 2 "
                f"({self.max_size // 2}) for the summary and at least one recent event"
            )

    def threshold(self, window: int) -> int:
        """The event count above which it condenses (the window plays no part)."""
        del window
        return self.max_size

    def window_for(self, target_tokens: int) -> int:
        # The window decides nothing here; the one our pipeline would use at this target.
        return math.ceil(target_tokens / 0.5)

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        del tokens, window, state
        return len(messages) > self.max_size

    def compact(
        self,
        messages: Sequence[Message],
        window: int,
        counter: TokenCounter,
        summarizer: Summarizer,
        state: PeerState | None = None,
    ) -> PeerRun:
        del window
        state = state if state is not None else PeerState()
        original = list(messages)
        tokens_before = counter.count_messages(original)
        n = len(original)
        head = min(self.keep_first, n)
        from_tail = self.max_size // 2 - head - 1
        tail_start = max(head, n - from_tail)
        if tail_start <= head:
            return unchanged(
                self.name,
                original,
                tokens_before,
                f"{n} events: nothing between the first {head} and the last {from_tail}",
            )
        summaries = [i for i in previous_summaries(original) if head <= i < tail_start]
        previous = state.previous_summary
        if summaries and previous is None:
            previous = content_text(original[summaries[-1]])
        forgotten = [i for i in range(head, tail_start) if i not in set(summaries)]
        cut = [
            with_content(original[i], content_text(original[i])[: self.max_event_chars])
            if len(content_text(original[i])) > self.max_event_chars
            else original[i]
            for i in forgotten
        ]
        budget = default_summary_budget(sum(counter.count_message(m) for m in cut))
        text, parsed, fallback = write_summary(
            cut,
            cut,
            budget,
            summarizer,
            counter,
            original,
            previous,
            marks=state.marks if state is not None else None,
        )
        summary_message: Message = {
            "role": "user",
            "content": summary_content(text, is_marker=parsed is None),
        }
        view = [*(dict(m) for m in original[:head]), summary_message]
        view += [dict(m) for m in original[tail_start:]]
        output, origins, filtered = filter_unmatched_tool_calls(
            view, [*range(head), None, *range(tail_start, n)]
        )
        fates: dict[int, str] = dict.fromkeys(range(n), Fate.KEPT)
        fates.update(folded_fates(head, tail_start, summaries))
        fates.update({i: Fate.PREVIOUS_SUMMARY_REPLACED for i in summaries})
        fates.update(filtered)
        state.compactions += 1
        if parsed is not None:
            state.previous_summary = text
        return PeerRun(
            peer=self.name,
            messages=output,
            origins=origins,
            fates=fates,
            tokens_before=tokens_before,
            tokens_after=counter.count_messages(output),
            summary_text=text,
            summary=parsed,
            fallback=fallback,
            notes=[
                f"{n} events → {len(view)}: the first {head}, the summary, "
                f"the last {n - tail_start}",
                *(
                    [
                        f"{len(filtered)} message(s) lost an unmatched tool call or result "
                        "when the prompt was built (ConversationMemory's filter)"
                    ]
                    if filtered
                    else []
                ),
            ],
            details={
                "events_before": n,
                "events_after": len(view),
                "filtered_unmatched": len(filtered),
                "max_size": self.max_size,
                "keep_first": head,
                "tail_start": tail_start,
                "summary_budget": budget,
                "summarizer": getattr(summarizer, "name", type(summarizer).__name__),
            },
        )
