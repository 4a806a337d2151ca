"""What a text's token count can be, from its length alone: proven bounds, no tokenising.

A byte-level BPE encoding (tiktoken's o200k_base and cl100k_base) turns a text's UTF-8 bytes into
tokens that each stand for one or more of those bytes, with nothing dropped or added (special
tokens are encoded as ordinary text here: `disallowed_special=()`). So for every text:

    ceil(utf8_bytes / longest_token_bytes)  <=  tokens  <=  utf8_bytes

The upper bound is reached by text no two bytes of which merge (random bytes, alternating
letters and digits, emoji split into byte tokens); the lower by a long run of one of the
longest tokens (128 spaces are one token in both encodings). `LONGEST_TOKEN_BYTES` is read off
the shipped rank files by a test, and tests/engine/test_token_bounds.py holds the bounds on the
encodings' worst cases (runs of one character, CJK, emoji, random bytes, whitespace, special-
token text) and on every corpus text.

The bounds are wide (a factor of 128 apart), and that is often enough: a decision ("is the
context over the threshold?") asks whether a sum of counts passes a value, and the bounds of
most messages settle it. When they do not, a tighter lower bound comes next, at ~1/16 of the
cost of counting: the pieces the encodings' pre-tokeniser must cut a text into, each at least
one token (`pieces_at_least`, ~70% of the count on code and prose where bytes / 128 is ~4%);
only what that leaves open is counted exactly, the widest messages first (tokens/tally.py).

The rough counter (characters / 4) is its own bound: computing it costs no more than a length.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from compaction.messages import Message, image_count, tool_calls

#: The longest token of each encoding, in bytes (tests/engine/test_token_bounds.py reads the
#: rank files and checks these).
LONGEST_TOKEN_BYTES = {"o200k_base": 128, "cl100k_base": 128}
#: The per-message overhead and image cost of the counting rule (tokens/__init__.py's).
MESSAGE_OVERHEAD = 4
IMAGE_TOKENS = 1_600

#: (lower, upper) of one text's tokens.
TextBounds = Callable[[str], tuple[int, int]]


def utf8_length(text: str) -> int:
    """The text's UTF-8 bytes (a lone surrogate as the 3 bytes of the U+FFFD tiktoken encodes
    it as); an ASCII text's length, which CPython knows without looking at it."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _piece_classes() -> bytes:
    # Each byte as the class the pieces bound reads it as: " " a whitespace byte (tiktoken's
    # `\s` among ASCII: tab, line feed, vertical tab, form feed, carriage return, space), "a"
    # any other ASCII byte but "/", and "." a "/" or any byte of a character outside ASCII
    # (whatever it is, it is never counted: see `pieces_at_least`).
    table = bytearray(b"a" * 128 + b"." * 128)
    for byte in b"\t\n\x0b\x0c\r ":
        table[byte] = ord(" ")
    table[ord("/")] = ord(".")
    return bytes(table)


_PIECE_CLASSES = _piece_classes()


def pieces_at_least(text: str) -> int:
    r"""A lower bound of the text's tokens in o200k_base and cl100k_base, from the pieces their
    pre-tokeniser must cut it into (each piece is encoded on its own, as at least one token).

    Counted: each ASCII byte other than whitespace and "/" that starts the text or follows an
    ASCII whitespace byte. No two of them fall in one piece, because both encodings' pieces
    hold whitespace only as their first character (`[^\r\n\p{L}\p{N}]?` before a word, ` ?`
    before punctuation) or are all whitespace (`\s+`, `\s*[\r\n]+`), but for o200k's
    punctuation piece `[^\s\p{L}\p{N}]+[\r\n/]*`, whose trailing line breaks are followed
    within it by "/" only — hence "/" is never counted. A character outside ASCII is never
    counted either (it may be whitespace, as U+00A0 is), nor is one that follows it.
    ~6% of tokenising the same text, and ~70% of its count on code and prose, where
    `ceil(bytes / 128)` is ~4%.
    """
    data = (text.encode() if text.isascii() else text.encode("utf-8", "surrogatepass")).translate(
        _PIECE_CLASSES
    )
    return data.count(b" a") + (data[:1] == b"a")


