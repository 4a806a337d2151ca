"""gemini-cli: Gemini CLI's `chatCompressionService.ts`, from ../shared/spec/PEERS.md.

The policy, as PEERS.md describes it:

- Trigger: `threshold_ratio` 0.5 of the model's limit, in the version read. The default moved
  since: google-gemini/gemini-cli PR #12306 lowered it to 0.2, and issue #23906 (open) is still
  about setting it to 20% (PEERS.md). This strategy names 0.5, the threshold of the version its
  rules were read from; `gemini-cli.threshold_ratio=0.2` (a sweep axis, or `make_peer`) is the
  newer default. Forced at the lab's shared target (eval) the threshold changes nothing: the
  window is derived from it (`window_for`), and the rest of the policy is measured in shares.
- Older function responses beyond a `response_budget_tokens` 50,000-token reverse budget
  (counted from the newest response back) are truncated to their last lines
  (`truncated_lines`); responses older than `recent_tool_turns` 3 tool turns collapse to a
  `preview_bytes` 2 KB preview with an "N bytes omitted" marker.
- It keeps the last `preserve_fraction` 30% of the history, measured in characters, splitting
  only at a user message that is not a function response: the split is the first such message
  with at least 70% of the characters before it (when none qualifies, the last such message, or
  the whole history when it ends with a model turn that calls no tool). The rest is summarised
  into a `<state_snapshot>`, inserted as a user turn followed by a model acknowledgement.
- A compression whose result is larger than its input is rejected: the history stays as it was.

What PEERS.md leaves open, and how the lab reads it:
- How many last lines a truncated response keeps: `truncated_lines` 30 here.
- Which comes first: the truncation, over the whole history; then the split, on the truncated
  history (so the 30% is of what Gemini would send).
- The system instruction is not part of Gemini's history: the opening system messages are kept.

Gemini asks its model for the snapshot (overall_goal, key_knowledge, file_system_state,
recent_actions, current_plan); the lab writes it with ours, given the budget our pipeline's
defaults would give, inside the same `<state_snapshot>` tags: only the policy is Gemini CLI's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from compaction.lab.peers.base import (
    TRUNCATED,
    PeerRun,
    PeerState,
    check_ranges,
    default_summary_budget,
    leading_system_end,
    previous_summaries,
    text_tokens,
    unchanged,
    write_summary,
)
from compaction.messages import Message, call_arguments, content_text, tool_calls, with_content
from compaction.result import Fate
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter

ACKNOWLEDGEMENT = "Understood: I have the state snapshot and will continue from it."
REJECTED = "the compressed history would be larger than the input ({after:,} > {before:,} tokens)"


def message_chars(message: Message) -> int:
    """Characters Gemini would measure for a message: its text and its calls' arguments."""
    return len(content_text(message)) + sum(len(call_arguments(c)) for c in tool_calls(message))


def last_lines(text: str, lines: int) -> str:
    kept = text.splitlines()[-lines:]
    dropped = len(text.splitlines()) - len(kept)
    return f"[… {dropped:,} earlier lines truncated]\n" + "\n".join(kept)


def preview(text: str, size: int) -> str:
    data = text.encode("utf-8")
    head = data[:size].decode("utf-8", errors="ignore")
    return f"{head}\n[… {len(data) - size:,} bytes omitted]"


