"""Phase 2: where the protected head ends and the token-budgeted tail begins.

The tail is a token budget, not a message count, so a few huge messages cannot push out the
user's recent turns and many small ones cannot fill the window. Every move that alignment or the
last-user anchor makes is recorded with its reason, because "why did my message get summarised?"
is the question users bring to this tool.

The latest user request is always kept verbatim: either the cut moves back to it (`anchor:
"moved"`), or, when that would drag a whole agentic run of tool calls into the tail past the soft
ceiling, the request is *pinned*: the cut stays where the budget put it and the request alone is
kept, placed right after the summary (`anchor: "pinned"`). A middle message the user pinned
(`CompactionConfig.pins`, phases/pins.py) is kept the same way (`Boundaries.kept`), in order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, LazyField, later_details, stored
from compaction.messages import Marks, Message, has_tool_calls, last_user_index
from compaction.result import PhaseResult
from compaction.tokens.tally import TokenTally, at_least, later_if, total_of


@dataclass
class Boundaries:
    head_end: int  # messages[:head_end] is the head
    tail_start: int  # messages[tail_start:] is the tail
    raw_walk_stop: int  # where the token walk alone stopped
    tail_tokens: int
    moves: list[dict[str, Any]] = field(default_factory=list)
    last_user: int | None = None
    #: The latest user request kept verbatim outside the tail (Phase 2 step 4), else None.
    pinned: int | None = None
    #: "moved" | "pinned" | None (the request was already in the tail or head, or there is none).
    anchor: str | None = None
    #: Why the request was moved or pinned, for the report. A pinned request's reason counts
    #: every token after it, so it may be given as a Deferred: written when first read.
    anchor_reason: LazyField[str] = LazyField(str)
    #: The middle messages the user pinned: kept verbatim after the summary, in order.
    kept: tuple[int, ...] = ()

    @property
    def verbatim(self) -> list[int]:
        """The middle messages kept verbatim after the summary (the pinned request and the
        user's pins), in conversation order."""
        found = set(self.kept)
        if self.pinned is not None:
            found.add(self.pinned)
        return sorted(found)

    @property
    def middle(self) -> list[int]:
        """The indices summarised: between head and tail, the pinned request and the user's
        pins excepted."""
        return indices_between(self.head_end, self.tail_start, self.verbatim)

    @property
    def middle_is_empty(self) -> bool:
        # Every index between head and tail kept verbatim (no list made: asked several times).
        inside = {i for i in self.verbatim if self.head_end <= i < self.tail_start}
        return len(inside) >= self.tail_start - self.head_end

    def regions(self, count: int) -> list[str]:
        """`region(i)` of each of `count` messages, made in runs rather than one call each."""
        head_end = min(self.head_end, count)
        tail_start = min(max(self.tail_start, head_end), count)
        regions = ["head"] * head_end + ["middle"] * (tail_start - head_end)
        regions += ["tail"] * (count - tail_start)
        for index in self.verbatim:
            if head_end <= index < tail_start:
                regions[index] = "tail"
        return regions

    def region(self, index: int) -> str:
        """head | middle | tail; the pinned request and the user's pins are kept verbatim, so
        they count as tail."""
        if index < self.head_end:
            return "head"
        if index < self.tail_start and index != self.pinned and index not in self.kept:
            return "middle"
        return "tail"


def indices_between(start: int, stop: int, left_out: Collection[int]) -> list[int]:
    """`[i for i in range(start, stop) if i not in left_out]`, made of runs (a few are left
    out of thousands: the middle with the pinned request and the user's pins)."""
    found: list[int] = []
    begin = start
    for index in sorted(i for i in set(left_out) if start <= i < stop):
        found += range(begin, index)
        begin = index + 1
    found += range(begin, stop)
    return found


def keep_pinned(bounds: Boundaries, pinned: Collection[int]) -> Boundaries:
    """`bounds` with the user's pinned middle messages kept verbatim (`Boundaries.kept`)."""
    bounds.kept = tuple(
        sorted(i for i in pinned if bounds.head_end <= i < bounds.tail_start and i != bounds.pinned)
    )
    return bounds


def find_head_end(messages: Sequence[Message], protect_first_n: int) -> int:
    """The first N messages, extended to the end of a tool group the head would split.

    The system message is always kept, whatever N (hermes does the same): with N = 0 it would
    otherwise be summarised away, and the compaction note would never be added.
    """
    n = len(messages)
    head_end = min(protect_first_n, n)
    if head_end == 0 and n and messages[0].get("role") == "system":
        head_end = 1
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


def _open_after_a_user_turn(
    messages: Sequence[Message], cut: int, moves: list[dict[str, Any]]
) -> int:
    """The cut moved forward past system notices (and results Phase 5 removes) at the start of
    the tail: after a pinned request the tail must open validly after a user turn, and Anthropic
    sends a notice in the middle of a conversation as user text (Aider writes them)."""
    position = cut
    while position < len(messages) and messages[position].get("role") in _NOT_AFTER_A_USER:
        position += 1
    if position == cut or all(messages[i].get("role") == "tool" for i in range(cut, position)):
        return cut
    moves.append(
        {
            "from": cut,
            "to": position,
            "reason": "after the pinned request the tail must open after a user turn, and it "
            "opened with a system notice (user text for Anthropic): the cut moved forward past "
            "it, into the summary",
        }
    )
    return position


_NOT_AFTER_A_USER = ("system", "developer", "tool")


def find_boundaries(
    messages: Sequence[Message],
    tokens: Sequence[int],
    config: CompactionConfig,
    marks: Marks | None = None,
) -> Boundaries:
    """Head, tail and the latest request's place (`marks`: which user turns the harness sent,
    which are never the request the tail anchors to)."""
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

    last_user = last_user_index(messages, head_end, marks)
    pinned: int | None = None
    anchor: str | None = None
    anchor_reason: str | Deferred[str]
    if last_user is None or last_user >= cut:
        anchor_reason = (
            "the latest user message is already in the tail"
            if last_user is not None
            else "no user message after the head: nothing to anchor"
        )
    elif last_user + 1 < cut and at_least(
        tokens, config.tail_soft_ceiling + 1, range(last_user + 1, len(tokens))
    ):
        # The request is kept verbatim either way; what decides is the work the move would drag
        # into the tail with it (by the walk's own rule, any at all passes the ceiling).
        pinned, anchor = last_user, "pinned"
        anchor_reason = _pinned_reason(tokens, last_user, cut, config.tail_soft_ceiling)
        cut = _open_after_a_user_turn(messages, cut, moves)
    else:
        anchor = "moved"
        anchor_reason = (
            "the latest user message would have been summarised, so the cut moved back to keep "
            f"it verbatim in the tail (the tail stays within the soft ceiling of "
            f"{config.tail_soft_ceiling:,})"
        )
        moves.append({"from": cut, "to": last_user, "reason": f"anchor: {anchor_reason}"})
        # A user message never sits inside a tool group, so no alignment is needed after this.
        cut = last_user
    tail_tokens = sum(tokens[cut:])
    return Boundaries(
        head_end=head_end,
        tail_start=cut,
        raw_walk_stop=raw_stop,
        tail_tokens=tail_tokens,
        moves=moves,
        last_user=last_user_index(messages, marks=marks),
        pinned=pinned,
        anchor=anchor,
        anchor_reason=anchor_reason,
    )


def _pinned_reason(
    tokens: Sequence[int], last_user: int, cut: int, ceiling: int
) -> str | Deferred[str]:
    """Why the request was pinned, with the tokens the move would have taken the tail to: the
    sum of every message after the request, which the decision (at_least) did not need counted
    exactly, so with a tally it is counted when the report is read."""

    def reason() -> str:
        return (
            f"moving the cut back to the latest user message (#{last_user}) would drag "
            f"{cut - last_user - 1:,} more messages into the tail, taking it to "
            f"{sum(tokens[last_user + 1 :]):,} tokens past the soft ceiling of "
            f"{ceiling:,}: the request is pinned instead — kept verbatim right "
            "after the summary — and the work between it and the cut goes to the summary"
        )

    return Deferred(reason) if isinstance(tokens, TokenTally) else reason()


def boundaries_phase(
    messages: list[Message],
    tokens: Sequence[int],
    config: CompactionConfig,
    marks: Marks | None = None,
    pinned: Collection[int] = (),
) -> tuple[PhaseResult, Boundaries]:
    """Phase 2 as a PhaseResult; `pinned` are the input indexes the user pinned."""
    started = time.perf_counter()
    bounds = keep_pinned(find_boundaries(messages, tokens, config, marks), pinned)
    total = total_of(tokens)  # figures no decision needs: a tally's counted when read
    head_tokens = sum(tokens[: bounds.head_end])
    pinned_tokens = tokens[bounds.pinned] if bounds.pinned is not None else 0
    kept_tokens = sum(tokens[i] for i in bounds.kept)
    middle_tokens = later_if(
        isinstance(tokens, TokenTally),
        lambda: sum(tokens[bounds.head_end : bounds.tail_start]) - pinned_tokens - kept_tokens,
    )
    reason = stored(bounds, "anchor_reason")
    anchor_reason = None if isinstance(reason, Deferred) else reason  # below: written when read
    details: dict[str, Any] = {
        "head_end": bounds.head_end,
        "tail_start": bounds.tail_start,
        "raw_walk_stop": bounds.raw_walk_stop,
        "tail_budget_tokens": config.tail_budget_tokens,
        "tail_soft_ceiling": config.tail_soft_ceiling,
        "min_tail_messages": config.min_tail_messages,
        "protect_first_n": config.protect_first_n,
        "head_tokens": head_tokens,
        "middle_tokens": None,  # below: counted when read
        "tail_tokens": bounds.tail_tokens,
        "head_messages": bounds.head_end,
        "middle_messages": len(bounds.middle),
        # Kept verbatim after the summary: the tail, the pinned request and the user's pinned
        # middle messages (as region() says).
        "tail_messages": len(messages) - bounds.tail_start + len(bounds.verbatim),
        "last_user_index": bounds.last_user,
        "anchor": bounds.anchor,
        "anchor_reason": anchor_reason,
        "pinned_index": bounds.pinned,
        "pinned_tokens": pinned_tokens,
        "moves": bounds.moves,
        "regions": bounds.regions(len(messages)),
    }
    if pinned:
        # The user's pins: all of them, and those of the middle, kept verbatim after the summary.
        details["user_pinned"] = sorted(pinned)
        details["kept_pinned"] = list(bounds.kept)
        details["kept_pinned_tokens"] = kept_tokens
    result = PhaseResult(
        name="boundaries",
        messages=messages,
        origins=list(range(len(messages))),
        tokens_before=total,
        tokens_after=total,
        details=_with_deferred(details, {"middle_tokens": middle_tokens, "anchor_reason": reason}),
        duration_s=time.perf_counter() - started,
    )
    return result, bounds


def _with_deferred(
    details: dict[str, Any], figures: dict[str, Any]
) -> dict[str, Any] | Deferred[dict[str, Any]]:
    """The details with `figures` in their places: each Deferred one computed when read (the
    middle's tokens, a pinned request's reason)."""
    later: dict[str, Callable[[], Any]] = {}
    for key, value in figures.items():
        if isinstance(value, Deferred):
            later[key] = _reader(value)
        else:
            details[key] = value
    return later_details(details, later) if later else details


def _reader(deferred: Deferred[Any]) -> Callable[[], Any]:
    return lambda: deferred.value
