"""Fit's cuts: what of a message may be cut (its pieces, in the order Fit cuts them), and how a
text or a JSON argument string is shortened around the marker, keeping its first and last parts.

Kept apart from the Fit step (fit.py) so the cutting rules — the marker, the floors, JSON that
stays JSON, which pieces come first — can be read and tested on their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.messages import Message, loads_json, tool_calls
from compaction.summary import MERGE_SEPARATOR, summary_parts

TOOL_OUTPUT = "tool_output"
ARGUMENTS = "arguments"
TEXT = "text"

FIT_MARKER = "[… {chars:,} chars cut to fit the context window …]"
#: A cut piece keeps at least this many characters of its own (its first and last part); when
#: everything is down to that and the result is still over, a second round keeps less.
MIN_KEEP_CHARS = 240
LAST_ROUND_KEEP_CHARS = 48
#: No cut smaller than this: the marker alone is about 50 characters.
MIN_CUT_CHARS = 120


def fit_marker(chars: int) -> str:
    return FIT_MARKER.format(chars=chars)


def cut_text(text: str, remove: int, keep_head: int = 0, floor: int = MIN_KEEP_CHARS) -> str:
    """`text` with about `remove` characters cut from its middle around the marker, keeping at
    least `floor` characters of its own (and its first `keep_head` characters untouched)."""
    keep = max(len(text) - remove, floor)
    if keep >= len(text):
        return text
    tail = keep // 3
    head = max(keep - tail, min(keep_head, len(text) - tail))
    cut = len(text) - head - tail
    if cut < MIN_CUT_CHARS:
        return text  # a cut that would hardly pay for its own marker
    return f"{text[:head]}\n{fit_marker(cut)}\n{text[len(text) - tail :]}"


def cut_json_arguments(arguments: str, remove: int, floor: int = MIN_KEEP_CHARS) -> str | None:
    """Arguments with their longest string values cut by about `remove` chars in all, still
    valid JSON; None when they are not JSON or hold no string long enough to cut."""
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError):
        return None
    leaves = sorted(_string_leaves(value), key=lambda leaf: -len(leaf[1]))
    cuts: dict[tuple[Any, ...], str] = {}
    left = remove
    for path, text in leaves:
        if left < MIN_CUT_CHARS or len(text) <= floor:
            break
        shorter = cut_text(text, left, floor=floor)
        cuts[path] = shorter
        left -= len(text) - len(shorter)
    if not cuts:
        return None
    return json.dumps(_replace_leaves(value, cuts, ()), ensure_ascii=False)


def _string_leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, list):
        for position, item in enumerate(node):
            yield from _string_leaves(item, (*path, position))
    elif isinstance(node, dict):
        for key, item in node.items():
            yield from _string_leaves(item, (*path, key))


def _replace_leaves(node: Any, cuts: dict[tuple[Any, ...], str], path: tuple[Any, ...]) -> Any:
    if path in cuts:
        return cuts[path]
    if isinstance(node, list):
        return [_replace_leaves(item, cuts, (*path, i)) for i, item in enumerate(node)]
    if isinstance(node, dict):
        return {key: _replace_leaves(item, cuts, (*path, key)) for key, item in node.items()}
    return node


# -- pieces: what can be cut, and how ----------------------------------------------------------


@dataclass
class Piece:
    """One cuttable text of one message: a tool output, a call's arguments, or a turn's text."""

    position: int
    kind: str
    text: str
    rebuild: Callable[[Message, str], Message]  # the message with this piece replaced
    tool_call_id: str | None = None
    keep_head: int = 0
    #: A compaction summary (or the summary part of a message it was merged into): Fit cuts it
    #: last, and section by section (fit_summary.py).
    summary: bool = False


def _content_pieces(position: int, message: Message, kind: str) -> list[Piece]:
    content = message.get("content")
    if isinstance(content, str):
        call_id = message.get("tool_call_id")
        parts = summary_parts(content)
        if parts is None:
            return [Piece(position, kind, content, _with_content, call_id)]
        if parts.own_text is None:
            opening = len(parts.opening)
            return [Piece(position, kind, content, _with_content, call_id, opening, summary=True)]
        # A summary merged into a turn: the summary and the turn's own words are cut apart, so
        # the user's sentence is never cut through to shorten the summary (or the reverse).
        own = content.partition(MERGE_SEPARATOR)[2]
        return [*_merged_summary_piece(position, message), Piece(position, kind, own, _with_own)]
    if not isinstance(content, list):
        return []
    pieces = []
    for part_index, part in enumerate(content):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            pieces.append(
                Piece(
                    position,
                    kind,
                    part["text"],
                    _part_rebuilder(part_index),
                    message.get("tool_call_id"),
                )
            )
    return pieces


def _with_content(message: Message, text: str) -> Message:
    return {**message, "content": text}


def _with_summary(message: Message, text: str) -> Message:
    """The message with the summary before its merge separator replaced by `text`."""
    _, separator, own = str(message.get("content")).partition(MERGE_SEPARATOR)
    return {**message, "content": text + separator + own}


def _with_own(message: Message, text: str) -> Message:
    """The message with its own words after the merge separator replaced by `text`."""
    summary, separator, _ = str(message.get("content")).partition(MERGE_SEPARATOR)
    return {**message, "content": summary + separator + text}


def _part_rebuilder(part_index: int) -> Callable[[Message, str], Message]:
    def rebuild(message: Message, text: str) -> Message:
        parts = list(message["content"])
        parts[part_index] = {**parts[part_index], "text": text}
        return {**message, "content": parts}

    return rebuild


def _argument_pieces(position: int, message: Message) -> list[Piece]:
    pieces = []
    for call_index, call in enumerate(tool_calls(message)):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str):
            pieces.append(
                Piece(position, ARGUMENTS, arguments, _call_rebuilder(call_index), call.get("id"))
            )
    return pieces


def _call_rebuilder(call_index: int) -> Callable[[Message, str], Message]:
    def rebuild(message: Message, arguments: str) -> Message:
        calls = list(message["tool_calls"])
        call = calls[call_index]
        calls[call_index] = {**call, "function": {**call["function"], "arguments": arguments}}
        return {**message, "tool_calls": calls}

    return rebuild


def _merged_summary_piece(position: int, message: Message) -> list[Piece]:
    """The summary part of a message the summary was merged into (never the message's own
    text, which may be the latest request)."""
    content = message.get("content")
    if not isinstance(content, str) or MERGE_SEPARATOR not in content:
        return []
    parts = summary_parts(content)
    if parts is None or parts.own_text is None:
        return []
    summary = content.partition(MERGE_SEPARATOR)[0]
    return [Piece(position, TEXT, summary, _with_summary, None, len(parts.opening), True)]


def cut_tiers(messages: Sequence[Message], protected: set[int]) -> list[list[Piece]]:
    """The pieces Fit may cut, in the order it cuts them: tool outputs, arguments, other text."""
    outputs: list[Piece] = []
    arguments: list[Piece] = []
    texts: list[Piece] = []
    for position, message in enumerate(messages):
        if position in protected:
            if message.get("role") == "user":
                texts += _merged_summary_piece(position, message)
            continue
        role = message.get("role")
        if role == "tool":
            outputs += _content_pieces(position, message, TOOL_OUTPUT)
            continue
        arguments += _argument_pieces(position, message)
        texts += _content_pieces(position, message, TEXT)
    return [outputs, arguments, texts]
