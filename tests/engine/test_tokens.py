"""Token counting: tiktoken offline (o200k / cl100k by model), the per-message rule of
ALGORITHM.md (content + tool-call names, arguments and ids + 4; images 1,600), the rough
counter, and the per-content cache."""

from __future__ import annotations

import math
from typing import Any

import pytest
from engine_helpers import call, calls, tool
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.cache import CompactionCache
from compaction.errors import TokenizerError
from compaction.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    RoughCounter,
    TiktokenCounter,
    encoding_name_for,
    load_encoding,
    make_counter,
)

CJK = "日本語のテキストを数える"


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("claude-3-5-sonnet-latest", "cl100k_base"),
        ("some-unknown-model", "cl100k_base"),
    ],
)
def test_encoding_for_model(model: str, encoding: str) -> None:
    assert encoding_name_for(model) == encoding


def test_tiktoken_counts_offline_with_the_models_encoding() -> None:
    o200k = TiktokenCounter("gpt-4o")
    cl100k = TiktokenCounter("gpt-4")
    unknown = TiktokenCounter("claude-3-5-sonnet-latest")
    assert (o200k.encoding_name, cl100k.encoding_name, unknown.encoding_name) == (
        "o200k_base",
        "cl100k_base",
        "cl100k_base",
    )
    text = "def compress(messages):\n    return [m for m in messages if m]"
    assert o200k.count_text(text) == len(load_encoding("o200k_base").encode(text))
    assert cl100k.count_text(text) == len(load_encoding("cl100k_base").encode(text))
    assert unknown.count_text(CJK) == cl100k.count_text(CJK)
    # The two encodings really differ: o200k packs Japanese into fewer tokens.
    assert o200k.count_text(CJK) < cl100k.count_text(CJK)
    assert o200k.count_text("hello world") == 2
    # Special-token text inside a transcript is ordinary content, not an error.
    assert o200k.count_text("<|endoftext|>") > 1


def test_message_overhead_and_empty_content() -> None:
    counter = TiktokenCounter("gpt-4o")
    assert MESSAGE_OVERHEAD == 4
    assert counter.count_message({"role": "assistant", "content": None}) == 4
    assert counter.count_message({"role": "user", "content": ""}) == 4
    text = "Please run the test suite."
    assert counter.count_message({"role": "user", "content": text}) == 4 + counter.count_text(text)


def test_tool_call_names_arguments_and_ids_are_counted() -> None:
    counter = TiktokenCounter("gpt-4o")
    message = calls(
        call("call_abc", "read_file", {"path": "src/app.py"}),
        call("call_def", "terminal", {"command": "ls -la"}),
        text="Looking.",
    )
    expected = 4 + counter.count_text("Looking.")
    for entry in message["tool_calls"]:
        expected += counter.count_text(entry["function"]["name"])
        expected += counter.count_text(entry["function"]["arguments"])
    assert counter.count_message(message) == expected
    result = tool("call_abc", "print('hi')")
    assert counter.count_message(result) == (
        4 + counter.count_text("print('hi')") + counter.count_text("call_abc")
    )


def test_image_parts_count_1600_each() -> None:
    counter = TiktokenCounter("gpt-4o")
    assert IMAGE_TOKENS == 1_600
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    assert counter.count_message(message) == 4 + counter.count_text("What is in these?") + 3_200


def test_rough_counter_is_chars_over_four_rounded_up() -> None:
    counter = RoughCounter()
    assert counter.name == "rough"
    for text in ("a", "abcd", "abcde", "x" * 401, CJK):
        assert counter.count_text(text) == math.ceil(len(text) / 4)
    assert counter.count_message({"role": "user", "content": "abcde"}) == 4 + 2
    assert counter.count_messages([{"role": "user", "content": "abcd"}] * 3) == 3 * (4 + 1)


def _rule_count(message: dict[str, Any]) -> int:
    """The counting rule (ALGORITHM.md), written plainly: every counted text at ceil(len / 4)."""
    texts: list[Any] = []
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    texts.append(content)
    texts.extend(part.get("text") for part in parts if isinstance(part, dict))
    calls = message.get("tool_calls")
    for entry in calls if isinstance(calls, list) else []:
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(function, dict):
            texts.extend((function.get("name"), function.get("arguments")))
    texts.append(message.get("tool_call_id"))
    images = sum(
        1
        for part in parts
        if isinstance(part, dict) and part.get("type") in ("image_url", "image", "input_image")
    )
    counted = sum(math.ceil(len(text) / 4) for text in texts if isinstance(text, str))
    return MESSAGE_OVERHEAD + counted + IMAGE_TOKENS * images


_ANY_TEXT = st.one_of(st.none(), st.integers(), st.text(max_size=40))
_PART = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]), "text": _ANY_TEXT}),
    _ANY_TEXT,
)
_CALL = st.one_of(
    st.fixed_dictionaries(
        {
            "id": _ANY_TEXT,
            "function": st.one_of(
                st.fixed_dictionaries({"name": _ANY_TEXT, "arguments": _ANY_TEXT}), _ANY_TEXT
            ),
        }
    ),
    _ANY_TEXT,
)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system"])},
    optional={
        "content": st.one_of(_ANY_TEXT, st.lists(_PART, max_size=3)),
        "tool_calls": st.one_of(st.lists(_CALL, max_size=3), _ANY_TEXT),
        "tool_call_id": _ANY_TEXT,
    },
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_MESSAGE, max_size=6))
def test_rough_counter_counts_every_shape_by_the_rule(messages: list[dict[str, Any]]) -> None:
    """The rough counter counts each message in one pass and remembers nothing: whatever shape
    a message has, its count is the rule's, and `counts` gives each one's."""
    counter = RoughCounter()
    assert [counter.count_message(m) for m in messages] == [_rule_count(m) for m in messages]
    assert counter.counts(messages) == [_rule_count(m) for m in messages]
    assert counter.cache_size() == 0 and counter.nbytes == 0


def test_counts_are_cached_per_content() -> None:
    counter = TiktokenCounter("gpt-4o")
    messages = [{"role": "user", "content": f"message number {i}"} for i in range(20)]
    first = counter.count_messages(messages)
    size = counter.cache_size()
    assert size == 20
    # Counting again (even through fresh dicts with the same content) adds nothing to the cache.
    again = counter.count_messages([dict(m) for m in messages])
    assert again == first
    assert counter.cache_size() == size
    assert counter.counts(messages) == [counter.count_message(m) for m in messages]


def test_make_counter_is_shared_per_encoding_within_a_cache() -> None:
    cache = CompactionCache()
    assert make_counter("tiktoken", "gpt-4o", cache) is make_counter(
        "tiktoken", "gpt-4o-mini", cache
    )
    assert make_counter("tiktoken", "gpt-4o", cache) is not make_counter("tiktoken", "gpt-4", cache)
    assert make_counter("rough", "gpt-4o", cache) is make_counter("rough", "claude-3", cache)
    # Without a cache, a counter of its own: nothing is shared process-wide (issue 30).
    assert make_counter("rough") is not make_counter("rough")
    assert make_counter("rough").name == "rough"
    with pytest.raises(TokenizerError, match="unknown counter 'exact'"):
        make_counter("exact")
