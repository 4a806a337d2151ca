"""Fit: after Phase 5, the result always fits the window.

The five phases shrink the middle; the head and the tail are protected, so one huge tool output
there (a 130K-token log in the tail, a whole file as an argument) outlives every compaction and
the agent's next call is rejected anyway. Fit is the last step of every compaction that ran: while
the context is over `context_length`, it cuts the largest pieces first — the tool outputs, then
the tool-call arguments — each keeping its first and last part around the marker
`[… N chars cut to fit the context window …]` (N with thousands separators). JSON arguments stay
valid JSON: their long string values are cut, never the JSON text itself.

The system message and the latest user request are never cut. When the rest cannot be cut far
enough — the pieces are already down to their first and last parts — Fit also cuts the other
turns' text (assistant prose, earlier user turns, the summary body, never its prefix), largest
first: a context the provider rejects helps nobody. Only when the system message and the latest
request alone exceed the window does the result stay over it, and the record says so; then
nothing is cut at all, since no cut could make it fit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.messages import Message, last_user_index, loads_json, tool_calls
from compaction.result import CUT_TO_FIT, PhaseResult
from compaction.summary import MERGE_SEPARATOR, summary_parts
from compaction.tokens import TokenCounter

FIT_MARKER = "[… {chars:,} chars cut to fit the context window …]"
#: A cut piece keeps at least this many characters of its own (its first and last part); when
#: everything is down to that and the result is still over, a second round keeps less.
MIN_KEEP_CHARS = 240
LAST_ROUND_KEEP_CHARS = 48
#: How many times one piece is re-cut, each time from its original text, before moving on.
MAX_ATTEMPTS = 6
_INSTRUCTION_ROLES = ("system", "developer")

TOOL_OUTPUT = "tool_output"
ARGUMENTS = "arguments"
TEXT = "text"


def fit_marker(chars: int) -> str:
    return FIT_MARKER.format(chars=chars)


@dataclass
class FitCut:
    """One piece Fit cut: where it is, what it was, and how much of it is left."""

    message_index: int  # position in the final messages
    input_index: int | None  # the input message it came from (None for the summary or a stub)
    kind: str  # "tool_output" | "arguments" | "text"
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    role: str = ""
    tool_call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "message_index": self.message_index,
            "input_index": self.input_index,
            "kind": self.kind,
            "role": self.role,
            "tool_call_id": self.tool_call_id,
            "chars_before": self.chars_before,
            "chars_after": self.chars_after,
            "chars_cut": self.chars_before - self.chars_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        }


@dataclass
class FitReport:
    """What Fit did: the window, the tokens before and after, every cut, and why it could not
    fit when it could not (`cannot_fit`; `request_exceeds_window` when the system message and
    the latest request alone are over the window)."""

    window: int
    tokens_before: int
    tokens_after: int
    cuts: list[FitCut] = field(default_factory=list)
    cannot_fit: str | None = None
    request_exceeds_window: bool = False

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.window

    @property
    def largest_cut_chars(self) -> int:
        return max((cut.chars_before - cut.chars_after for cut in self.cuts), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "fits": self.fits,
            "cuts": [cut.to_dict() for cut in self.cuts],
            "largest_cut_chars": self.largest_cut_chars,
            "cannot_fit": self.cannot_fit,
            "request_exceeds_window": self.request_exceeds_window,
        }


def cut_text(text: str, remove: int, keep_head: int = 0, floor: int = MIN_KEEP_CHARS) -> str:
    """`text` with about `remove` characters cut from its middle around the marker, keeping at
    least `floor` characters of its own (and its first `keep_head` characters untouched)."""
    keep = max(len(text) - remove, floor)
    if keep >= len(text):
        return text
    tail = keep // 3
    head = max(keep - tail, min(keep_head, len(text) - tail))
    cut = len(text) - head - tail
    if cut <= 0:
        return text
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
        if left <= 0 or len(text) <= floor:
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
class _Piece:
    """One cuttable text of one message: a tool output, a call's arguments, or a turn's text."""

    position: int
    kind: str
    text: str
    rebuild: Callable[[Message, str], Message]  # the message with this piece replaced
    tool_call_id: str | None = None
    keep_head: int = 0


def _content_pieces(position: int, message: Message, kind: str) -> list[_Piece]:
    content = message.get("content")
    keep_head = 0
    if isinstance(content, str):
        parts = summary_parts(content)
        keep_head = len(parts.opening) if parts is not None else 0
        call_id = message.get("tool_call_id")
        return [_Piece(position, kind, content, _with_content, call_id, keep_head)]
    if not isinstance(content, list):
        return []
    pieces = []
    for part_index, part in enumerate(content):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            pieces.append(
                _Piece(
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


def _part_rebuilder(part_index: int) -> Callable[[Message, str], Message]:
    def rebuild(message: Message, text: str) -> Message:
        parts = list(message["content"])
        parts[part_index] = {**parts[part_index], "text": text}
        return {**message, "content": parts}

    return rebuild


def _argument_pieces(position: int, message: Message) -> list[_Piece]:
    pieces = []
    for call_index, call in enumerate(tool_calls(message)):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str):
            pieces.append(
                _Piece(position, ARGUMENTS, arguments, _call_rebuilder(call_index), call.get("id"))
            )
    return pieces


def _call_rebuilder(call_index: int) -> Callable[[Message, str], Message]:
    def rebuild(message: Message, arguments: str) -> Message:
        calls = list(message["tool_calls"])
        call = calls[call_index]
        calls[call_index] = {**call, "function": {**call["function"], "arguments": arguments}}
        return {**message, "tool_calls": calls}

    return rebuild


def _merged_summary_piece(position: int, message: Message) -> list[_Piece]:
    """The summary part of a message the summary was merged into (never the message's own
    text, which may be the latest request)."""
    content = message.get("content")
    if not isinstance(content, str) or MERGE_SEPARATOR not in content:
        return []
    parts = summary_parts(content)
    if parts is None or parts.own_text is None:
        return []
    summary, _, _ = content.partition(MERGE_SEPARATOR)
    own = content[len(summary) :]

    def rebuild(current: Message, text: str) -> Message:
        return {**current, "content": text + own}

    return [_Piece(position, TEXT, summary, rebuild, None, len(parts.opening))]


def _tiers(messages: Sequence[Message], protected: set[int]) -> list[list[_Piece]]:
    """The pieces Fit may cut, in the order it cuts them: tool outputs, arguments, other text."""
    outputs: list[_Piece] = []
    arguments: list[_Piece] = []
    texts: list[_Piece] = []
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


# -- the step ----------------------------------------------------------------------------------


def protected_positions(messages: Sequence[Message]) -> set[int]:
    """The system (and developer) messages and the latest user request: never cut."""
    protected = {i for i, m in enumerate(messages) if m.get("role") in _INSTRUCTION_ROLES}
    latest = last_user_index(messages)
    if latest is not None:
        protected.add(latest)
    return protected


def fit_to_window(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    window: int,
    counter: TokenCounter,
    tokens_before: int | None = None,
) -> tuple[list[Message], FitReport]:
    """`messages` cut until they fit `window` tokens (see the module doc); never mutated."""
    total = counter.count_messages(messages) if tokens_before is None else tokens_before
    report = FitReport(window=window, tokens_before=total, tokens_after=total)
    output = list(messages)
    if total <= window:
        return output, report
    protected = protected_positions(output)
    essential = sum(counter.count_message(_own_part(output[i])) for i in protected)
    if essential > window:
        # Nothing Fit may cut can make it fit: cutting the rest would only lose it.
        report.request_exceeds_window = True
        report.cannot_fit = (
            f"the system message and the latest user request alone take {essential:,} tokens, "
            f"over the {window:,}-token window: they are never cut, so the result cannot fit "
            "(nothing else was cut either, since that could not make it fit)"
        )
        return output, report
    tiers = _tiers(output, protected)
    cuts: dict[tuple[int, str, str | None, int], FitCut] = {}
    for floor in (MIN_KEEP_CHARS, LAST_ROUND_KEEP_CHARS):
        for tier in tiers:
            # Largest first; the summary last of all: it is the densest record of what was
            # folded away (and of what Fit cut, foreseen by the Compactor).
            for piece in sorted(tier, key=lambda p: (p.keep_head > 0, -len(p.text))):
                if total <= window:
                    break
                total = _cut_piece(output, origins, piece, total, window, counter, cuts, floor)
    report.cuts = list(cuts.values())
    report.tokens_after = total
    if total > window:
        report.cannot_fit = (
            f"everything that may be cut is down to its first and last part, and the result "
            f"still takes {total:,} tokens of the {window:,}-token window (images and the "
            "per-message overhead cannot be cut)"
        )
    return output, report


def _own_part(message: Message) -> Message:
    """A message without a summary merged into it: what of it is never cut."""
    content = message.get("content")
    if isinstance(content, str) and MERGE_SEPARATOR in content:
        parts = summary_parts(content)
        if parts is not None and parts.own_text is not None:
            return {**message, "content": parts.own_text}
    return message


def _cut_piece(
    output: list[Message],
    origins: Sequence[int | None],
    piece: _Piece,
    total: int,
    window: int,
    counter: TokenCounter,
    cuts: dict[tuple[int, str, str | None, int], FitCut],
    floor: int,
) -> int:
    """Cut `piece` (always from its original text, with more removed each try) until the total
    fits or it is down to `floor`; returns the new total and records the cut (a second round
    updates the first round's record of the same piece)."""
    original = output[piece.position]
    before = counter.count_message(original)
    if len(piece.text) <= floor:
        return total
    key = (piece.position, piece.kind, piece.tool_call_id, len(piece.text))
    earlier = cuts.get(key)
    remove = earlier.chars_before - earlier.chars_after if earlier is not None else 0
    chars_per_token = max((len(piece.text) - remove) / max(before, 1), 0.5)
    over = total - window
    best: tuple[Message, int, str] | None = None
    for _ in range(MAX_ATTEMPTS):
        # Aim a little past what is over: the marker costs tokens, and text is not uniform.
        remove += int((over + 16) * chars_per_token * 1.1) + 1
        shorter = _cut(piece, remove, floor)
        if shorter is None or (best is not None and shorter == best[2]):
            break
        candidate = piece.rebuild(original, shorter)
        after = counter.count_message(candidate)
        best = (candidate, after, shorter)
        over = total - before + after - window
        if over <= 0 or len(shorter) <= floor + len(fit_marker(len(piece.text))) + 2:
            break
    if best is None:
        return total
    candidate, after, shorter = best
    if after >= before:
        return total
    output[piece.position] = candidate
    if earlier is not None:
        earlier.chars_after, earlier.tokens_after = len(shorter), after
    else:
        cuts[key] = FitCut(
            message_index=piece.position,
            input_index=origins[piece.position] if piece.position < len(origins) else None,
            kind=piece.kind,
            chars_before=len(piece.text),
            chars_after=len(shorter),
            tokens_before=before,
            tokens_after=after,
            role=str(original.get("role")),
            tool_call_id=piece.tool_call_id,
        )
    # Later pieces of the same message rebuild from the message as it now is.
    return total - before + after


def _cut(piece: _Piece, remove: int, floor: int) -> str | None:
    if piece.kind == ARGUMENTS:
        shorter = cut_json_arguments(piece.text, remove, floor)
        if shorter is not None:
            return shorter
        try:
            loads_json(piece.text)
        except (ValueError, RecursionError):
            # Not JSON already: cutting it cannot make it worse.
            return cut_text(piece.text, remove, floor=floor)
        return None  # valid JSON with nothing long enough to cut: left whole
    return cut_text(piece.text, remove, piece.keep_head, floor)


def fit_phase(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    window: int,
    counter: TokenCounter,
    tokens_before: int | None = None,
) -> tuple[PhaseResult, FitReport]:
    """The Fit step as a PhaseResult (named "fit"), and its report."""
    started = time.perf_counter()
    output, report = fit_to_window(messages, origins, window, counter, tokens_before)
    fates = {cut.input_index: CUT_TO_FIT for cut in report.cuts if cut.input_index is not None}
    phase = PhaseResult(
        name="fit",
        messages=output,
        origins=list(origins),
        tokens_before=report.tokens_before,
        tokens_after=report.tokens_after,
        fates=fates,
        details=report.to_dict(),
        duration_s=time.perf_counter() - started,
    )
    return phase, report
