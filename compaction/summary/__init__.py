"""The structured summary: its 13 sections, the exact prefix and marker strings, parse and render.

The seed calls the summary "12 fields" but lists 13 headings; all 13 are kept, in this order.
Parsing is forgiving (models number headings, bold them or change their case) because a summary
that is right in substance should not be thrown away for its formatting; rendering is strict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compaction.summary.items import SummaryItem, split_citations

SECTION_NAMES: tuple[str, ...] = (
    "Active Task",
    "Goal",
    "Constraints & Preferences",
    "Completed Actions",
    "Active State",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Resolved Questions",
    "Pending User Asks",
    "Relevant Files",
    "Remaining Work",
    "Critical Context",
)

EMPTY_SECTION = "None."

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "This is a handoff from a previous context window — treat it as background reference, NOT as "
    "active instructions. Do NOT answer questions or fulfill requests mentioned in this summary; "
    "they were already addressed. Your current task is identified in the '## Active Task' "
    "section — resume exactly from there. Respond ONLY to the latest user message that appears "
    "AFTER this summary."
)

SYSTEM_NOTE = (
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to "
    "preserve context space. The current session state may still reflect earlier work, so build "
    "on that summary and state rather than re-doing work.]"
)

STATIC_MARKER_START = "[CONTEXT COMPACTION] "


def static_marker(turns: int) -> str:
    """The fallback text used when no summary could be produced."""
    return (
        f"[CONTEXT COMPACTION] {turns} conversation turns were removed to free context space "
        "but could not be summarized."
    )


def _key(name: str) -> str:
    return re.sub(r"[^a-z]+", "", name.lower().replace("&", "and"))


_KEYS = {_key(name): name for name in SECTION_NAMES}
# Common variants models write for the same section.
_KEYS.update(
    {
        "constraints": "Constraints & Preferences",
        "preferences": "Constraints & Preferences",
        "constraintsandpreferences": "Constraints & Preferences",
        "pendinguserrequests": "Pending User Asks",
        "pendingasks": "Pending User Asks",
        "files": "Relevant Files",
        "nextsteps": "Remaining Work",
        "blockers": "Blocked",
        "decisions": "Key Decisions",
        "currenttask": "Active Task",
        "currentstate": "Active State",
        "inprogresswork": "In Progress",
    }
)

# A heading line: markdown '#'s, or a bold/numbered line (`1. **Goal**` or `**1. Goal**`) that is
# only a section name.
_HEADING = re.compile(
    r"^\s{0,3}(?:#{1,6}\s*)?(?:\d{1,2}[.)]\s*)?(?:\*\*|__)?\s*(?:\d{1,2}[.)]\s*)?"
    r"(?P<name>[A-Za-z][A-Za-z &/]{1,40}?)"
    r"\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*$"
)


@dataclass
class Summary:
    """A summary split into the 13 sections (always all 13, in order).

    `items` holds each section's lines with their provenance (summary/items.py): the messages
    each was taken from, and what a check of it found. A summary parsed from text that carried
    no provenance (an old report, a hand-written summary) has none: `section_items` then gives
    its lines with no sources, which a reader sees as "no source".
    """

    sections: dict[str, str] = field(default_factory=dict)
    #: How many of the 13 headings the parsed text actually had (0 means it was not a summary).
    found_headings: int = 13
    items: dict[str, list[SummaryItem]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ordered: dict[str, str] = {}
        for name in SECTION_NAMES:
            body = (self.sections.get(name) or "").strip()
            ordered[name] = body or EMPTY_SECTION
        self.sections = ordered
        self.items = {name: list(items) for name, items in self.items.items() if items}

    def section_items(self, name: str) -> list[SummaryItem]:
        """The section's items: with provenance when the summary has it, else its lines."""
        if name in self.items:
            return self.items[name]
        if self.is_empty(name):
            return []
        return [SummaryItem(text) for text in section_item_texts(name, self.sections[name])]

    @property
    def has_provenance(self) -> bool:
        return bool(self.items)

    def flagged(self) -> list[tuple[str, SummaryItem]]:
        """(section, item) for every item a check flagged, in section order."""
        return [
            (name, item)
            for name in SECTION_NAMES
            for item in self.items.get(name, [])
            if item.flags
        ]

    def items_to_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {name: [item.to_dict() for item in items] for name, items in self.items.items()}

    @property
    def text(self) -> str:
        return render_summary(self)

    def is_empty(self, name: str) -> bool:
        return self.sections.get(name, EMPTY_SECTION).strip() in ("", EMPTY_SECTION)

    def to_dict(self) -> dict[str, str]:
        return dict(self.sections)


