"""Batch counting: the same counts as one message at a time, threaded or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction import tokens
from compaction.errors import TokenizerError
from compaction.tokens import RoughCounter, TiktokenCounter, count_each, encodings
from compaction.tokens.encodings import read_ranks


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


SHIPPED = Path(tokens.__file__).resolve().parent / "data"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_faster_rank_reader_gives_tiktokens_own_ranks(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`read_ranks` parses a shipped rank file into the dict tiktoken's own parser gives."""
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's reader: no cache beside the file
    path = SHIPPED / f"{name}.tiktoken"
    assert read_ranks(path.read_bytes()) == load_tiktoken_bpe(str(path))


def test_a_malformed_rank_file_is_a_clear_error() -> None:
    with pytest.raises(TokenizerError, match="not token-rank pairs"):
        read_ranks(b"IQ== 0\nIg== 1\nIw==\n")  # a rank missing
    with pytest.raises(TokenizerError, match="could not be read"):
        read_ranks(b"IQ== zero\n")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_a_shipped_encoding_is_tiktokens_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same split pattern, special tokens and ranks as tiktoken's constructor builds (its
    download replaced, in this test only, by the shipped file)."""
    import tiktoken
    import tiktoken_ext.openai_public as constructors
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    local = str(SHIPPED / f"{name}.tiktoken")
    monkeypatch.setattr(
        constructors, "load_tiktoken_bpe", lambda *_a, **_k: load_tiktoken_bpe(local)
    )
    theirs = tiktoken.Encoding(**getattr(constructors, name)())
    ours = tokens.load_encoding(name)
    text = "naïve café — 東京 def handler(request): return 200 <|endoftext|> \ud83d\ude00 it's"
    assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
    assert ours.n_vocab == theirs.n_vocab
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens


def test_loading_an_encoding_changes_nothing_outside() -> None:
    """No environment variable written, no tiktoken function replaced (issue 30)."""
    import os

    import tiktoken_ext.openai_public as constructors

    before = dict(os.environ)
    loader = constructors.load_tiktoken_bpe
    for name in ("o200k_base", "cl100k_base"):
        encodings._LOADED.pop(name, None)
        tokens.load_encoding(name)
    assert dict(os.environ) == before
    assert constructors.load_tiktoken_bpe is loader
