"""The original and the compacted conversation side by side, aligned message by message: a kept
message beside itself, the summarised span beside the summary, a one-line summary beside the
output it replaced, a removed message beside nothing.

`align` walks the compacted conversation once (its `origins` name each output message's input
index) and places every input message on one row, so the two sides are one list of rows: drawn in
one scroll container, they scroll together by construction. Rows are paged, because the browser
pays for every element (2,000 rows of text would take seconds to draw). All conversation text is
shown with `st.text` (plain text), labels through md_escape.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from compaction.messages import Message, is_summary_message
from compaction.result import CompactionResult, Fate
from compaction.ui.charts import preview
from compaction.ui.palette import FATE_LABELS
from compaction.ui.phase_diff import message_text
from compaction.ui.untrusted import md_escape

PAGE_ROWS = 40
ROW_CHARS = 600  # each side of a row shows this much of its text; the diff shows all of it
PAGE_KEY = "side_by_side_page"
OPEN_KEY = "side_by_side_open"
SPAN_PREVIEWS = 6  # a summarised span lists this many of its messages, then a count


@dataclass(frozen=True)
class AlignedRow:
    """One row: input messages `left` (several for the summarised span) beside output message
    `right` (None when nothing replaced them). `kind` says how they relate."""

    left: tuple[int, ...]
    right: int | None
    kind: str  # "kept" | "changed" | "summary" | "inserted" | "removed"
    fate: str | None = None


def _summary_position(
    result: CompactionResult, origins: Sequence[int | None], messages: Sequence[Message]
) -> int | None:
    """Where the summary sits in the output: the inserted summary message, or the tail message it
    was merged into. (Found in the final output, since cleanup and Fit may shift positions.)"""
    inserted = [p for p, o in enumerate(origins) if o is None and is_summary_message(messages[p])]
    if inserted:
        return inserted[0]
    assemble = next((p.details for p in result.phases if p.name == "assemble"), {})
    if assemble.get("summary_role"):  # a summary text the detector does not know (a fallback)
        return next((p for p, o in enumerate(origins) if o is None), None)
    merged = assemble.get("merged_into")
    if isinstance(merged, int):
        return next((p for p, o in enumerate(origins) if o == merged), None)
    return None


def align(original: Sequence[Message], result: CompactionResult) -> list[AlignedRow]:
    """Every input message on exactly one row, in the compacted conversation's order."""
    final = result.phases[-1] if result.phases else None
    origins: list[int | None] = list(final.origins) if final is not None else []
    messages = result.messages
    if final is None or len(origins) != len(messages):
        origins = (
            list(range(len(messages))) if len(messages) == len(original) else [None] * len(messages)
        )
    fates = result.fates
    placed = {o for o in origins if o is not None}
    summary_at = _summary_position(result, origins, messages) if not result.skipped else None
    folded = tuple(
        i
        for i in range(len(original))
        if i not in placed
        and fates.get(i) in (Fate.FOLDED_INTO_SUMMARY, Fate.PREVIOUS_SUMMARY_REPLACED)
    )
    in_summary = set(folded)
    # Input messages with no output and not in the summary (orphans removed) sit after the row
    # of the nearest earlier input message that has one (-1: before the first row).
    after: dict[int, list[int]] = {}
    anchor = -1
    for i in range(len(original)):
        if i in placed:
            anchor = i
        elif i not in in_summary:
            after.setdefault(anchor, []).append(i)
    rows: list[AlignedRow] = []
    for removed in after.pop(-1, []):
        rows.append(AlignedRow((removed,), None, "removed", fates.get(removed)))
    for position, origin in enumerate(origins):
        if position == summary_at:
            left = folded if origin is None else (*folded, origin)
            fate = fates.get(origin) if origin is not None else None
            rows.append(AlignedRow(tuple(left), position, "summary", fate))
        elif origin is None:
            rows.append(AlignedRow((), position, "inserted"))
        else:
            fate = fates.get(origin)
            same = original[origin] == messages[position]
            rows.append(AlignedRow((origin,), position, "kept" if same else "changed", fate))
        if origin is not None:
            for removed in after.pop(origin, []):
                rows.append(AlignedRow((removed,), None, "removed", fates.get(removed)))
    if summary_at is None and folded:  # no summary message to stand beside: shown as removed
        rows.append(AlignedRow(folded, None, "removed", Fate.FOLDED_INTO_SUMMARY))
    for leftovers in after.values():
        rows += [AlignedRow((i,), None, "removed", fates.get(i)) for i in leftovers]
    return rows


