"""Phase 2: head (extended over a tool group), the token walk (soft ceiling, min_tail_messages,
never into the head), alignment, and the last-user anchor with its recorded reason."""

from __future__ import annotations

from typing import Any

from engine_helpers import assistant, call, calls, system, tool, user

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, detail, stored
from compaction.phases.boundaries import (
    align_backward,
    boundaries_phase,
    find_boundaries,
    find_head_end,
    walk_tail,
)
from compaction.tokens import RoughCounter
from compaction.tokens.tally import TokenTally

# Ceiling = int(int(int(1000 * 0.5) * 0.2) * 1.5) = 150 tokens.
CONFIG = CompactionConfig(context_length=1_000)


def test_ceiling_of_the_test_config() -> None:
    assert (CONFIG.tail_budget_tokens, CONFIG.tail_soft_ceiling) == (100, 150)


def test_head_is_the_first_n_messages() -> None:
    messages = [system(), user("a"), assistant("b"), user("c"), assistant("d")]
    assert find_head_end(messages, 3) == 3
    assert find_head_end(messages, 10) == 5
    assert find_head_end(messages[1:], 0) == 0


def test_the_system_message_is_always_in_the_head() -> None:
    # protect_first_n=0 summarised the system prompt away (issue 21); hermes keeps it too.
    messages = [system(), user("a"), assistant("b"), user("c"), assistant("d")]
    assert find_head_end(messages, 0) == 1


def test_head_extends_over_a_tool_group() -> None:
    messages = [
        system(),
        user("a"),
        calls(call("1", "x"), call("2", "y")),
        tool("1", "r1"),
        tool("2", "r2"),
        assistant("done"),
    ]
    assert find_head_end(messages, 3) == 5
    assert find_head_end(messages, 4) == 5
    assert find_head_end(messages, 5) == 5


def test_walk_stops_at_the_soft_ceiling() -> None:
    tokens = [10] * 3 + [40] * 10
    # 40 * 3 = 120 <= 150; a 4th would make 160 > 150.
    assert walk_tail(tokens, 3, CONFIG) == (10, 120)


def test_walk_exceeds_the_ceiling_until_min_tail_messages() -> None:
    tokens = [10, 10, 10, 500, 500, 500, 500]
    assert walk_tail(tokens, 3, CONFIG) == (4, 1_500)
    assert walk_tail(tokens, 3, CONFIG.replace(min_tail_messages=1)) == (6, 500)
    assert walk_tail(tokens, 3, CONFIG.replace(min_tail_messages=4)) == (3, 2_000)


def test_walk_never_enters_the_head() -> None:
    tokens = [1] * 6
    assert walk_tail(tokens, 3, CONFIG) == (3, 3)
    assert walk_tail(tokens, 3, CONFIG.replace(min_tail_messages=10)) == (3, 3)


def test_align_moves_the_cut_to_the_groups_assistant() -> None:
    messages = [
        system(),
        user("a"),
        assistant("b"),
        calls(call("1", "x"), call("2", "y")),
        tool("1", "r"),
        tool("2", "r"),
        user("c"),
    ]
    assert align_backward(messages, 5, 3) == 3
    assert align_backward(messages, 4, 3) == 3
    assert align_backward(messages, 6, 3) == 6  # between groups: unchanged
    assert align_backward(messages, 3, 3) == 3


def tokens_for(messages: list[dict[str, Any]], big: set[int], size: int = 100) -> list[int]:
    return [size if i in big else 10 for i in range(len(messages))]


def test_alignment_move_is_recorded() -> None:
    messages = [
        system(),
        user("task"),
        assistant("ok"),
        assistant("thinking"),
        calls(call("1", "x"), call("2", "y")),
        tool("1", "r1"),
        tool("2", "r2"),
        user("latest"),
        assistant("answer"),
    ]
    # Walk from the end: 8,7,6 (30 tokens), 5 (+100 = 130), 4 (+100 > 150): raw stop at 5.
    tokens = [10, 10, 10, 10, 100, 100, 10, 10, 10]
    bounds = find_boundaries(messages, tokens, CONFIG)
    assert bounds.raw_walk_stop == 5
    assert bounds.tail_start == 4
    assert bounds.moves == [
        {
            "from": 5,
            "to": 4,
            "reason": "alignment: the cut fell inside a tool group, so it moved back to the "
            "group's assistant message and the whole group stays in the tail",
        }
    ]
    assert bounds.tail_tokens == sum(tokens[4:])
    assert [bounds.region(i) for i in (2, 3, 4)] == ["head", "middle", "tail"]


