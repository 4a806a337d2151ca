"""Phase 2: where the protected head ends and the token-budgeted tail begins.

The tail is a token budget, not a message count, so a few huge messages cannot push out the
user's recent turns and many small ones cannot fill the window. Every move that alignment or the
last-user anchor makes is recorded with its reason, because "why did my message get summarised?"
is the question users bring to this tool.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.messages import Message, has_tool_calls, last_user_index
from compaction.result import PhaseResult


@dataclass
class Boundaries:
    head_end: int  # messages[:head_end] is the head
    tail_start: int  # messages[tail_start:] is the tail
    raw_walk_stop: int  # where the token walk alone stopped
    tail_tokens: int
    moves: list[dict[str, Any]] = field(default_factory=list)
    last_user: int | None = None

    @property
    def middle(self) -> range:
        return range(self.head_end, self.tail_start)

    def region(self, index: int) -> str:
        if index < self.head_end:
            return "head"
        if index < self.tail_start:
            return "middle"
        return "tail"


def find_head_end(messages: Sequence[Message], protect_first_n: int) -> int:
    """The first N messages, extended to the end of a tool group the head would split."""
    n = len(messages)
    head_end = min(protect_first_n, n)
    if 0 < head_end < n:
        previous = messages[head_end - 1]
        if has_tool_calls(previous) or previous.get("role") == "tool":
            while head_end < n and messages[head_end].get("role") == "tool":
                head_end += 1
    return head_end


def walk_tail(tokens: Sequence[int], head_end: int, config: CompactionConfig) -> tuple[int, int]:
    """Walk back from the last message adding tokens; returns (raw stop, tail tokens).

    Stops before the message that would take the total past the soft ceiling, but only once the
    tail already holds `min_tail_messages`; never walks into the head.
    """
    ceiling = config.tail_soft_ceiling
    n = len(tokens)
    tail_start = n
    total = 0
    for index in range(n - 1, head_end - 1, -1):
        held = n - tail_start
        if total + tokens[index] > ceiling and held >= config.min_tail_messages:
            break
        total += tokens[index]
        tail_start = index
    return tail_start, total


def align_backward(messages: Sequence[Message], cut: int, head_end: int) -> int:
    """Move a cut that lands inside a tool group back to the group's assistant message."""
    if cut >= len(messages) or cut <= head_end:
        return cut
    if messages[cut].get("role") != "tool":
        return cut  # the cut is between groups: nothing would be split
    while cut - 1 >= head_end and messages[cut - 1].get("role") == "tool":
        cut -= 1
    if cut - 1 >= head_end and has_tool_calls(messages[cut - 1]):
        cut -= 1
    return cut


def find_boundaries(
    messages: Sequence[Message], tokens: Sequence[int], config: CompactionConfig
) -> Boundaries:
    head_end = find_head_end(messages, config.protect_first_n)
    raw_stop, _ = walk_tail(tokens, head_end, config)
    cut = raw_stop
    moves: list[dict[str, Any]] = []

    aligned = align_backward(messages, cut, head_end)
    if aligned != cut:
        moves.append(
            {
                "from": cut,
                "to": aligned,
                "reason": "alignment: the cut fell inside a tool group, so it moved back to the "
                "group's assistant message and the whole group stays in the tail",
            }
        )
        cut = aligned

    last_user = last_user_index(messages, head_end)
    if last_user is not None and last_user < cut:
        moves.append(
            {
                "from": cut,
                "to": last_user,
                "reason": "anchor: the latest user message would have been summarised, so the "
                "cut moved back to keep it verbatim in the tail",
            }
        )
        # A user message never sits inside a tool group, so no alignment is needed after this.
        cut = last_user
    tail_tokens = sum(tokens[cut:])
    return Boundaries(
        head_end=head_end,
        tail_start=cut,
        raw_walk_stop=raw_stop,
        tail_tokens=tail_tokens,
        moves=moves,
        last_user=last_user_index(messages),
    )


def boundaries_phase(
    messages: list[Message], tokens: Sequence[int], config: CompactionConfig
) -> tuple[PhaseResult, Boundaries]:
    started = time.perf_counter()
    bounds = find_boundaries(messages, tokens, config)
    total = sum(tokens)
    head_tokens = sum(tokens[: bounds.head_end])
    middle_tokens = sum(tokens[bounds.head_end : bounds.tail_start])
    details = {
        "head_end": bounds.head_end,
        "tail_start": bounds.tail_start,
        "raw_walk_stop": bounds.raw_walk_stop,
        "tail_budget_tokens": config.tail_budget_tokens,
        "tail_soft_ceiling": config.tail_soft_ceiling,
        "min_tail_messages": config.min_tail_messages,
        "protect_first_n": config.protect_first_n,
        "head_tokens": head_tokens,
        "middle_tokens": middle_tokens,
        "tail_tokens": bounds.tail_tokens,
        "head_messages": bounds.head_end,
        "middle_messages": bounds.tail_start - bounds.head_end,
        "tail_messages": len(messages) - bounds.tail_start,
        "last_user_index": bounds.last_user,
        "moves": bounds.moves,
        "regions": [bounds.region(i) for i in range(len(messages))],
    }
    result = PhaseResult(
        name="boundaries",
        messages=messages,
        origins=list(range(len(messages))),
        tokens_before=total,
        tokens_after=total,
        details=details,
        duration_s=time.perf_counter() - started,
    )
    return result, bounds
