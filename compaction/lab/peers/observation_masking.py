"""observation-masking: JetBrains' observation masking ("The Complexity Trap", NeurIPS 2025
DL4Code), from ../shared/spec/PEERS.md.

The policy: keep every agent action and all its reasoning; replace each observation (a tool
output) older than the last `window_turns` turns with a one-line placeholder; write no summary.
It has no trigger: the mask applies at every model call, so the context grows only by the
actions and the last M turns' observations.

What PEERS.md leaves open, and how the lab reads it:
- M: PEERS.md does not give it. `window_turns` 10 is the setting the paper reports for its
  SWE-agent runs (secondary: from the paper's description, not from JetBrains' code).
- A turn is one assistant message (an action); its observations are the tool results that answer
  its calls. A text-only transcript (no tool results) has nothing to mask.
- The placeholder text is ours: it says how many lines were omitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from compaction.lab.peers.base import PLACEHOLDER, PeerRun, PeerState, check_ranges, unchanged
from compaction.messages import Message, content_text, with_content
from compaction.result import Fate
from compaction.summarizers.base import Summarizer
from compaction.tokens import TokenCounter

PLACEHOLDER_TEXT = "[old observation omitted: {lines:,} lines]"


def masked(message: Message) -> Message:
    return with_content(
        message, PLACEHOLDER_TEXT.format(lines=len(content_text(message).splitlines()))
    )


@dataclass(frozen=True)
class ObservationMasking:
    """Observation masking with a window of the last M turns (see the module doc)."""

    name: ClassVar[str] = "observation-masking"
    version: ClassVar[str] = "JetBrains, The Complexity Trap (NeurIPS 2025 DL4Code)"
    trigger_kind: ClassVar[str] = "none"
    estimate: ClassVar[str | None] = None

    window_turns: int = 10

    def __post_init__(self) -> None:
        check_ranges(self, {"window_turns": (0, None)})

    def threshold(self, window: int) -> int:
        """No threshold: the mask applies at every call (0 means always)."""
        del window
        return 0

    def window_for(self, target_tokens: int) -> int:
        return max(1, target_tokens * 2)

    def should_compact(
        self, tokens: int, messages: Sequence[Message], window: int, state: PeerState
    ) -> bool:
        del tokens, messages, window, state
        return True

    def masked_indices(self, messages: Sequence[Message]) -> list[int]:
        """The tool results whose turn is older than the last `window_turns` turns."""
        turns = 0  # assistant messages seen so far from the newest back
        found: list[int] = []
        pending: list[int] = []  # results after the assistant message being looked for
        for index in range(len(messages) - 1, -1, -1):
            role = messages[index].get("role")
            if role == "tool":
                pending.append(index)
            elif role == "assistant":
                turns += 1
                if turns > self.window_turns:
                    found.extend(pending)
                pending = []
        return sorted(found)

    def compact(
        self,
        messages: Sequence[Message],
        window: int,
        counter: TokenCounter,
        summarizer: Summarizer,
        state: PeerState | None = None,
    ) -> PeerRun:
        del window, summarizer
        original = list(messages)
        tokens_before = counter.count_messages(original)
        indices = self.masked_indices(original)
        if not indices:
            return unchanged(
                self.name,
                original,
                tokens_before,
                f"no observation older than the last {self.window_turns} turns",
            )
        output = [dict(m) for m in original]
        for index in indices:
            output[index] = masked(original[index])
        fates: dict[int, str] = dict.fromkeys(range(len(original)), Fate.KEPT)
        fates.update(dict.fromkeys(indices, PLACEHOLDER))
        if state is not None:
            state.compactions += 1
        return PeerRun(
            peer=self.name,
            messages=output,
            origins=list(range(len(original))),
            fates=fates,
            tokens_before=tokens_before,
            tokens_after=counter.count_messages(output),
            notes=[f"{len(indices)} observations masked (older than {self.window_turns} turns)"],
            details={"masked": len(indices), "window_turns": self.window_turns},
        )
