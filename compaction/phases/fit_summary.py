"""Fit's cut of a compaction summary: section by section, what the next window can best do
without first.

A summary cut in its middle like any other text lost exactly what it exists to carry: on small
windows (a τ-bench airline session at a third of its size, where the system prompt takes most of
the window) the cut went through Constraints & Preferences and the user's rules were gone, while
a plain head+tail cut kept them verbatim. So Fit shortens a summary's sections one at a time, in
CUT_ORDER: the record of what was done and looked at first (down to LAST_ROUND_KEEP_CHARS each),
and only in Fit's last round, after every other text was cut to its floor, the sections the agent
cannot resume without — Blocked, Pending User Asks, Goal, Constraints & Preferences and Active
Task, last of all. Within a section whole lines go before a line is cut (the oldest first in a
history, the last first in a ranking such as Critical Context), and a labelled list such as
`- URLs: a, b, c` loses whole items; every heading stays, so the summary still parses into its
13 sections.
"""

from __future__ import annotations

import re

from compaction.phases.fit_cuts import LAST_ROUND_KEEP_CHARS, MIN_CUT_CHARS, cut_text, fit_marker
from compaction.summary import SECTION_NAMES

#: Cut first: a record of work the files and the tail mostly still show.
EXPENDABLE: tuple[str, ...] = (
    "Resolved Questions",
    "Relevant Files",
    "Completed Actions",
    "Active State",
    "Key Decisions",
    "Critical Context",
    "In Progress",
    "Remaining Work",
)
#: Cut last, in this order: what the user asked and ruled, which the agent cannot rediscover.
ESSENTIAL: tuple[str, ...] = (
    "Blocked",
    "Pending User Asks",
    "Goal",
    "Constraints & Preferences",
    "Active Task",
)
CUT_ORDER: tuple[str, ...] = EXPENDABLE + ESSENTIAL
assert sorted(CUT_ORDER) == sorted(SECTION_NAMES)

_HEADING = re.compile(
    r"^## (" + "|".join(re.escape(name) for name in SECTION_NAMES) + r")[ \t]*$", re.M
)


def section_bodies(text: str, start: int = 0) -> list[tuple[str, int, int]]:
    """Each `## Name` section of a rendered summary from `start` on: its name and the span of
    its body (without the blank lines before the next heading); empty for text without them."""
    headings = list(_HEADING.finditer(text, start))
    spans = []
    for position, heading in enumerate(headings):
        end = headings[position + 1].start() if position + 1 < len(headings) else len(text)
        body_start = min(heading.end() + 1, end)
        body_end = body_start + len(text[body_start:end].rstrip())
        spans.append((heading.group(1), body_start, max(body_end, body_start)))
    return spans


def cut_summary(text: str, remove: int, keep_head: int, floor: int) -> str:
    """`text` (a summary message's text: its opening, then the 13 sections) with about `remove`
    characters cut, section by section in CUT_ORDER (see the module doc); the opening's
    `keep_head` characters are never cut. Text without the sections is cut like any other."""
    spans = section_bodies(text, keep_head)
    if len(spans) < 2:
        return cut_text(text, remove, keep_head, floor)
    bodies = {name: text[start:end] for name, start, end in spans}
    left = remove
    for name in CUT_ORDER:
        if left < MIN_CUT_CHARS:
            break
        body = bodies.get(name)
        if body is None:
            continue
        if name in EXPENDABLE:
            body_floor = min(floor, LAST_ROUND_KEEP_CHARS)
        elif floor > LAST_ROUND_KEEP_CHARS:
            continue  # Fit's first round: only the record of work; the user's words wait
        else:
            body_floor = floor
        shorter = cut_section(body, left, body_floor, oldest_first=name not in RANKED)
        left -= len(body) - len(shorter)
        bodies[name] = shorter
    pieces = [text[: spans[0][1]]]
    for position, (name, _, end) in enumerate(spans):
        following = spans[position + 1][1] if position + 1 < len(spans) else len(text)
        # The body, then what stood between it and the next body (blank lines, the heading).
        pieces += [bodies[name], text[end:following]]
    return "".join(pieces)


#: Sections whose lines are a ranking or a set of labelled lists rather than a history: their
#: last lines go first. Every other list is in the order things happened, and its oldest lines
#: go first (the later rule or ask is the one in force).
RANKED: tuple[str, ...] = ("Critical Context", "Relevant Files", "Active State")
_LABELLED_LIST = re.compile(r"^(?P<label>(?:- )?[^,:]{1,60}: )(?P<items>.+, .+)$")


def cut_section(body: str, remove: int, floor: int, oldest_first: bool = True) -> str:
    """A section's body with about `remove` characters cut, keeping at least `floor`: whole
    lines first (the oldest first, or the last first with `oldest_first=False`), so what is left
    is whole sentences rather than a half sentence either side of the marker; then a labelled
    list (`- URLs: a, b, c`) loses whole items from its end, and any other line left is cut in
    its middle."""
    lines = body.split("\n")
    order = range(len(lines)) if oldest_first else range(len(lines) - 1, -1, -1)
    dropped: set[int] = set()
    chars = 0
    for position in order:
        if len(dropped) == len(lines) - 1 or chars >= remove:
            break
        line = len(lines[position]) + 1
        if len(body) - chars - line < floor:
            break
        chars += line
        dropped.add(position)
    kept = [line for position, line in enumerate(lines) if position not in dropped]
    if len(kept) == 1 and chars < remove:
        shorter = _cut_list_items(kept[0], remove - chars, floor)
        if shorter is not None:
            chars += len(kept[0]) - len(shorter)
            kept = [shorter]
    if chars < MIN_CUT_CHARS:
        return cut_text(body, remove, floor=floor)
    rest = "\n".join(kept)
    if chars < remove:
        rest = cut_text(rest, remove - chars, floor=floor)
    marker = fit_marker(chars)
    return f"{marker}\n{rest}" if oldest_first else f"{rest}\n{marker}"


def _cut_list_items(line: str, remove: int, floor: int) -> str | None:
    """A labelled list line without its last items (about `remove` chars, at least one item and
    `floor` chars kept); None when the line is not such a list."""
    match = _LABELLED_LIST.match(line)
    if match is None:
        return None
    items = match.group("items").split(", ")
    kept = len(items)
    text = line
    while kept > 1 and len(line) - len(text) < remove:
        shorter = match.group("label") + ", ".join(items[: kept - 1])
        if len(shorter) < floor:
            break
        kept, text = kept - 1, shorter
    return text if kept < len(items) else None