def bpe_bounds(longest_token_bytes: int) -> TextBounds:
    """The bounds of a byte-level BPE encoding whose longest token has that many bytes."""

    def bounds(text: str) -> tuple[int, int]:
        size = utf8_length(text)
        return -(-size // longest_token_bytes), size

    return bounds


def rough_bounds(text: str) -> tuple[int, int]:
    """The rough counter's count, exact: characters / 4, rounded up."""
    count = math.ceil(len(text) / 4)
    return count, count


def message_texts(message: Message) -> list[str]:
    """Every text the counting rule counts in a message: the content (or its parts' texts), each
    call's name and arguments, the tool_call_id."""
    texts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
    for call in tool_calls(message):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            name = function.get("name")
            arguments = function.get("arguments")
            if isinstance(name, str):
                texts.append(name)
            if isinstance(arguments, str):
                texts.append(arguments)
    call_id = message.get("tool_call_id")
    if isinstance(call_id, str):
        texts.append(call_id)
    return texts


def message_bounds(
    message: Message, text_bounds: TextBounds, known: dict[str, int]
) -> tuple[int, int]:
    """(lower, upper) of the message's count by the counting rule: a text whose count is
    `known` (the counter's own memory) counts exactly, every other by its bounds."""
    content = message.get("content")
    if type(content) is str and "tool_calls" not in message and "tool_call_id" not in message:
        # Nearly every message of a user or the assistant's prose: its one text.
        count = known.get(content) if known else None
        if count is not None:
            return MESSAGE_OVERHEAD + count, MESSAGE_OVERHEAD + count
        low, high = text_bounds(content) if content else (0, 0)
        return MESSAGE_OVERHEAD + low, MESSAGE_OVERHEAD + high
    fixed = MESSAGE_OVERHEAD
    if isinstance(content, list):
        fixed += IMAGE_TOKENS * image_count(message)
    lower = upper = fixed
    for text in message_texts(message):
        if not text:
            continue
        count = known.get(text) if known else None
        if count is not None:
            lower += count
            upper += count
        else:
            low, high = text_bounds(text)
            lower += low
            upper += high
    return lower, upper


def bpe_message_bounds(message: Message, longest_token_bytes: int) -> tuple[int, int]:
    """`message_bounds(message, bpe_bounds(longest_token_bytes), {})`, read in one pass.

    A decision on a conversation's middle bounds every message of it (thousands, once each):
    this walks the texts the counting rule counts (those of `message_texts`) without building
    their list or calling a bound per text."""
    size = 0  # the UTF-8 bytes of every text: the upper bound, beyond the fixed costs
    lower = upper = MESSAGE_OVERHEAD
    content = message.get("content")
    if isinstance(content, str):
        size = len(content) if content.isascii() else utf8_length(content)
        lower += -(-size // longest_token_bytes)
    elif isinstance(content, list):
        lower = upper = MESSAGE_OVERHEAD + IMAGE_TOKENS * image_count(message)
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    length = len(text) if text.isascii() else utf8_length(text)
                    lower += -(-length // longest_token_bytes)
                    size += length
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                for text in (function.get("name"), function.get("arguments")):
                    if isinstance(text, str):
                        length = len(text) if text.isascii() else utf8_length(text)
                        lower += -(-length // longest_token_bytes)
                        size += length
    call_id = message.get("tool_call_id")
    if isinstance(call_id, str):
        length = len(call_id) if call_id.isascii() else utf8_length(call_id)
        lower += -(-length // longest_token_bytes)
        size += length
    return lower, upper + size


def bpe_message_lower(message: Message, longest_token_bytes: int) -> int:
    """A lower bound of the message's count by the counting rule, each text bounded by its
    pieces (`pieces_at_least`) where that is more than its length alone says: what a decision
    that `bpe_message_bounds` leaves open asks for before it counts anything exactly (~1/16 of
    counting, and on code and prose it closes ~70% of the gap to the count from below)."""
    lower = MESSAGE_OVERHEAD
    if isinstance(message.get("content"), list):
        lower += IMAGE_TOKENS * image_count(message)
    for text in message_texts(message):
        if text:
            lower += max(-(-utf8_length(text) // longest_token_bytes), pieces_at_least(text))
    return lower
