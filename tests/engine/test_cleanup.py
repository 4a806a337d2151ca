"""Phase 5 on its own: orphan results removed, missing results stubbed right after the group or
their calls stripped, results moved next to their call, duplicate results and call ids."""

from __future__ import annotations

from typing import Any

from engine_helpers import assistant, call, calls, tool, user

from compaction.phases.cleanup import (
    CALL_NEVER_IN_INPUT,
    CALL_REMOVED_TEXT,
    CALL_SUMMARISED,
    cleanup,
)
from compaction.result import MOVED, REMOVED, STRIPPED, STUBBED
from compaction.text.one_liners import STUB_RESULT


def run(messages: list[dict[str, Any]], strategy: str = "stub") -> Any:
    return cleanup(messages, list(range(len(messages))), strategy)


def test_well_formed_input_is_unchanged() -> None:
    messages = [user("a"), calls(call("1", "x"), call("2", "y")), tool("1", "r"), tool("2", "r")]
    phase, fixes = run(messages)
    assert phase.messages == messages
    assert fixes == []
    assert phase.fates == {}


def test_orphan_result_is_removed() -> None:
    messages = [user("a"), tool("gone", "r"), assistant("b")]
    phase, fixes = run(messages)
    assert phase.messages == [messages[0], messages[2]]
    assert phase.origins == [0, 2]
    assert phase.fates == {1: REMOVED}
    assert [(f.kind, f.tool_call_id, f.message_index, f.reason) for f in fixes] == [
        ("removed_result", "gone", 1, "its call was never in the input")
    ]
    assert phase.details["removed_results"] == 1


def test_an_orphans_reason_says_whether_its_call_was_summarised_or_never_there() -> None:
    # After Phase 4 the call may be gone because it was folded into the summary (compaction's
    # doing) or because the input never had it (broken before compaction saw it).
    given = [user("a"), calls(call("folded", "terminal")), tool("folded", "r"), tool("ghost", "r")]
    assembled = [user("summary"), tool("folded", "r"), tool("ghost", "r")]
    phase, fixes = cleanup(assembled, [None, 2, 3], "stub", given)
    assert phase.messages == [assembled[0]]
    assert [(f.tool_call_id, f.message_index, f.reason) for f in fixes] == [
        ("folded", 2, CALL_SUMMARISED),
        ("ghost", 3, CALL_NEVER_IN_INPUT),
    ]
    assert CALL_SUMMARISED == "its call was summarised away with the middle of the conversation"
    assert fixes[1].describe() == (
        "removed the tool result for call 'ghost', message 3: its call was never in the input"
    )


def test_missing_result_gets_a_stub_after_the_group() -> None:
    messages = [
        user("a"),
        calls(call("1", "terminal"), call("2", "read_file")),
        tool("1", "r1"),
        assistant("next"),
    ]
    phase, fixes = run(messages)
    assert phase.messages == [
        messages[0],
        messages[1],
        messages[2],
        {"role": "tool", "tool_call_id": "2", "content": STUB_RESULT},
        messages[3],
    ]
    assert phase.origins == [0, 1, 2, None, 3]
    assert phase.fates == {1: STUBBED}
    assert len(fixes) == 1
    fix = fixes[0]
    assert (fix.kind, fix.tool_call_id, fix.message_index, fix.output_index, fix.tool_name) == (
        "inserted_stub",
        "2",
        1,
        3,
        "read_file",
    )


def test_strip_removes_the_call_instead() -> None:
    messages = [
        user("a"),
        calls(call("1", "terminal"), call("2", "read_file"), text="Checking."),
        tool("1", "r1"),
    ]
    phase, fixes = run(messages, "strip")
    assert phase.messages[1]["tool_calls"] == [messages[1]["tool_calls"][0]]
    assert phase.messages[1]["content"] == "Checking."
    assert len(phase.messages) == 3
    assert phase.fates == {1: STRIPPED}
    assert [(f.kind, f.tool_call_id) for f in fixes] == [("stripped_call", "2")]


def test_strip_of_the_only_call_leaves_a_placeholder() -> None:
    assert CALL_REMOVED_TEXT == "(tool call removed)"
    messages = [user("a"), calls(call("1", "terminal")), user("b")]
    phase, _ = run(messages, "strip")
    assert phase.messages[1] == {"role": "assistant", "content": "(tool call removed)"}
    assert "tool_calls" not in phase.messages[1]


def test_separated_result_is_moved_next_to_its_call() -> None:
    messages = [user("a"), calls(call("1", "x")), assistant("interrupted"), tool("1", "late")]
    phase, fixes = run(messages)
    assert phase.messages == [messages[0], messages[1], messages[3], messages[2]]
    assert phase.origins == [0, 1, 3, 2]
    assert phase.fates == {3: MOVED}
    assert [(f.kind, f.message_index, f.output_index) for f in fixes] == [("moved_result", 3, 2)]


def test_result_before_its_call_is_removed_and_the_call_stubbed() -> None:
    messages = [user("a"), tool("1", "early"), calls(call("1", "x"))]
    phase, fixes = run(messages)
    assert [f.kind for f in fixes] == ["removed_result", "inserted_stub"]
    assert fixes[0].reason == "it came before its call"
    assert phase.messages[-1] == {"role": "tool", "tool_call_id": "1", "content": STUB_RESULT}


def test_duplicate_result_is_removed() -> None:
    messages = [user("a"), calls(call("1", "x")), tool("1", "first"), tool("1", "second")]
    phase, fixes = run(messages)
    assert phase.messages == messages[:3]
    assert fixes[0].reason == "its call was already answered by an earlier result"
    assert phase.fates == {3: REMOVED}


def test_reused_call_id_is_stripped_from_the_later_message() -> None:
    messages = [
        user("a"),
        calls(call("1", "x")),
        tool("1", "r"),
        calls(call("1", "x"), call("2", "y"), text="again"),
        tool("2", "r2"),
    ]
    phase, fixes = run(messages)
    assert phase.messages[3]["tool_calls"] == [messages[3]["tool_calls"][1]]
    assert phase.fates[3] == STRIPPED
    assert fixes[0].reason == "an earlier message already used this call id; removed"


def test_input_is_not_mutated() -> None:
    messages = [user("a"), calls(call("1", "x"), call("2", "y")), tool("1", "r")]
    snapshot = [dict(m) for m in messages]
    run(messages, "strip")
    run(messages, "stub")
    assert messages == snapshot
    assert len(messages[1]["tool_calls"]) == 2
