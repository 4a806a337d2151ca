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


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_faster_rank_reader_gives_tiktokens_own_ranks(name: str) -> None:
    """`read_ranks` replaces tiktoken's parser while an encoding loads: the same dict."""
    from tiktoken.load import load_tiktoken_bpe

    tokens.load_encoding(name)  # points tiktoken's cache at the bundled files
    urls = {
        "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    }
    assert tokens.read_ranks(urls[name]) == load_tiktoken_bpe(urls[name])


def test_the_faster_rank_reader_defers_to_tiktoken_on_a_malformed_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would cache the file beside its own

    odd = tmp_path / "odd.tiktoken"
    odd.write_bytes(b"IQ== 0\nIg== 1\nIw==\n")  # a rank missing
    with pytest.raises(ValueError) as ours:
        tokens.read_ranks(str(odd))
    with pytest.raises(ValueError) as theirs:
        load_tiktoken_bpe(str(odd))
    assert str(ours.value) == str(theirs.value)


def test_an_encoding_loaded_with_the_faster_reader_counts_as_tiktoken_does() -> None:
    import tiktoken
    import tiktoken_ext.openai_public as constructors

    ours = tokens.load_encoding("o200k_base")
    theirs = tiktoken.Encoding(**constructors.o200k_base())  # tiktoken's own parser
    text = "naïve café — 東京 def handler(request): return 200 <|endoftext|> \ud83d\ude00"
    assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
    assert ours.n_vocab == theirs.n_vocab
