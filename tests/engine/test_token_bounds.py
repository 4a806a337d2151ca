"""The token bounds (tokens/bounds.py) hold on the encodings' worst cases and on real text.

ceil(utf8_bytes / longest_token_bytes) <= tokens <= utf8_bytes, for o200k_base and cl100k_base:
the constant is read off the shipped rank files here, and each inequality is met with equality
by an input made for it (the bounds are as tight as length alone allows)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from corpus_paths import corpus_files

from compaction.formats import load_conversations
from compaction.messages import content_text
from compaction.tokens import TiktokenCounter, make_counter
from compaction.tokens.bounds import (
    LONGEST_TOKEN_BYTES,
    bpe_bounds,
    bpe_message_bounds,
    bpe_message_lower,
    message_bounds,
    pieces_at_least,
    rough_bounds,
    utf8_length,
)
from compaction.tokens.encodings import load_encoding

ENCODINGS = ("o200k_base", "cl100k_base")


def _count(encoding: str, text: str) -> int:
    return len(load_encoding(encoding).encode(text, disallowed_special=()))


def _pathological() -> dict[str, str]:
    """Inputs at the edges of what BPE does with length: long runs, scripts without spaces,
    multi-byte characters split into byte tokens, noise, special-token text."""
    rng = random.Random(34)
    noise = "".join(chr(rng.randrange(0x20, 0x2FFFF)) for _ in range(3_000))
    noise = noise.encode("utf-8", "replace").decode("utf-8", "replace")
    byte_soup = bytes(rng.randrange(256) for _ in range(4_000)).decode("latin-1")
    return {
        "spaces": " " * 10_000,
        "spaces exactly one longest token": " " * 128,
        "dashes": "-" * 7_000,
        "equals and stars": "=" * 3_000 + "*" * 3_000,
        "newlines": "\n" * 5_000,
        "tabs and spaces": "\t \t  \t   " * 700,
        "one letter": "a" * 10_000,
        "one digit": "7" * 9_999,
        "letters and digits alternating": "a1" * 3_000,
        "CJK": "压缩上下文窗口的算法保留头部和尾部" * 300,
        "Japanese kana": "ぁあぃいぅうぇえぉおかがきぎく" * 300,
        "Thai": "สำนักเลขานุการองค์กร" * 200,
        "emoji": "😀🎉🔥👍🏽🧑‍💻🇫🇷" * 400,
        "zero-width joiners": "\u200d" * 2_000,
        "combining marks": "e\u0301\u0302\u0303" * 1_500,
        "random code points": noise,
        "random bytes as latin-1": byte_soup,
        "special-token text": "<|endoftext|><|fim_prefix|><|endofprompt|>" * 200,
        "base64": "".join(
            rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            for _ in range(8_000)
        ),
        "hex": "".join(rng.choice("0123456789abcdef") for _ in range(8_000)),
        "mixed whitespace": " \n\r\t\u00a0\u2003\u3000" * 800,
        "lone surrogate": "before \ud800 after" * 50,
    }


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_longest_token_is_what_the_rank_file_says(encoding: str) -> None:
    ranks = load_encoding(encoding)._mergeable_ranks
    assert max(map(len, ranks)) == LONGEST_TOKEN_BYTES[encoding]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", sorted(_pathological()))
def test_the_bounds_hold_on_the_worst_cases(encoding: str, name: str) -> None:
    text = _pathological()[name]
    low, high = bpe_bounds(LONGEST_TOKEN_BYTES[encoding])(text)
    exact = _count(encoding, text)
    assert low <= exact <= high, (name, low, exact, high)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_each_bound_is_reached(encoding: str) -> None:
    bounds = bpe_bounds(LONGEST_TOKEN_BYTES[encoding])
    longest = " " * LONGEST_TOKEN_BYTES[encoding]
    assert _count(encoding, longest) == bounds(longest)[0] == 1  # the lower: one longest token
    alternating = "a1" * 500  # every piece one byte long, each its own token
    assert _count(encoding, alternating) == bounds(alternating)[1] == 1_000


def test_utf8_length_is_the_encoded_length() -> None:
    for text in ["", "ascii", "é", "压缩", "😀", "a\ud800b"]:
        assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))


def test_the_rough_bounds_are_the_rough_count() -> None:
    counter = make_counter("rough")
    for text in ["", "a", "abcd", "abcde", "压缩" * 9]:
        count = counter.count_text(text)
        assert rough_bounds(text) == (count, count)


def _corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in corpus_files():
        for conversation in load_conversations(path):
            for message in conversation.messages:
                texts.append(content_text(message))
                for call in message.get("tool_calls") or []:
                    texts.append(str(call.get("function", {}).get("arguments", "")))
    return [text for text in texts if text]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_bounds_hold_on_every_corpus_text(encoding: str) -> None:
    texts = _corpus_texts()
    if not texts:
        pytest.skip("no corpus beside the project (../shared/corpus)")
    bounds = bpe_bounds(LONGEST_TOKEN_BYTES[encoding])
    for text in texts:
        low, high = bounds(text)
        assert low <= _count(encoding, text) <= high


def _messages(rng: random.Random) -> list[dict[str, Any]]:
    texts = list(_pathological().values())
    out: list[dict[str, Any]] = []
    for index in range(60):
        text = rng.choice(texts)[: rng.randrange(0, 3_000)]
        kind = index % 4
        if kind == 0:
            out.append({"role": "user", "content": text})
        elif kind == 1:
            arguments = '{"command": "' + text[:200].replace('"', "") + '"}'
            call = {"id": f"c{index}", "type": "function"}
            call["function"] = {"name": "terminal", "arguments": arguments}
            out.append({"role": "assistant", "content": text[:50] or None, "tool_calls": [call]})
        elif kind == 2:
            out.append({"role": "tool", "tool_call_id": f"c{index - 1}", "content": text})
        else:
            parts = [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ]
            out.append({"role": "user", "content": parts})
    return out


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_a_messages_bounds_hold_its_count_by_the_counting_rule(model: str) -> None:
    counter = TiktokenCounter(model)
    bounds = bpe_bounds(LONGEST_TOKEN_BYTES[counter.encoding_name])
    for message in _messages(random.Random(7)):
        low, high = message_bounds(message, bounds, {})
        exact = counter.count_message(message)
        assert low <= exact <= high
        # With every text's count known, the bounds are the count.
        assert message_bounds(message, bounds, counter._cache) == (exact, exact)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_one_pass_bounds_of_a_message_are_the_general_ones(encoding: str) -> None:
    longest = LONGEST_TOKEN_BYTES[encoding]
    messages = _messages(random.Random(11))
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [1, {"function": "x"}, {}]},
        {"role": "assistant", "content": [{"type": "text", "text": "é"}, "bare", {}]},
        {"role": "assistant", "content": "", "tool_calls": [call_with(name=3, arguments="")]},
        {"role": "tool", "tool_call_id": "ü" * 200, "content": 7},
        {"role": "user", "content": "\ud800 lone"},
    ]
    for message in messages:
        assert bpe_message_bounds(message, longest) == message_bounds(
            message, bpe_bounds(longest), {}
        )


def call_with(**function: Any) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": function}


# -- the pieces bound: what a straddling decision raises the lower bounds by -------------------


def _piece_edges() -> dict[str, str]:
    """Texts at the edges of the pieces argument (bounds.pieces_at_least): o200k's punctuation
    piece that carries line breaks and "/" (one piece, many "/" after whitespace), whitespace
    outside ASCII before ASCII words, control characters that are not `\\s`, contractions,
    digits in threes, runs of spaces before a word, text that starts with whitespace."""
    return {
        "line breaks and slashes": "+\n/\n/\n/\r\n/" * 300,
        "a slash after each space": " /x /y /z" * 300,
        "no-break spaces": "a\u00a0b\u00a0c\u2003d\u3000e" * 300,
        "next line": "a\x85b\x85c" * 300,
        "separators that are not whitespace": "a\x1cb\x1dc\x1ed\x1fe" * 300,
        "contractions": "it's they're we've I'm you'll he'd " * 200,
        "digits": "1234567 89 0 " * 300,
        "runs of spaces": "a     b          c\t\t\td" * 200,
        "starts with whitespace": " \n\t word another",
        "every ASCII byte": "".join(map(chr, range(128))) * 40,
        "words and punctuation": "(x) [y]; {z}: a.b,c!d?e" * 300,
        "one character": "a",
        "one space": " ",
        "empty": "",
    }


def _random_texts(count: int) -> list[str]:
    """Random texts from an alphabet weighted to the characters the argument turns on."""
    rng = random.Random(3434)
    alphabet = list(" \t\n\r\x0b\x0c/\\'\"-_.,;:!?()[]{}<>=+*#@$%^&|~`") + list(
        "abcXYZ0129\u00a0\u2003\u3000\x85\x1c\x1fé压😀\u0301"
    )
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400))) for _ in range(count)
    ]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_pieces_bound_holds_on_the_worst_cases_and_random_text(encoding: str) -> None:
    texts = {**_pathological(), **_piece_edges()}
    texts.update({f"random {i}": text for i, text in enumerate(_random_texts(3_000))})
    for name, text in texts.items():
        assert pieces_at_least(text) <= _count(encoding, text), name


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_pieces_bound_holds_on_every_corpus_text(encoding: str) -> None:
    texts = _corpus_texts()
    if not texts:
        pytest.skip("no corpus beside the project (../shared/corpus)")
    raised = 0
    for text in texts:
        pieces = pieces_at_least(text)
        exact = _count(encoding, text)
        assert pieces <= exact
        raised += pieces > bpe_bounds(LONGEST_TOKEN_BYTES[encoding])(text)[0]
    assert raised > len(texts) / 2  # and it is worth having: tighter on most real texts


def test_the_pieces_bound_counts_the_pieces_it_can_prove() -> None:
    assert pieces_at_least("") == 0
    assert pieces_at_least("word") == 1
    assert pieces_at_least("two words") == 2
    assert pieces_at_least("  two   words ") == 2  # whitespace runs prove nothing more
    assert pieces_at_least("a /b") == 1  # "/" after whitespace: o200k may keep it in one piece
    assert pieces_at_least("a é") == 1  # outside ASCII: never counted
    assert pieces_at_least("a\u00a0b") == 1  # a no-break space is whitespace to the encodings
    assert pieces_at_least("+\x1c-") == 1  # \x1c is not whitespace to them: "-" starts nothing


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_a_messages_pieces_bound_holds_its_count(model: str) -> None:
    counter = TiktokenCounter(model)
    longest = LONGEST_TOKEN_BYTES[counter.encoding_name]
    for message in _messages(random.Random(13)):
        exact = counter.count_message(message)
        low, _ = bpe_message_bounds(message, longest)
        assert low <= bpe_message_lower(message, longest) <= exact
