"""Fit: after Phase 5, the result always fits the window.

The five phases shrink the middle; the head and the tail are protected, so one huge tool output
there (a 130K-token log in the tail, a whole file as an argument) outlives every compaction and
the agent's next call is rejected anyway. Fit is the last step of every compaction that ran: while
the context is over `context_length`, it cuts the largest pieces first — the tool outputs, then
the tool-call arguments — each keeping its first and last part around the marker
`[… N chars cut to fit the context window …]` (N with thousands separators). JSON arguments stay
valid JSON: their long string values are cut, never the JSON text itself.

The system message, the latest user request and the messages the user pinned (phases/pins.py)
are never cut; when Fit has to cut, its report names the pinned messages it left whole
(`held_by_pins`). When the rest cannot be cut far
enough — the pieces are already down to their first and last parts — Fit also cuts the other
turns' text (assistant prose, earlier user turns, the summary body, never its prefix), largest
first: a context the provider rejects helps nobody. Only when the system message and the latest
request alone exceed the window, or everything cut to its floor still leaves it over (images, the
per-message overhead), does the result stay over it, and the record says so, naming what fills
the window (the system prompt, the request, images, the rest, each with its tokens); then nothing
is cut at all, since no cut could make it fit and every cut would only lose text.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, resolve
from compaction.messages import (
    Marks,
    Message,
    call_arguments,
    content_text,
    image_count,
    last_user_index,
    loads_json,
    tool_calls,
)
from compaction.phases.boundaries import Boundaries
from compaction.phases.fit_cuts import (
    ARGUMENTS,
    LAST_ROUND_KEEP_CHARS,
    MIN_KEEP_CHARS,
    TOOL_OUTPUT,
    Piece,
    cut_json_arguments,
    cut_text,
    cut_tiers,
    fit_marker,
)
from compaction.phases.fit_summary import cut_summary
from compaction.result import Fate, PhaseResult
from compaction.summary import MERGE_SEPARATOR, summary_parts
from compaction.tokens import IMAGE_TOKENS, TokenCounter
from compaction.tokens.tally import at_least

#: How many times one piece is re-cut, each time from its original text, before moving on.
MAX_ATTEMPTS = 6
_INSTRUCTION_ROLES = ("system", "developer")


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
    #: The pinned messages Fit left whole although it had to cut (it would have cut them):
    #: each {"input_index", "message_index", "tokens"}.
    held_by_pins: list[dict[str, int | None]] = field(default_factory=list)

    @property
    def pinned_tokens(self) -> int:
        """The tokens of the pinned messages Fit could not cut."""
        return sum(int(held["tokens"] or 0) for held in self.held_by_pins)

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.window

    @property
    def largest_cut_chars(self) -> int:
        return max((cut.chars_before - cut.chars_after for cut in self.cuts), default=0)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "window": self.window,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "fits": self.fits,
            "cuts": [cut.to_dict() for cut in self.cuts],
            "largest_cut_chars": self.largest_cut_chars,
            "cannot_fit": self.cannot_fit,
            "request_exceeds_window": self.request_exceeds_window,
        }
        if self.held_by_pins:
            data["held_by_pins"] = list(self.held_by_pins)
            data["pinned_tokens"] = self.pinned_tokens
        return data


# -- the step ----------------------------------------------------------------------------------


def protected_positions(
    messages: Sequence[Message],
    origins: Sequence[int | None] | None = None,
    marks: Marks | None = None,
) -> set[int]:
    """The system (and developer) messages and the latest user request: never cut. `marks` are
    by input index (`origins` gives each message's), saying which user turns the harness sent."""
    protected = {i for i, m in enumerate(messages) if m.get("role") in _INSTRUCTION_ROLES}
    here = None
    if marks is not None and origins is not None:
        here = {pos: marks[o] for pos, o in enumerate(origins) if o is not None and o in marks}
    latest = last_user_index(messages, marks=here)
    if latest is not None:
        protected.add(latest)
    return protected


def fit_to_window(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    window: int,
    counter: TokenCounter,
    tokens_before: int | None = None,
    marks: Marks | None = None,
    pinned: Collection[int] = (),
) -> tuple[list[Message], FitReport]:
    """`messages` cut until they fit `window` tokens (see the module doc); never mutated.
    `pinned` are the input indexes the user pinned (`origins` says where they are)."""
    total = counter.count_messages(messages) if tokens_before is None else tokens_before
    report = FitReport(window=window, tokens_before=total, tokens_after=total)
    output = list(messages)
    if total <= window:
        return output, report
    protected = protected_positions(output, origins, marks)
    essential = sum(counter.count_message(_own_part(output[i])) for i in protected)
    if essential > window:
        # Nothing Fit may cut can make it fit: cutting the rest would only lose it.
        report.request_exceeds_window = True
        parts = _named_parts(output, protected, counter)
        report.cannot_fit = (
            f"the system message and the latest user request alone take {essential:,} tokens "
            f"({parts}), over the {window:,}-token window: they are never cut, so the result "
            "cannot fit (nothing else was cut either, since that could not make it fit)"
        )
        return output, report
    kept = _pinned_positions(output, origins, pinned, protected)
    kept_tokens = sum(counter.count_message(_own_part(output[i])) for i in kept)
    # What the pins hold back: the pinned messages Fit would otherwise have cut.
    cuttable = {
        piece.position
        for tier in cut_tiers(output, protected)
        for piece in tier
        if piece.position in kept and len(piece.text) > MIN_KEEP_CHARS
    }
    report.held_by_pins = [
        {
            "input_index": origins[i],
            "message_index": i,
            "tokens": counter.count_message(_own_part(output[i])),
        }
        for i in sorted(cuttable)
    ]
    if essential + kept_tokens > window:
        parts = _named_parts(output, protected, counter)
        report.cannot_fit = (
            f"the system message and the latest user request ({parts}) with the {len(kept):,} "
            f"pinned message(s) ({kept_tokens:,} tokens) are over the {window:,}-token window "
            "on their own: pinned messages are never cut, so the result cannot fit (nothing "
            "else was cut either, since that could not make it fit); unpin some"
        )
        return output, report
    protected |= kept
    tiers = cut_tiers(output, protected)
    cuts: dict[tuple[int, str, str | None, int], FitCut] = {}
    for floor in (MIN_KEEP_CHARS, LAST_ROUND_KEEP_CHARS):
        for tier in tiers:
            # Largest first; the summary last of all: it is the densest record of what was
            # folded away (and of what Fit cut, foreseen by the Compactor).
            for piece in sorted(tier, key=lambda p: (p.summary, -len(p.text))):
                if total <= window:
                    break
                total = _cut_piece(output, origins, piece, total, window, counter, cuts, floor)
    if total > window:
        # Every cut together still leaves it over: the provider rejects it either way, so the
        # cuts would only lose text (on small windows the summary's constraints and the tail's
        # user turns). As when the request alone is over, nothing is cut.
        parts = _named_parts(output, protected - kept, counter, total, kept)
        report.cannot_fit = (
            f"even with everything that may be cut down to its first and last part, the result "
            f"would take {total:,} tokens of the {window:,}-token window ({parts}), so nothing "
            "was cut, since that could not make it fit"
        )
        return list(messages), report
    report.cuts = list(cuts.values())
    report.tokens_after = total
    return output, report


def _pinned_positions(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    pinned: Collection[int],
    protected: set[int],
) -> set[int]:
    """The positions of the pinned messages that are not protected anyway."""
    if not pinned:
        return set()
    return {
        position
        for position, origin in enumerate(origins)
        if origin is not None
        and origin in pinned
        and position not in protected
        and position < len(messages)
    }


def _named_parts(
    messages: Sequence[Message],
    protected: set[int],
    counter: TokenCounter,
    total: int | None = None,
    held: Collection[int] = (),
) -> str:
    """What fills the window, by name and size: the system prompt, the latest request, images
    (never cut), the pinned messages (`held`), and with `total` what every other message still
    takes at its floor.

    "The result cannot fit" is only useful with its cause: a 15K-token system prompt in a 16K
    window is fixed by the harness, a pasted log in the request by the user, images by neither."""
    system = sum(
        counter.count_message(messages[i])
        for i in protected
        if messages[i].get("role") in _INSTRUCTION_ROLES
    )
    requests = [i for i in protected if messages[i].get("role") not in _INSTRUCTION_ROLES]
    request = sum(counter.count_message(_own_part(messages[i])) for i in requests)
    request_images = sum(image_count(messages[i]) for i in requests)
    parts = []
    if system:
        parts.append(f"system prompt {system:,} tokens")
    if requests:
        in_it = f", {request_images:,} image(s) in it" if request_images else ""
        parts.append(f"latest request {request:,} tokens{in_it}")
    pins = sum(counter.count_message(_own_part(messages[i])) for i in held)
    if held:
        parts.append(f"{len(held):,} pinned message(s) {pins:,} tokens")
    if total is not None:
        others = [i for i in range(len(messages)) if i not in protected and i not in held]
        images = sum(image_count(messages[i]) for i in others)
        if images:
            parts.append(f"{images:,} image(s) elsewhere {images * IMAGE_TOKENS:,} tokens")
        rest = total - system - request - pins - images * IMAGE_TOKENS
        if others and rest > 0:
            parts.append(
                f"{len(others):,} other message(s) at their floor, with the per-message "
                f"overhead, {rest:,} tokens"
            )
    return "; ".join(parts)


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
    piece: Piece,
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


def _cut(piece: Piece, remove: int, floor: int) -> str | None:
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
    if piece.summary:
        return cut_summary(piece.text, remove, piece.keep_head, floor)
    return cut_text(piece.text, remove, piece.keep_head, floor)


def fit_phase(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    window: int,
    counter: TokenCounter,
    tokens_before: int | None = None,
    marks: Marks | None = None,
    pinned: Collection[int] = (),
) -> tuple[PhaseResult, FitReport]:
    """The Fit step as a PhaseResult (named "fit"), and its report."""
    started = time.perf_counter()
    output, report = fit_to_window(messages, origins, window, counter, tokens_before, marks, pinned)
    fates: dict[int, str] = {
        cut.input_index: Fate.CUT_TO_FIT for cut in report.cuts if cut.input_index is not None
    }
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


#: What the summary message costs beyond its budget: the prefix and the 13 headings.
SUMMARY_OVERHEAD_TOKENS = 250


def expected_fit_cuts(
    messages: list[Message],
    raw_messages: Sequence[Message],
    tokens: Sequence[int],
    bounds: Boundaries,
    config: CompactionConfig,
    middle_tokens: int | Deferred[int],
    counter: TokenCounter,
    marks: Marks | None = None,
    budget: int | None = None,
    pinned: Collection[int] = (),
) -> list[tuple[int, str]]:
    """(message index, raw text) of the tool outputs and arguments Fit will cut from the head
    and the tail, foreseen before Phase 3 (empty when head + tail + the summary budget fit the
    window).

    Fit runs last, after the summary is written: what it cuts would leave the context unrecorded.
    Foreseen, those texts go to the summariser with the tail outputs Phase 1 pruned, so the
    summary can keep their errors and identifiers.
    """
    kept = [*range(bounds.head_end), *bounds.verbatim, *range(bounds.tail_start, len(messages))]
    if budget is None:  # `budget`: the summary budget as the caller decided it (tokens/tally.py)
        budget = config.summary_budget(resolve(middle_tokens))
    reserve = budget + SUMMARY_OVERHEAD_TOKENS
    if not at_least(tokens, config.context_length - reserve + 1, kept):
        return []
    window = max(config.context_length - reserve, 1)
    _, report = fit_to_window(
        [messages[i] for i in kept], kept, window, counter, marks=marks, pinned=pinned
    )
    texts: list[tuple[int, str]] = []
    for cut in report.cuts:
        index = cut.input_index
        if index is None or cut.kind not in (TOOL_OUTPUT, ARGUMENTS):
            continue
        raw = raw_messages[index]
        if cut.kind == TOOL_OUTPUT:
            texts.append((index, content_text(raw)))
        else:
            texts += [
                (index, call_arguments(c))
                for c in tool_calls(raw)
                if c.get("id") == cut.tool_call_id
            ]
    return texts
