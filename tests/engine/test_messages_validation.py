"""Input validation: every repair is reported, every rejection names the message index, and the
input is never mutated (compared against a deep copy taken before the call)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from engine_helpers import call, calls, tool, user

from compaction.errors import InvalidConversationError
from compaction.input.checks import validate_messages
from compaction.messages import (
    append_text,
    content_text,
    group_end,
    last_user_index,
    loads_json,
    parse_arguments,
    prepend_text,
)
from compaction.provider_rules import validate
from compaction.summary import SUMMARY_PREFIX


def validated(messages: Any) -> tuple[list[dict[str, Any]], list[str]]:
    before = copy.deepcopy(messages)
    result = validate_messages(messages)
    assert messages == before, "validate_messages mutated its input"
    return result


def test_clean_input_has_no_repairs_and_keeps_the_same_dicts() -> None:
    messages = [user("hi"), calls(call("c1", "terminal", {"command": "ls"})), tool("c1", "a b")]
    checked, repairs = validated(messages)
    assert repairs == []
    assert checked == messages
    assert all(a is b for a, b in zip(checked, messages, strict=True))


def test_wrapped_messages_object_is_accepted() -> None:
    checked, repairs = validated({"messages": [user("hi")]})
    assert checked == [user("hi")]
    assert repairs == []


def test_numeric_content_is_converted() -> None:
    checked, repairs = validated([user("hi"), {"role": "assistant", "content": 42}])
    assert checked[1]["content"] == "42"
    assert repairs == ["message 1: numeric content converted to text"]


def test_bare_strings_in_a_parts_list_become_text_parts() -> None:
    checked, repairs = validated(
        [{"role": "user", "content": ["hello", {"type": "text", "text": "x"}]}]
    )
    assert checked[0]["content"] == [
        {"type": "text", "text": "hello"},
        {"type": "text", "text": "x"},
    ]
    assert repairs == ["message 0: bare strings in the content list became text parts"]


def test_empty_tool_calls_list_is_removed() -> None:
    checked, repairs = validated(
        [user("hi"), {"role": "assistant", "content": "ok", "tool_calls": []}]
    )
    assert "tool_calls" not in checked[1]
    assert repairs == ["message 1: empty tool_calls list removed"]


def test_call_without_id_gets_a_deterministic_id_and_its_result_is_paired() -> None:
    messages = [
        user("hi"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "content": "files"},
    ]
    checked, repairs = validated(messages)
    assert checked[1]["tool_calls"][0]["id"] == "call_missing_1_0"
    assert checked[2]["tool_call_id"] == "call_missing_1_0"
    assert repairs == [
        "message 1: tool_calls[0] had no id; assigned 'call_missing_1_0'",
        "message 2: tool message had no tool_call_id; paired by position with call "
        "'call_missing_1_0'",
    ]


def test_non_string_arguments_are_serialised() -> None:
    messages = [
        user("hi"),
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "x", "arguments": {"k": "é"}}},
                {"id": "b", "type": "function", "function": {"name": "y", "arguments": None}},
            ],
        },
        tool("a", "1"),
        tool("b", "2"),
    ]
    checked, repairs = validated(messages)
    assert checked[1]["tool_calls"][0]["function"]["arguments"] == '{"k": "é"}'
    assert checked[1]["tool_calls"][1]["function"]["arguments"] == "{}"
    assert repairs == [
        "message 1: tool_calls[0] arguments were dict, serialised to a JSON string",
        "message 1: tool_calls[1] arguments were NoneType, serialised to a JSON string",
    ]


def test_nameless_call_is_named_unknown() -> None:
    messages = [
        user("hi"),
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]},
        tool("a", "r"),
    ]
    checked, repairs = validated(messages)
    assert checked[1]["tool_calls"][0]["function"]["name"] == "unknown"
    assert checked[1]["tool_calls"][0]["type"] == "function"
    assert repairs == ["message 1: tool_calls[0] had no name; named 'unknown'"]


def test_tool_result_repairs() -> None:
    messages = [
        user("hi"),
        calls(call("7", "x"), call("c2", "y")),
        {"role": "tool", "tool_call_id": 7, "content": "a"},
        {"role": "tool", "tool_call_id": "c2", "content": None},
    ]
    checked, repairs = validated(messages)
    assert checked[2]["tool_call_id"] == "7"
    assert checked[3]["content"] == ""
    assert repairs == [
        "message 2: tool_call_id converted to a string",
        "message 3: tool result with no content given empty text",
    ]


def test_positional_pairing_follows_call_order() -> None:
    messages = [
        user("hi"),
        calls(call("a", "x"), call("b", "y")),
        {"role": "tool", "content": "first"},
        {"role": "tool", "content": "second"},
    ]
    checked, _ = validated(messages)
    assert [checked[2]["tool_call_id"], checked[3]["tool_call_id"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("messages", "index", "problem"),
    [
        ("not a list", None, "expected a list of messages, got str"),
        ([], None, "the conversation is empty"),
        ([user("a"), "text"], 1, "expected a message object, got str"),
        ([user("a"), {"role": "wizard", "content": "x"}], 1, "unknown role 'wizard'"),
        ([{"content": "x"}], 0, "unknown role None"),
        ([user("a"), {"role": "user", "content": {"x": 1}}], 1, "content must be a string"),
        ([user("a"), {"role": "assistant", "tool_calls": "no"}], 1, "tool_calls must be a list"),
        (
            [user("a"), {"role": "user", "content": "q", "tool_calls": [call("a", "x")]}],
            1,
            "a user message cannot carry tool_calls",
        ),
        (
            [user("a"), {"role": "assistant", "tool_calls": ["x"]}],
            1,
            "tool_calls[0] must be an object",
        ),
        (
            [user("a"), {"role": "assistant", "tool_calls": [{"id": "a"}]}],
            1,
            "tool_calls[0] has no 'function' object",
        ),
        (
            [user("a"), user("b"), {"role": "tool", "content": "r"}],
            2,
            "tool message has no tool_call_id and no preceding call it could answer",
        ),
        (
            [
                user("a"),
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "a", "function": {"name": "x", "arguments": {"s": {1, 2}}}}
                    ],
                },
            ],
            1,
            "arguments cannot be serialised",
        ),
    ],
)
def test_rejections_name_the_index(messages: Any, index: int | None, problem: str) -> None:
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidConversationError) as info:
        validate_messages(messages)
    assert info.value.index == index
    assert problem in info.value.problem
    prefix = f"message {index}: " if index is not None else ""
    assert str(info.value) == prefix + info.value.problem
    assert messages == before


def test_helpers_over_content() -> None:
    parts = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, "b"]}
    assert content_text(parts) == "a\nb"
    assert content_text({"role": "assistant", "content": None}) == ""
    assert append_text("base", "note") == "base\n\nnote"
    assert append_text(None, "note") == "note"
    assert append_text([{"type": "text", "text": "a"}], "n")[-1] == {"type": "text", "text": "n"}
    assert prepend_text("tail", "sum") == "sum\n\ntail"
    assert prepend_text([{"type": "text", "text": "a"}], "s")[0] == {"type": "text", "text": "s"}
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("[1, 2]") == {}
    assert parse_arguments("{broken") == {}
    assert parse_arguments("") == {}


def test_last_user_index_skips_earlier_summaries() -> None:
    messages = [user("real ask"), {"role": "user", "content": SUMMARY_PREFIX + "\n## Goal\nx"}]
    assert last_user_index(messages) == 0
    assert last_user_index(messages, start=1) is None


def test_group_end() -> None:
    messages = [
        user("a"),
        calls(call("1", "x"), call("2", "y")),
        tool("1", "r"),
        tool("2", "r"),
        user("b"),
    ]
    assert group_end(messages, 2) == 4
    assert group_end(messages, 3) == 4
    assert group_end(messages, 1) == 1
    assert group_end(messages, 4) == 4


def test_a_reused_call_id_is_renamed_with_the_result_that_answers_it() -> None:
    # SWE-agent and tau-bench reuse ids; keeping both would be rejected by the provider, and
    # Phase 5 could keep only one pair. Results are matched first in, first out.
    messages = [
        user("go"),
        calls(call("x", "open", {"path": "a.py"})),
        tool("x", "contents of a.py"),
        calls(call("x", "bash", {"command": "rm reproduce.py"})),
        tool("x", "removed"),
        calls(call("y", "bash", {"command": "ls"}), call("y", "bash", {"command": "pwd"})),
        tool("y", "a.py"),
        tool("y", "/testbed"),
    ]
    original = copy.deepcopy(messages)
    checked, repairs = validated(messages)
    assert messages == original
    assert checked[3]["tool_calls"][0]["id"] == "x_2" and checked[4]["tool_call_id"] == "x_2"
    assert checked[1] is messages[1] and checked[2] is messages[2]  # untouched pairs not copied
    assert [c["id"] for c in checked[5]["tool_calls"]] == ["y", "y_2"]
    assert [checked[6]["tool_call_id"], checked[7]["tool_call_id"]] == ["y", "y_2"]
    assert repairs == [
        "message 3: tool_calls[0] reused the id 'x' of an earlier call; renamed 'x_2' "
        "(with the result that answers it)",
        "message 5: tool_calls[1] reused the id 'y' of an earlier call; renamed 'y_2' "
        "(with the result that answers it)",
    ]
    assert validate(checked, "openai") == []


def test_a_reused_id_skips_suffixes_already_taken_by_real_ids() -> None:
    # The renaming picks the smallest free suffix from 2 on, whatever already holds one: an id
    # written as `x_3` before the reuses, and `x_2` written after `x_2` was handed out.
    messages = [
        user("go"),
        calls(call("x", "a")),
        tool("x", "1"),
        calls(call("x_3", "b")),
        tool("x_3", "2"),
        calls(call("x", "c")),
        tool("x", "3"),
        calls(call("x", "d")),
        tool("x", "4"),
        calls(call("x_2", "e")),
        tool("x_2", "5"),
        calls(call("x", "f")),
        tool("x", "6"),
    ]
    checked, _ = validated(messages)
    ids = [m["tool_calls"][0]["id"] for m in checked if m.get("tool_calls")]
    assert ids == ["x", "x_3", "x_2", "x_4", "x_2_2", "x_5"]
    answered = [m["tool_call_id"] for m in checked if m["role"] == "tool"]
    assert answered == ids
    assert validate(checked, "openai") == []


def test_one_id_reused_by_ten_thousand_calls_gets_ten_thousand_distinct_ids() -> None:
    # The shape that made the renaming quadratic (12 s at 20,000 messages): every call reuses one
    # id, one after another and then all at once in a single parallel message.
    count = 10_000
    sequential: list[dict[str, Any]] = [user("go")]
    for turn in range(count):
        sequential += [calls(call("same", "bash")), tool("same", f"out {turn}")]
    parallel = [
        user("again"),
        calls(*(call("same", "bash") for _ in range(count))),
        *(tool("same", f"out {turn}") for turn in range(count)),
    ]
    checked, repairs = validated(sequential + parallel)
    call_ids = [c["id"] for m in checked for c in m.get("tool_calls") or []]
    expected = ["same", *(f"same_{n}" for n in range(2, 2 * count + 1))]
    assert call_ids == expected
    assert [m["tool_call_id"] for m in checked if m["role"] == "tool"] == expected
    assert len(repairs) == 2 * count - 1


def test_results_of_many_parallel_calls_pair_in_any_order() -> None:
    # Named results answered in reverse, then anonymous ones paired by position with the calls
    # still waiting: the pending calls must be found by id and by order without rescanning.
    count = 5_000
    ids = [f"call_{n}" for n in range(count)]
    named = [tool(call_id, "out") for call_id in reversed(ids[count // 2 :])]
    anonymous = [{"role": "tool", "content": "anonymous"} for _ in range(count // 2)]
    messages = [user("go"), calls(*(call(i, "bash") for i in ids)), *named, *anonymous]
    checked, repairs = validated(messages)
    answered = [m["tool_call_id"] for m in checked[2:]]
    assert answered == [*reversed(ids[count // 2 :]), *ids[: count // 2]]
    assert len(repairs) == count // 2
    assert repairs[0] == (
        f"message {2 + count // 2}: tool message had no tool_call_id; paired by position "
        "with call 'call_0'"
    )


@pytest.mark.parametrize(
    "arguments",
    ['{"x": NaN}', '{"x": [1, Infinity]}', '{"x": -Infinity}', {"x": float("nan")}],
    ids=["nan-text", "infinity-text", "minus-infinity-text", "nan-object"],
)
def test_non_finite_numbers_in_arguments_are_reported_and_kept(arguments: Any) -> None:
    messages = [
        user("hi"),
        {
            "role": "assistant",
            "tool_calls": [
                call("ok", "x", {"note": "NaN and Infinity inside a string are fine"}),
                {"id": "a", "type": "function", "function": {"name": "x", "arguments": arguments}},
            ],
        },
        tool("ok", "1"),
        tool("a", "2"),
    ]
    checked, repairs = validated(messages)
    kept = checked[1]["tool_calls"][1]["function"]["arguments"]
    assert kept == (arguments if isinstance(arguments, str) else '{"x": NaN}')
    assert repairs[-1] == (
        "message 1: tool_calls[1] arguments hold NaN or Infinity, which is not valid JSON; "
        "kept as written"
    )
    assert len([r for r in repairs if "NaN" in r]) == 1
    # Read like any other invalid arguments: no dict with a float NaN in it.
    assert parse_arguments(kept) == {}


def test_loads_json_rejects_what_only_python_accepts() -> None:
    assert loads_json('{"a": [1, 2.5, "NaN"]}') == {"a": [1, 2.5, "NaN"]}
    for text in ("NaN", '{"a": Infinity}', "[-Infinity]"):
        with pytest.raises(ValueError, match="is not valid JSON"):
            loads_json(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '{"a": 1} ',
        '{"a": 1}\n',
        '{"a": 1}x',
        '{"a": 1}{}',
        "{}",
        "{",
        '{"a": }',
        '{"a": NaN}',
        '{"a": [1, {"b": -Infinity}]}',
        '{"a": "\\ud800"}',
        '{"a": 1, }',
        " {}",
        "[]",
        "",
        '"s"',
        "1 2",
        "\ufeff{}",
    ],
)
def test_loads_json_reads_and_rejects_as_the_strict_decoder_does(text: str) -> None:
    # Its fast path (an object from the first character) must give decode's value or error,
    # word for word: the errors are shown to users.
    from compaction.messages import _STRICT_DECODER

    def outcome(read: Any) -> tuple[str, Any]:
        try:
            return "value", read(text)
        except ValueError as error:
            return type(error).__name__, str(error)

    # (A BOM is json.loads' own error, which loads_json leaves to it.)
    expected = outcome(json.loads if text.startswith("\ufeff") else _STRICT_DECODER.decode)
    assert outcome(loads_json) == expected
