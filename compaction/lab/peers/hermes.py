"""hermes: NousResearch hermes-agent's ContextCompressor, v0.18.2 (from ../shared/spec/PEERS.md).

The policy, as PEERS.md describes v0.18.2:

- Trigger: `threshold_ratio` 0.50 of the window, raised to `small_window_ratio` 0.75 for windows
  under `small_window_limit` 512K tokens, capped at `threshold_cap` 256,000 tokens. hermes counts
  tokens as characters / 4, so every decision here uses that estimate (the lab's measures use
  the lab's counter, like every strategy's).
- Phase 1: tool results before the protected tail (the last `protect_last_n` messages) and
  longer than `prune_min_chars` 200 characters become a one-line placeholder.
- Head: the first `protect_first_n` 3 messages. Tail: a token budget of `tail_ratio` 0.20 of the
  threshold, walked back from the end over the *pruned* messages (so cheap placeholders let many
  messages in), with at least `protect_last_n` 20 messages; boundaries aligned so a tool group
  stays whole.
- The last-assistant rule: everything from the last assistant message that has text onward is
  kept, whatever the budget. On long agentic runs that message may be hundreds of messages back.
- Summary budget: `summary_ratio` 20% of the compressed content, at least `summary_min` 2,000,
  at most min(`summary_window_share` 5% of the window, `summary_max`). PEERS.md gives the
  maximum as 10,000–12,000 "by version" without saying which is v0.18.2's: 12,000 is the
  default here, and a sweepable parameter. Iterative update of the previous summary.
- Assembly: the summary's role chosen against both neighbours, else merged into the first tail
  message; orphan results removed and stub results inserted for calls that lost theirs (the
  engine's Phase 5 does exactly this; it is hermes' sanitising, which our seed was taken from).
- Failure: a deterministic fallback summary (here: the extractive summariser). The cooldown
  (60 s → 300 s → 900 s) needs wall-clock time and a failing model, so the lab does not model it.
- Anti-thrash: automatic compaction stops after `max_ineffective` 2 ineffective attempts (less
  than 10% freed, as our own rule).

hermes writes the summary with its own model; the lab writes it with ours (`write_summary`):
only the policy above is hermes'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from compaction.lab.peers.base import (
    PLACEHOLDER,
    PeerRun,
    PeerState,
    check_ranges,
    clamp_budget,
    folded_fates,
    has_text,
    previous_summaries,
    unchanged,
    write_summary,
)
from compaction.messages import Message, content_text, group_end, prepend_text, with_content
from compaction.phases.assemble import choose_role, summary_content
from compaction.phases.boundaries import align_backward
from compaction.phases.cleanup import cleanup
from compaction.result import KEPT, MERGED, PREVIOUS_SUMMARY
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter, make_counter

PLACEHOLDER_TEXT = "[old tool output cleared to save context: {chars:,} characters]"
INEFFECTIVE_PCT = 10.0


@dataclass(frozen=True)
class Hermes:
    """hermes-agent's ContextCompressor, v0.18.2 (see the module doc for every rule)."""

    name: ClassVar[str] = "hermes"
    version: ClassVar[str] = "hermes-agent v0.18.2"
    trigger_kind: ClassVar[str] = "tokens"
    estimate: ClassVar[str | None] = "rough"

    threshold_ratio: float = 0.50
    small_window_ratio: float = 0.75
    small_window_limit: int = 512_000
    threshold_cap: int = 256_000
    protect_first_n: int = 3
    protect_last_n: int = 20
    tail_ratio: float = 0.20
    prune_min_chars: int = 200
    summary_ratio: float = 0.20
    summary_min: int = 2_000
    summary_max: int = 12_000
    summary_window_share: float = 0.05
    max_ineffective: int = 2

    def __post_init__(self) -> None:
        check_ranges(
            self,
            {
                "threshold_ratio": (0.01, 1.0),
                "small_window_ratio": (0.01, 1.0),
                "small_window_limit": (0, None),
                "threshold_cap": (1, None),
                "protect_first_n": (0, None),
                "protect_last_n": (1, None),
                "tail_ratio": (0.0, 1.0),
                "prune_min_chars": (0, None),
                "summary_ratio": (0.0, 1.0),
                "summary_min": (1, None),
                "summary_max": (1, None),
                "summary_window_share": (0.0, 1.0),
                "max_ineffective": (1, None),
            },
        )

    def threshold(self, window: int) -> int:
        small = window < self.small_window_limit
        ratio = self.small_window_ratio if small else self.threshold_ratio
        return min(int(window * ratio), self.threshold_cap)

    def window_for(self, target_tokens: int) -> int:
        """The window at which hermes' trigger fires at `target_tokens` (its budgets derive from
        the threshold, so this puts the lab's shared target where hermes would compact)."""
        small = math.ceil(target_tokens / self.small_window_ratio)
        if small < self.small_window_limit:
            return small
        return max(self.small_window_limit, math.ceil(target_tokens / self.threshold_ratio))

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        del messages  # `tokens` is hermes' own estimate: characters / 4
        if state.ineffective >= self.max_ineffective:
            return False
        return tokens >= self.threshold(window)

    def compact(
        self,
        messages: Sequence[Message],
        window: int,
        counter: TokenCounter,
        summarizer: Summarizer,
        state: PeerState | None = None,
    ) -> PeerRun:
        state = state if state is not None else PeerState()
        original = list(messages)
        tokens_before = counter.count_messages(original)
        n = len(original)
        rough = make_counter("rough")
        head_end = group_end(original, min(self.protect_first_n, n))

        # Phase 1: placeholders for the long tool outputs before the protected tail.
        prune_before = max(0, n - self.protect_last_n)
        pruned = list(original)
        fates: dict[int, str] = {}
        for index in range(prune_before):
            message = original[index]
            text = content_text(message)
            if message.get("role") == "tool" and len(text) > self.prune_min_chars:
                pruned[index] = with_content(message, PLACEHOLDER_TEXT.format(chars=len(text)))
                fates[index] = PLACEHOLDER

        # The tail: a budget measured on the pruned messages, at least protect_last_n messages.
        threshold = self.threshold(window)
        budget = int(threshold * self.tail_ratio)
        tail_start = n
        used = 0
        while tail_start > head_end:
            cost = rough.count_message(pruned[tail_start - 1])
            if used + cost > budget:
                break
            used += cost
            tail_start -= 1
        tail_start = min(tail_start, max(head_end, n - self.protect_last_n))
        budget_tail_start = align_backward(pruned, tail_start, head_end)
        # The last-assistant rule: from the last assistant message with text onward, all kept.
        last_text = next(
            (
                i
                for i in range(n - 1, head_end - 1, -1)
                if original[i].get("role") == "assistant" and has_text(original[i])
            ),
            None,
        )
        tail_start = budget_tail_start
        if last_text is not None and last_text < tail_start:
            tail_start = last_text
        details = {
            "threshold": threshold,
            "tail_budget": budget,
            "head_end": head_end,
            "budget_tail_start": budget_tail_start,
            "last_assistant_text": last_text,
            "tail_start": tail_start,
            "tail_messages": n - tail_start,
            "placeholders": len(fates),
        }
        if tail_start <= head_end:
            return self._pruned_only(original, pruned, fates, tokens_before, counter, details)

        summaries = [i for i in previous_summaries(original) if head_end <= i < tail_start]
        previous = state.previous_summary
        if summaries and previous is None:
            previous = content_text(original[summaries[-1]])
        middle = [i for i in range(head_end, tail_start) if i not in set(summaries)]
        folded_tokens = sum(rough.count_message(pruned[i]) for i in middle)
        summary_budget = clamp_budget(
            folded_tokens,
            self.summary_ratio,
            self.summary_min,
            min(int(window * self.summary_window_share), self.summary_max),
        )
        text, parsed, fallback = write_summary(
            [pruned[i] for i in middle],
            [original[i] for i in middle],
            summary_budget,
            summarizer,
            counter,
            original,
            previous,
            marks=state.marks if state is not None else None,
        )
        body = summary_content(text, is_marker=parsed is None)
        head = pruned[:head_end]
        tail = pruned[tail_start:]
        last_head_role = next(
            (str(m.get("role")) for m in reversed(head) if m.get("role") != "system"), None
        )
        role, reason = choose_role(last_head_role, str(tail[0].get("role")) if tail else None)
        origins: list[int | None] = list(range(head_end))
        if role is not None or not tail:
            assembled = [*head, {"role": role or "user", "content": body}, *tail]
            origins += [None, *range(tail_start, n)]
        else:
            merged = with_content(tail[0], prepend_text(tail[0].get("content"), body))
            assembled = [*head, merged, *tail[1:]]
            origins += list(range(tail_start, n))
            fates[tail_start] = MERGED
        cleaned, _fixes = cleanup(assembled, origins, "stub", original)
        fates.update(folded_fates(head_end, tail_start, summaries))
        fates.update({i: PREVIOUS_SUMMARY for i in summaries})
        fates.update(cleaned.fates)
        for index in range(n):
            fates.setdefault(index, KEPT)
        tokens_after = counter.count_messages(cleaned.messages)
        savings = (tokens_before - tokens_after) / tokens_before * 100 if tokens_before else 0.0
        state.ineffective = state.ineffective + 1 if savings < INEFFECTIVE_PCT else 0
        state.compactions += 1
        if parsed is not None:
            state.previous_summary = text
        notes = [f"summary role: {reason}"]
        if last_text is not None and last_text < budget_tail_start:
            notes.append(
                f"the last assistant message with text is message {last_text}: the tail runs "
                f"from there ({n - last_text} messages), not from {budget_tail_start} where "
                f"its {budget:,}-token budget ended"
            )
        return PeerRun(
            peer=self.name,
            messages=cleaned.messages,
            origins=list(cleaned.origins),
            fates=fates,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            summary_text=text,
            summary=parsed,
            fallback=fallback,
            notes=notes,
            details={
                **details,
                "summary_budget": summary_budget,
                "summarizer": getattr(summarizer, "name", type(summarizer).__name__),
                "ineffective": state.ineffective,
            },
        )

    def _pruned_only(
        self,
        original: list[Message],
        pruned: list[Message],
        fates: dict[int, str],
        tokens_before: int,
        counter: TokenCounter,
        details: dict[str, Any],
    ) -> PeerRun:
        """Nothing between head and tail: the pruned conversation, when pruning changed it."""
        if not fates:
            run = unchanged(
                self.name, original, tokens_before, "nothing between the head and the tail"
            )
            run.details = details
            return run
        return PeerRun(
            peer=self.name,
            messages=pruned,
            origins=list(range(len(pruned))),
            fates={index: fates.get(index, KEPT) for index in range(len(original))},
            tokens_before=tokens_before,
            tokens_after=counter.count_messages(pruned),
            notes=[
                "after pruning, everything past the head fits the tail budget: nothing to "
                "summarise, the pruned conversation is the result"
            ],
            details=details,
        )