@dataclass(frozen=True)
class GeminiCli:
    """Gemini CLI's chat compression (chatCompressionService.ts; see the module doc)."""

    name: ClassVar[str] = "gemini-cli"
    version: ClassVar[str] = (
        "Gemini CLI, chatCompressionService.ts (as PEERS.md describes it), threshold 0.5 "
        "(before PR #12306 lowered the default to 0.2)"
    )
    trigger_kind: ClassVar[str] = "tokens"
    estimate: ClassVar[str | None] = None

    threshold_ratio: float = 0.5
    preserve_fraction: float = 0.3
    response_budget_tokens: int = 50_000
    truncated_lines: int = 30
    recent_tool_turns: int = 3
    preview_bytes: int = 2_048

    def __post_init__(self) -> None:
        check_ranges(
            self,
            {
                "threshold_ratio": (0.01, 1.0),
                "preserve_fraction": (0.0, 1.0),
                "response_budget_tokens": (0, None),
                "truncated_lines": (1, None),
                "recent_tool_turns": (0, None),
                "preview_bytes": (1, None),
            },
        )

    def threshold(self, window: int) -> int:
        return int(window * self.threshold_ratio)

    def window_for(self, target_tokens: int) -> int:
        return math.ceil(target_tokens / self.threshold_ratio)

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        del messages, state
        return tokens >= self.threshold(window)

    def truncate_responses(
        self, messages: Sequence[Message], counter: TokenCounter
    ) -> tuple[list[Message], dict[int, str]]:
        """The history with old function responses cut (the two rules of the module doc)."""
        output = list(messages)
        fates: dict[int, str] = {}
        used = 0
        tool_turns = 0  # assistant messages with calls seen so far, from the newest back
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") == "assistant" and tool_calls(message):
                tool_turns += 1
                continue
            if message.get("role") != "tool":
                continue
            text = content_text(message)
            used += text_tokens(counter, text)
            if used > self.response_budget_tokens and len(text.splitlines()) > self.truncated_lines:
                text = last_lines(text, self.truncated_lines)
                fates[index] = TRUNCATED
            # A result belongs to the tool turn of the nearest call before it: results after
            # `tool_turns` calls counted from the end are that many turns old.
            old = tool_turns >= self.recent_tool_turns
            if old and len(text.encode("utf-8")) > self.preview_bytes:
                text = preview(text, self.preview_bytes)
                fates[index] = TRUNCATED
            if index in fates:
                output[index] = with_content(message, text)
        return output, fates

    def split_point(self, messages: Sequence[Message], start: int) -> int:
        """Where the kept part begins (see the module doc); `start` is the first history index."""
        chars = [message_chars(m) for m in messages]
        total = sum(chars[start:])
        wanted = total * (1 - self.preserve_fraction)
        before = 0
        last_user: int | None = None
        for index in range(start, len(messages)):
            if messages[index].get("role") == "user":
                if before >= wanted:
                    return index
                last_user = index
            before += chars[index]
        last = messages[-1] if messages else None
        if last is not None and last.get("role") == "assistant" and not tool_calls(last):
            return len(messages)
        return last_user if last_user is not None else start

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
        start = leading_system_end(original)
        truncated, fates = self.truncate_responses(original, counter)
        split = self.split_point(truncated, start)
        if split <= start:
            return unchanged(
                self.name, original, tokens_before, "no user message to split at: nothing to do"
            )
        summaries = [i for i in previous_summaries(original) if start <= i < split]
        previous = state.previous_summary
        if summaries and previous is None:
            previous = content_text(original[summaries[-1]])
        older = [i for i in range(start, split) if i not in set(summaries)]
        budget = default_summary_budget(sum(counter.count_message(truncated[i]) for i in older))
        text, parsed, fallback = write_summary(
            [truncated[i] for i in older],
            [truncated[i] for i in older],
            budget,
            summarizer,
            counter,
            original,
            previous,
            marks=state.marks if state is not None else None,
        )
        snapshot: Message = {
            "role": "user",
            "content": f"<state_snapshot>\n{text}\n</state_snapshot>",
        }
        output = [
            *(dict(m) for m in truncated[:start]),
            snapshot,
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
            *(dict(m) for m in truncated[split:]),
        ]
        origins: list[int | None] = [*range(start), None, None, *range(split, n)]
        tokens_after = counter.count_messages(output)
        if tokens_after > tokens_before:
            reason = REJECTED.format(after=tokens_after, before=tokens_before)
            run = unchanged(self.name, original, tokens_before, reason, rejected=reason)
            run.details = {"split": split, "would_be_tokens": tokens_after}
            return run
        all_fates: dict[int, str] = dict.fromkeys(range(n), Fate.KEPT)
        all_fates.update({i: f for i, f in fates.items() if i >= split})
        all_fates.update({i: Fate.FOLDED_INTO_SUMMARY for i in older})
        all_fates.update({i: Fate.PREVIOUS_SUMMARY_REPLACED for i in summaries})
        state.compactions += 1
        if parsed is not None:
            state.previous_summary = text
        kept_truncated = sum(1 for i in fates if i >= split)
        return PeerRun(
            peer=self.name,
            messages=output,
            origins=origins,
            fates=all_fates,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            summary_text=text,
            summary=parsed,
            fallback=fallback,
            notes=[
                f"split at message {split}: the last {n - split} messages kept "
                f"({kept_truncated} of their function responses truncated)"
            ],
            details={
                "split": split,
                "truncated_responses": len(fates),
                "summary_budget": budget,
                "summarizer": getattr(summarizer, "name", type(summarizer).__name__),
            },
        )