def test_last_user_anchor_pins_the_request_when_the_move_would_drag_work_in() -> None:
    messages = [
        system(),
        user("first"),
        assistant("ok"),
        user("the latest request: refactor auth"),
        calls(call("1", "x")),
        tool("1", "big output"),
        assistant("step"),
        calls(call("2", "y")),
        tool("2", "big output 2"),
        assistant("done"),
    ]
    tokens = [10, 10, 10, 10, 10, 100, 10, 10, 100, 10]
    bounds = find_boundaries(messages, tokens, CONFIG)
    # 9, 8, 7, 6 take 130 tokens; 5 would make 230 > 150 with 4 messages held.
    assert bounds.raw_walk_stop == 6
    # Moving the cut to 3 would drag 4, 5 (100 tokens) into the tail: 230 > 150. Pinned.
    assert bounds.tail_start == 6
    assert (bounds.pinned, bounds.anchor) == (3, "pinned")
    assert "pinned instead" in bounds.anchor_reason
    assert bounds.moves == []
    assert bounds.last_user == 3
    assert list(bounds.middle) == [4, 5]
    assert bounds.region(3) == "tail"  # kept verbatim


def test_last_user_anchor_moves_the_cut_when_it_drags_nothing() -> None:
    messages = [
        system(),
        user("first"),
        assistant("ok"),
        calls(call("1", "x")),
        tool("1", "big output"),
        user("the latest request: refactor auth"),
        assistant("step"),
        calls(call("2", "y")),
        tool("2", "big output 2"),
        assistant("done"),
    ]
    tokens = [10, 10, 10, 10, 10, 100, 10, 10, 100, 10]
    bounds = find_boundaries(messages, tokens, CONFIG)
    assert bounds.raw_walk_stop == 6
    assert (bounds.tail_start, bounds.anchor, bounds.pinned) == (5, "moved", None)
    assert bounds.moves[0]["from"] == 6 and bounds.moves[0]["to"] == 5
    assert bounds.moves[0]["reason"].startswith(
        "anchor: the latest user message would have been summarised, so the cut moved back"
    )
    assert list(bounds.middle) == [3, 4]


def test_empty_middle_when_everything_fits() -> None:
    messages = [system(), user("a"), assistant("b"), user("c"), assistant("d")]
    bounds = find_boundaries(messages, [10] * 5, CONFIG)
    assert (bounds.head_end, bounds.tail_start) == (3, 3)


def test_boundaries_phase_details() -> None:
    messages = [system(), user("a"), assistant("b")] + [
        m for i in range(5) for m in (user(f"u{i}"), assistant(f"a{i}"))
    ]
    tokens = [10, 10, 10] + [60] * 10
    phase, bounds = boundaries_phase(messages, tokens, CONFIG)
    details = phase.details
    assert details["head_end"] == 3
    # 60 + 60 = 120; the third message takes the tail past 150, but min_tail_messages is 3.
    assert details["raw_walk_stop"] == 10
    assert details["tail_start"] == 10 == bounds.tail_start
    assert details["tail_budget_tokens"] == 100
    assert details["tail_soft_ceiling"] == 150
    assert (details["head_tokens"], details["middle_tokens"], details["tail_tokens"]) == (
        30,
        420,
        180,
    )
    assert (details["head_messages"], details["middle_messages"], details["tail_messages"]) == (
        3,
        7,
        3,
    )
    assert details["moves"] == []
    assert details["last_user_index"] == 11
    assert details["regions"] == ["head"] * 3 + ["middle"] * 7 + ["tail"] * 3
    assert phase.tokens_before == phase.tokens_after == sum(tokens)


def test_a_pinned_requests_reason_counts_the_work_after_it_when_read() -> None:
    messages = [
        system(),
        user("first"),
        assistant("ok"),
        user("the latest request: refactor auth"),
        calls(call("1", "x")),
        tool("1", "big output " * 40),
        assistant("step"),
        calls(call("2", "y")),
        tool("2", "big output 2 " * 40),
        assistant("done"),
    ]
    counter = RoughCounter()
    eager, eager_bounds = boundaries_phase(
        messages, [counter.count_message(m) for m in messages], CONFIG
    )
    assert eager_bounds.anchor == "pinned"
    tally = TokenTally(messages, counter)
    result, bounds = boundaries_phase(messages, tally, CONFIG)
    # The decision needed no exact count of the work between the request and the cut (4, 5);
    # the reason, which sums every token after the request, waits for a reader.
    assert isinstance(stored(bounds, "anchor_reason"), Deferred)
    assert detail(result, "anchor") == "pinned"
    assert tally.known()[4] is None and tally.known()[5] is None
    assert result.details == eager.details
    assert "taking it to 272 tokens past the soft ceiling of 150" in result.details["anchor_reason"]
    assert bounds.anchor_reason == eager_bounds.anchor_reason
    assert tally.known()[4] is not None