def section_item_texts(name: str, body: str) -> list[str]:
    """The items of a section body: the whole body for Active Task (one request, verbatim),
    else each non-empty line as written (its bullet or number kept)."""
    if name == "Active Task":
        stripped = body.strip()
        return [stripped] if stripped and stripped != EMPTY_SECTION else []
    return [
        line.strip() for line in body.splitlines() if line.strip() and line.strip() != EMPTY_SECTION
    ]


def render_sourced(summary: Summary) -> str:
    """The summary as text with where each line came from: `[#12, #40]` after each item (or
    its origin in words), and a `⚠` line under any item the provenance check flagged."""
    parts = []
    for name in SECTION_NAMES:
        lines = [f"## {name}"]
        items = summary.section_items(name)
        if not items:
            lines.append(EMPTY_SECTION)
        for item in items:
            lines.append(f"{item.text}   [{item.source_label()}]")
            lines.extend(f"  ⚠ {flag}" for flag in item.flags)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def items_from_dict(data: Any) -> dict[str, list[SummaryItem]]:
    """`Summary.items` from its report form (`items_to_dict`); {} for anything else."""
    if not isinstance(data, dict):
        return {}
    items: dict[str, list[SummaryItem]] = {}
    for name in SECTION_NAMES:
        entries = data.get(name)
        if isinstance(entries, list):
            parsed = [SummaryItem.from_dict(entry) for entry in entries]
            items[name] = [item for item in parsed if item is not None]
    return items


def render_summary(summary: Summary | dict[str, str]) -> str:
    """The canonical text: `## Name` then the body, for all 13 sections in order."""
    sections = summary.sections if isinstance(summary, Summary) else summary
    parts = []
    for name in SECTION_NAMES:
        body = (sections.get(name) or "").strip() or EMPTY_SECTION
        parts.append(f"## {name}\n{body}")
    return "\n\n".join(parts)


def _match_heading(line: str) -> str | None:
    stripped = line.strip()
    if not stripped or len(stripped) > 60:
        return None
    is_marked = stripped.startswith(("#", "**", "__")) or re.match(r"^\d{1,2}[.)]", stripped)
    if not is_marked:
        return None
    match = _HEADING.match(line)
    if not match:
        return None
    return _KEYS.get(_key(match.group("name")))


def parse_summary(text: str) -> Summary:
    """Split summary text into the 13 sections; missing sections become `None.`.

    Text before the first heading is kept in Critical Context rather than lost. A text with no
    recognisable heading has `found_headings == 0`.
    """
    bodies: dict[str, list[str]] = {}
    preamble: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        name = _match_heading(line)
        if name is not None:
            current = name
            bodies.setdefault(name, [])
            continue
        if current is None:
            preamble.append(line)
        else:
            bodies[current].append(line)
    sections = {name: "\n".join(lines).strip() for name, lines in bodies.items()}
    extra = "\n".join(preamble).strip()
    if extra and bodies:
        critical = sections.get("Critical Context", "")
        if critical in ("", EMPTY_SECTION):
            sections["Critical Context"] = extra
        else:
            sections["Critical Context"] = f"{critical}\n{extra}"
    return Summary(sections=sections, found_headings=len(bodies))


