"""Batch counting: the same counts as one message at a time, threaded or not."""

from __future__ import annotations

from typing import Any

import pytest

from compaction import tokens
from compaction.tokens import RoughCounter, TiktokenCounter, count_each


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent. <|endoftext|> is text here."},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "line\n" * 500},
        {"role": "tool", "tool_call_id": "c1", "content": "line\n" * 500},  # a repeated text
        {"role": "assistant", "content": "naïve café — 東京 " * 40},
    ]


@pytest.mark.parametrize("threaded", [False, True])
def test_batch_counts_equal_counting_each_message_alone(
    threaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if threaded:
        monkeypatch.setattr(tokens, "PARALLEL_MIN_CHARS", 0)
        monkeypatch.setattr(tokens, "_cores", lambda: 2)
    messages = conversation()
    one_by_one = [TiktokenCounter("gpt-4o").count_message(message) for message in messages]
    batched = TiktokenCounter("gpt-4o")
    assert batched.counts(messages) == one_by_one
    assert batched.counts(messages) == one_by_one  # and again, all from the cache
    assert count_each(batched, messages) == one_by_one


def test_rough_counter_batches_too() -> None:
    messages = conversation()
    assert RoughCounter().counts(messages) == [
        RoughCounter().count_message(message) for message in messages
    ]


def test_count_each_accepts_any_token_counter() -> None:
    class Words:
        name = "words"

        def count_message(self, message: dict[str, Any]) -> int:
            return len(str(message.get("content") or "").split())

        def count_messages(self, messages: list[dict[str, Any]]) -> int:
            return sum(map(self.count_message, messages))

    assert count_each(Words(), [{"role": "user", "content": "a b c"}]) == [3]
