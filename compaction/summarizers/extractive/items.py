"""The unit the extractive summary is built from: an item of a section, with a priority.

Every section is a list of items; the budget fitter keeps the highest-priority ones and renders
the survivors in conversation order. Keeping priority and display order apart is what lets the
fitter drop the least useful lines first while the summary still reads chronologically.
"""

from __future__ import annotations

from dataclasses import dataclass

from compaction.summary import SECTION_NAMES
from compaction.summary.items import SummaryItem, limited

#: How each section's lines are written: bullets, numbered actions, or `Kind: a, b` groups.
BULLET = "- "


@dataclass
class Item:
    """One line (or one value of a grouped line) of a section."""

    text: str
    priority: float
    order: float  # display order within the section (conversation order)
    group: str | None = None  # Critical Context: values of one kind share a line
    focus: bool = False  # mentions the focus topic
    number: int | None = None  # Completed Actions: the action's number
    #: The messages it was taken from: indexes into the summarised turns while the summary is
    #: built (a tail output Phase 1 cut counts on after the turns; the opening request is -1),
    #: turned into the conversation's indexes when it is done (ExtractiveSummarizer).
    sources: tuple[int, ...] = ()
    origin: str | None = None  # where it came from when not a message (summary/items.py)

    def line(self) -> str:
        if self.number is not None:
            return f"{self.number}. {self.text}"
        if self.group is not None:
            return f"{BULLET}{self.group}: {self.text}"
        return f"{BULLET}{self.text}"


Sections = dict[str, list[Item]]


def empty_sections() -> Sections:
    return {name: [] for name in SECTION_NAMES if name != "Active Task"}


def render_items(items: list[Item], name: str, omitted: int = 0, what: str = "") -> str:
    """A section body from its kept items, in display order; grouped values share a line."""
    return "\n".join(line.text for line in rendered_lines(items, name, omitted, what))


def rendered_lines(
    items: list[Item],
    name: str,
    omitted: int = 0,
    what: str = "",
    omitted_sources: tuple[int, ...] = (),
) -> list[SummaryItem]:
    """The section's lines as render_items writes them, each with the sources of the items it
    shows (a grouped line: all of its values'; the "+N more" note: the left-out items')."""
    ordered = sorted(items, key=lambda item: item.order)
    if name == "Goal":
        return [SummaryItem(item.text, item.sources, item.origin) for item in ordered]
    lines: list[SummaryItem] = []
    groups: dict[str, list[Item]] = {}
    for item in ordered:
        if item.group is None:
            lines.append(SummaryItem(item.line(), item.sources, item.origin))
        else:
            groups.setdefault(item.group, []).append(item)
    for group, members in groups.items():
        text = f"{BULLET}{group}: {', '.join(member.text for member in members)}"
        sources = limited(source for member in members for source in member.sources)
        origins = {member.origin for member in members if member.origin}
        lines.append(SummaryItem(text, sources, next(iter(origins)) if origins else None))
    if omitted:
        noun = "action" if name == "Completed Actions" else "item"
        kinds = f": {what}" if what else ""
        text = f"(+{omitted:,} more {noun}{'s' if omitted != 1 else ''} not listed{kinds})"
        lines.append(SummaryItem(text, omitted_sources, "left out by the budget"))
    return lines


def recency(index: int, total: int) -> float:
    """0.0 for the first message, 1.0 for the last: later facts matter more to the next turn.

    (Facts from the tail's pruned outputs come after the last message: they count as the last.)"""
    return min(index / total, 1.0) if total > 1 else 1.0
