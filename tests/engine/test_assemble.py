"""Phase 4: the summary message (prefix + newline + summary), the system note appended once, and
the role choice in every case of ALGORITHM.md Phase 4 step 3, including the merge."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import assistant, call, calls, system, tool, user

from compaction.phases.assemble import assemble, choose_role, summary_content
from compaction.provider_rules import validate
from compaction.result import Fate
from compaction.summary import MERGE_SEPARATOR, SUMMARY_PREFIX, SYSTEM_NOTE, static_marker

SUMMARY = "## Active Task\nkeep going"


def run(messages: list[dict[str, Any]], head_end: int, tail_start: int, **kw: Any) -> Any:
    return assemble(
        messages,
        list(range(len(messages))),
        head_end,
        tail_start,
        kw.get("text", SUMMARY),
        kw.get("is_marker", False),
        kw.get("excluded", set()),
    )


def test_summary_content() -> None:
    assert summary_content(SUMMARY, False) == f"{SUMMARY_PREFIX}\n{SUMMARY}"
    assert summary_content(static_marker(3), True) == static_marker(3)


@pytest.mark.parametrize(
    ("last_head", "first_tail", "expected"),
    [
        ("assistant", "assistant", "user"),
        ("tool", "assistant", "user"),
        ("system", "user", "assistant"),
        ("user", "user", "assistant"),
        # nothing before it: the summary opens the conversation, as user (Anthropic's rule).
        (None, None, "user"),
        (None, "assistant", "user"),
        # ...and an assistant summary first is no fix when the tail opens with a user: merged.
        (None, "user", None),
        # user clashes with the first tail message: flip to assistant.
        ("tool", "user", "assistant"),
        # assistant clashes with the tail: flip to user (the head ends with system).
        ("system", "assistant", "user"),
        # neither fits: merged.
        ("assistant", "user", None),
        ("user", "assistant", None),
    ],
)
def test_choose_role(last_head: str | None, first_tail: str | None, expected: str | None) -> None:
    role, reason = choose_role(last_head, first_tail)
    assert role == expected
    assert reason


def test_summary_inserted_between_head_and_tail() -> None:
    messages = [system(), user("a"), assistant("b"), user("mid"), assistant("mid"), assistant("t")]
    result = run(messages, 3, 5)
    # last head assistant -> user; first tail assistant: no clash.
    assert result.messages == [
        {**messages[0], "content": f"{messages[0]['content']}\n\n{SYSTEM_NOTE}"},
        messages[1],
        messages[2],
        {"role": "user", "content": f"{SUMMARY_PREFIX}\n{SUMMARY}"},
        messages[5],
    ]
    assert result.origins == [0, 1, 2, None, 5]
    assert result.fates == {0: Fate.NOTE_ADDED}
    assert result.details["summary_role"] == "user"
    assert result.details["summary_index"] == 3
    assert result.details["system_note_added"] is True
    assert messages[0]["content"] == "You are a coding agent."


def test_flip_when_the_role_clashes_with_the_tail() -> None:
    messages = [
        system(),
        user("a"),
        calls(call("1", "x")),
        tool("1", "r"),
        assistant("mid"),
        user("tail starts here"),
    ]
    result = run(messages, 4, 5)
    assert result.messages[4] == {"role": "assistant", "content": f"{SUMMARY_PREFIX}\n{SUMMARY}"}
    assert "flipped to assistant" in result.details["role_reason"]


def test_merge_into_the_first_tail_message() -> None:
    messages = [system(), user("a"), assistant("b"), user("mid"), user("latest ask")]
    result = run(messages, 3, 4)
    # The separator lets a later pass give the user back their own text (Phase 3 step 1).
    merged = f"{SUMMARY_PREFIX}\n{SUMMARY}\n\n{MERGE_SEPARATOR}\n\nlatest ask"
    assert result.messages[3] == {"role": "user", "content": merged}
    assert len(result.messages) == 4
    assert result.origins == [0, 1, 2, 4]
    assert result.fates[4] == Fate.SUMMARY_MERGED_IN
    assert result.details["summary_role"] is None
    assert result.details["merged_into"] == 4
    assert "merged into the first tail message" in result.details["role_reason"]


def test_merge_keeps_a_parts_list() -> None:
    tail = {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]}
    messages = [system(), user("a"), assistant("b"), user("mid"), tail]
    result = run(messages, 3, 4)
    assert result.messages[3]["content"][0] == {
        "type": "text",
        "text": f"{SUMMARY_PREFIX}\n{SUMMARY}\n\n{MERGE_SEPARATOR}",
    }
    assert result.messages[3]["content"][1:] == tail["content"]


def test_system_note_is_never_added_twice() -> None:
    noted = {"role": "system", "content": f"Be brief.\n\n{SYSTEM_NOTE}"}
    messages = [noted, user("a"), assistant("b"), user("m"), assistant("t")]
    result = run(messages, 3, 4)
    assert result.messages[0] == noted
    assert result.messages[0]["content"].count(SYSTEM_NOTE) == 1
    assert result.details["system_note_added"] is False
    assert Fate.NOTE_ADDED not in result.fates.values()


def test_no_system_message_no_note() -> None:
    messages = [user("a"), assistant("b"), user("c"), user("m"), assistant("t")]
    result = run(messages, 3, 4)
    assert SYSTEM_NOTE not in str(result.messages)
    assert result.details["system_note_added"] is False


def test_static_marker_stands_alone_and_excluded_tail_messages_go() -> None:
    old = {"role": "assistant", "content": f"{SUMMARY_PREFIX}\n## Goal\nold"}
    messages = [system(), user("a"), assistant("m"), old, user("latest")]
    marker = static_marker(1)
    result = run(messages, 2, 3, text=marker, is_marker=True, excluded={3})
    assert result.messages[2] == {"role": "assistant", "content": marker}
    assert result.messages[3:] == [messages[4]]
    assert result.origins == [0, 1, None, 4]


def test_a_late_system_notice_counts_as_a_user_turn() -> None:
    # Aider writes mid-conversation system notices. Only the leading system prompt becomes
    # Anthropic's system parameter; our exporter sends a later notice as user text in place, so
    # the summary must alternate with that: user-side notices on both sides make it an assistant.
    messages = [
        system(),
        user("a"),
        {"role": "system", "content": "notice"},
        user("mid"),
        assistant("mid"),
        {"role": "system", "content": "another notice"},
        assistant("t"),
    ]
    result = assemble(messages, list(range(len(messages))), 3, 5, "## Active Task\nx", False, set())
    assert result.details["last_head_role"] == "user"
    assert result.details["first_tail_role"] == "user"
    assert result.details["summary_role"] == "assistant"
    assert result.messages[3]["role"] == "assistant"
    assert str(result.messages[3]["content"]).startswith(SUMMARY_PREFIX)
    assert [p for p in validate(result.messages, "anthropic") if p.severity == "error"] == []


def test_a_head_without_turns_merges_the_summary_into_a_user_tail() -> None:
    # --head 1: the head is the system prompt alone. An assistant summary would be Anthropic's
    # first turn (rejected), so the summary is merged into the tail's opening user message.
    messages = [system(), user("a"), assistant("b"), user("latest ask"), assistant("t")]
    result = run(messages, 1, 3)
    assert result.details["summary_role"] is None
    assert result.messages[1] == {
        "role": "user",
        "content": f"{SUMMARY_PREFIX}\n{SUMMARY}\n\n{MERGE_SEPARATOR}\n\nlatest ask",
    }
    assert result.origins == [0, 3, 4]
    assert errors_for(result.messages) == []


def test_a_head_without_turns_puts_the_summary_after_the_tails_system_notices() -> None:
    # An Aider log with --head 0: the tail opens with a system notice. Ahead of it, the summary
    # would be a user turn followed by the notice (sent as user text): Anthropic merges the two.
    # After it, the notice stays with the system prompt and the summary is the first turn.
    notice = {"role": "system", "content": "Tokens: 12k sent"}
    messages = [system(), user("a"), assistant("b"), notice, assistant("edit"), user("next")]
    result = run(messages, 0, 3)
    assert result.details["last_head_role"] is None
    assert result.details["first_tail_role"] == "assistant"
    assert result.details["summary_role"] == "user"
    assert result.details["summary_index"] == 1
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant", "user"]
    assert result.messages[0] == notice
    assert result.origins == [3, None, 4, 5]
    assert errors_for(result.messages) == []


def errors_for(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(problem)
        for provider in ("openai", "anthropic")
        for problem in validate(messages, provider)
        if problem.severity == "error"
    ]


def test_the_role_reason_reads_as_english() -> None:
    assert choose_role("assistant", "assistant")[1].startswith("the head ends with an assistant")
    assert choose_role("tool", "assistant")[1].startswith("the head ends with a tool message")