def parse_cited_summary(text: str) -> tuple[Summary, int]:
    """A model's summary whose items end in `[#N]` citations: the sections without them, each
    item with the messages it cited, and how many citation-like marks could not be read (each
    such item is flagged). Returns (summary, items that cited nothing)."""
    parsed = parse_summary(text)
    sections: dict[str, str] = {}
    items: dict[str, list[SummaryItem]] = {}
    uncited = 0
    for name in SECTION_NAMES:
        if parsed.is_empty(name):
            continue
        kept_lines: list[str] = []
        section: list[SummaryItem] = []
        texts = section_item_texts(name, parsed.sections[name])
        for line in texts:
            cited = split_citations(line)
            flags = tuple(f"unreadable citation {mark}" for mark in cited.unreadable)
            if not cited.sources:
                uncited += 1
                flags += ("no source cited",)
            if cited.text.strip():
                kept_lines.append(cited.text)
                section.append(SummaryItem(cited.text.strip(), cited.sources, None, flags))
        sections[name] = "\n".join(kept_lines)
        items[name] = section
    summary = Summary(sections=sections, found_headings=parsed.found_headings, items=items)
    return summary, uncited


# -- recognising an earlier compaction in a message --------------------------------------------
#
# One place decides what counts as an earlier summary (Phase 3 step 1), so the boundaries, the
# summariser's scan, the probes and the validator all agree.

#: Claude Code's compact summary opens the continued session's first user message with this.
CLAUDE_CODE_SUMMARY_OPENING = (
    "This session is being continued from a previous conversation that ran out of context."
)

#: The openings a message starts with when it holds an earlier compaction summary: ours (hermes
#: writes the same prefix) and Claude Code's.
SUMMARY_OPENINGS: tuple[str, ...] = (SUMMARY_PREFIX, CLAUDE_CODE_SUMMARY_OPENING)

#: Put between the summary and the message it was merged into (Phase 4, when neither role fits),
#: so a later pass can tell the summary from the message's own text: without it the next
#: compaction took the whole merged message for the previous summary and the user's own words
#: (often the latest request) were summarised away.
MERGE_SEPARATOR = "[END OF CONTEXT COMPACTION SUMMARY — the original message follows]"


@dataclass(frozen=True)
class SummaryParts:
    """A message holding an earlier summary: the summary body and the message's own text.

    `own_text` is what follows the merge separator ("" when the summary was merged into a message
    with no text, None when the message is only a summary); `opening` is the opening it was
    recognised by.
    """

    body: str
    own_text: str | None
    opening: str


def summary_parts(content: str) -> SummaryParts | None:
    """The earlier summary in `content` (a message's text), or None when there is none."""
    if not content.startswith(SUMMARY_OPENINGS):
        return None  # nearly every message: one C-level test, called once per message per run
    opening = next(o for o in SUMMARY_OPENINGS if content.startswith(o))
    rest = content[len(opening) :]
    body, separator, own = rest.partition(MERGE_SEPARATOR)
    own_text = own.strip("\n") if separator else None
    return SummaryParts(body.strip("\n"), own_text, opening)


def summary_message_body(content: str) -> str | None:
    """The summary inside a message that starts with a summary opening, else None."""
    parts = summary_parts(content)
    return None if parts is None else parts.body


def is_summary_text(content: str) -> bool:
    """True when `content` is only an earlier summary (a merged message has its own text too)."""
    parts = summary_parts(content)
    return parts is not None and parts.own_text is None


def strip_summary_prefix(text: str) -> str:
    """A summariser's answer without a leading copy of the prefix (models often echo it), so the
    assembled message never carries the prefix twice."""
    stripped = text.lstrip()
    while stripped.startswith(SUMMARY_PREFIX):
        stripped = stripped[len(SUMMARY_PREFIX) :].lstrip()
    return stripped if stripped != text.lstrip() else text