def _clip(text: str, limit: int = ROW_CHARS) -> str:
    return (
        text
        if len(text) <= limit
        else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"
    )


def row_texts(
    row: AlignedRow, original: Sequence[Message], compacted: Sequence[Message]
) -> tuple[str, str]:
    """The plain text of each side of a row (a span lists its first messages and a count)."""
    if len(row.left) > 1:
        lines = [f"{len(row.left):,} messages summarised (#{row.left[0]}–#{row.left[-1]}):"]
        lines += [
            f"#{i} [{original[i].get('role', '?')}] {preview(original[i], 90)}"
            for i in row.left[:SPAN_PREVIEWS]
        ]
        if len(row.left) > SPAN_PREVIEWS:
            lines.append(f"… and {len(row.left) - SPAN_PREVIEWS:,} more")
        left = "\n".join(lines)
    elif row.left:
        left = _clip(message_text(original[row.left[0]]))
    else:
        left = "(new: not in the original)"
    right = (
        _clip(message_text(compacted[row.right]))
        if row.right is not None
        else "(not in the compacted conversation)"
    )
    return left, right


def row_diff(
    row: AlignedRow, original: Sequence[Message], compacted: Sequence[Message], max_lines: int = 400
) -> str:
    """A unified diff of the row's original text against its compacted text."""
    before = "\n\n".join(message_text(original[i]) for i in row.left).splitlines()
    after = message_text(compacted[row.right]).splitlines() if row.right is not None else []
    lines = list(difflib.unified_diff(before, after, "original", "compacted", lineterm="", n=2))
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… {len(lines) - max_lines:,} more diff lines"]
    return "\n".join(lines) or "(no textual difference)"


_KIND_LABELS = {
    "kept": "kept",
    "changed": "changed",
    "summary": "summarised span → summary",
    "inserted": "inserted",
    "removed": "removed",
}


def _side_label(row: AlignedRow, side: str) -> str:
    if side == "left":
        where = (
            f"#{row.left[0]}"
            if len(row.left) == 1
            else f"#{row.left[0]}–#{row.left[-1]}"
            if row.left
            else "—"
        )
    else:
        where = f"out #{row.right}" if row.right is not None else "—"
    fate = FATE_LABELS.get(row.fate or "", "") if row.fate and row.fate != Fate.KEPT else ""
    return f"{where} · {_KIND_LABELS[row.kind]}" + (f" · {fate}" if fate else "")


def _open(row_number: int) -> None:
    st.session_state[OPEN_KEY] = row_number


def render_side_by_side(original: Sequence[Message], result: CompactionResult, key: str) -> None:
    """The aligned transcript, paged, in one scroll container; a click on either side of a row
    opens that row's text diff below it."""
    rows = align(original, result)
    pages = max(1, -(-len(rows) // PAGE_ROWS))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.kind] = counts.get(row.kind, 0) + 1
    st.caption(
        " · ".join(f"{n:,} {_KIND_LABELS[kind]}" for kind, n in counts.items())
        + ". Click either side of a row to see its text diff."
    )
    page = 1
    if pages > 1:
        page = int(
            st.number_input(f"Page (of {pages}, {PAGE_ROWS} rows each)", 1, pages, 1, key=PAGE_KEY)
        )
    start = (page - 1) * PAGE_ROWS
    header = st.columns(2)
    header[0].markdown("**Original**")
    header[1].markdown("**Compacted**")
    with st.container(height=520, key=f"{key}_scroll"):
        for number in range(start, min(start + PAGE_ROWS, len(rows))):
            row = rows[number]
            left, right = row_texts(row, original, result.messages)
            with st.container(key=f"{key}_row_{number}", border=True):
                columns = st.columns(2)
                for column, side, text in (
                    (columns[0], "left", left),
                    (columns[1], "right", right),
                ):
                    column.button(
                        md_escape(_side_label(row, side)),
                        key=f"{key}_{side}_{number}",
                        on_click=_open,
                        args=(number,),
                        type="tertiary",
                    )
                    column.text(text)
    chosen = st.session_state.get(OPEN_KEY)
    if isinstance(chosen, int) and 0 <= chosen < len(rows):
        row = rows[chosen]
        left, right = _side_label(row, "left"), _side_label(row, "right")
        st.markdown(f"**Text diff** — {md_escape(left)} → {md_escape(right)}")
        diff = row_diff(row, original, result.messages)
        # A summarised span's diff runs to hundreds of lines: scroll it rather than the page.
        st.code(
            diff,
            language="diff",
            wrap_lines=True,
            height=420 if diff.count("\n") > 24 else "content",
        )
