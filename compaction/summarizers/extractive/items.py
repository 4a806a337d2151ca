"""The unit the extractive summary is built from: an item of a section, with a priority.

Every section is a list of items; the budget fitter keeps the highest-priority ones and renders
the survivors in conversation order. Keeping priority and display order apart is what lets the
fitter drop the least useful lines first while the summary still reads chronologically.
"""

from __future__ import annotations

from dataclasses import dataclass

from compaction.summary import SECTION_NAMES

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
    ordered = sorted(items, key=lambda item: item.order)
    if name == "Goal":
        return "\n".join(item.text for item in ordered)
    lines: list[str] = []
    groups: dict[str, list[str]] = {}
    for item in ordered:
        if item.group is None:
            lines.append(item.line())
        else:
            groups.setdefault(item.group, []).append(item.text)
    lines.extend(f"{BULLET}{group}: {', '.join(values)}" for group, values in groups.items())
    if omitted:
        noun = "action" if name == "Completed Actions" else "item"
        kinds = f": {what}" if what else ""
        lines.append(f"(+{omitted:,} more {noun}{'s' if omitted != 1 else ''} not listed{kinds})")
    return "\n".join(lines)


def recency(index: int, total: int) -> float:
    """0.0 for the first message, 1.0 for the last: later facts matter more to the next turn.

    (Facts from the tail's pruned outputs come after the last message: they count as the last.)"""
    return min(index / total, 1.0) if total > 1 else 1.0
