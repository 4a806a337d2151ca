"""A summary's items and where each came from: message indexes, and `[#N]` citations in text.

Every item of every section carries the indexes of the messages it was taken from — indexes in
the conversation as `compress` received it, the ones the app and the report show — so a reader
can open the message behind any line. The extractive summariser knows them as it builds each
item; a model is asked to write `[#N]` after each item, and `split_citations` reads them back.

An item may also come from somewhere that is not a message: the session file's own record (the
working directory Claude Code writes on every record) or an earlier summary. `origin` says so, in
words a reader can check. What a check of the item found wrong (a citation of a message outside
what was summarised, a path the cited message does not hold) is in `flags`: a flag is shown
beside the item, it never fails a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: The origin of an item carried over from an earlier summary (the iterative update); the
#: earlier summary's message follows in parentheses when it was one of the conversation's.
CARRIED = "carried from the previous summary"
#: The most message indexes one item lists (a group line of 40 reads cites all 40 otherwise).
MAX_SOURCES = 40
#: A citation range wider than this is read as its two ends: a model that cites `[#3-#900]`
#: has not said which message it means.
MAX_RANGE = 30

# `[#12]`, `[#12, #15]`, `[#12-#15]`, `[#12–15]`, `[#12; #40-41]`; one bracket, any number.
_ONE = r"\d{1,7}(?:\s*[-–]\s*#?\s*\d{1,7})?"
_CITATION = re.compile(r"\s*\[#\s*(" + _ONE + r"(?:\s*[,;]\s*#?\s*" + _ONE + r")*)\s*\]")
# Something that looks like a citation but is not one we can read: `[#abc]`, `[# ]`, `[#12 and 14]`.
_BROKEN_CITATION = re.compile(r"\[#[^\]\n]{0,40}\]")
_NUMBER_OR_RANGE = re.compile(r"(\d{1,7})(?:\s*[-–]\s*#?\s*(\d{1,7}))?")


@dataclass(frozen=True)
class SummaryItem:
    """One line of a section (Active Task: the whole request), with its provenance."""

    text: str
    sources: tuple[int, ...] = ()
    origin: str | None = None
    flags: tuple[str, ...] = ()

    def with_flags(self, flags: tuple[str, ...]) -> SummaryItem:
        return SummaryItem(self.text, self.sources, self.origin, flags)

    def source_label(self) -> str:
        """`#12`, `#12, #40`, or the origin in words, for a line of text."""
        shown = ", ".join(f"#{index}" for index in self.sources)
        if self.origin and shown:
            return f"{shown}; {self.origin}"
        return shown or (self.origin or "no source")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "sources": list(self.sources)}
        if self.origin:
            data["origin"] = self.origin
        if self.flags:
            data["flags"] = list(self.flags)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> SummaryItem | None:
        """An item from its report form; None for anything that is not one (an old report)."""
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            return None
        sources = data.get("sources")
        flags = data.get("flags")
        origin = data.get("origin")
        return cls(
            text=data["text"],
            sources=tuple(s for s in sources if isinstance(s, int))
            if isinstance(sources, list)
            else (),
            origin=origin if isinstance(origin, str) else None,
            flags=tuple(f for f in flags if isinstance(f, str)) if isinstance(flags, list) else (),
        )


def limited(indexes: Any) -> tuple[int, ...]:
    """Sorted, distinct, at most MAX_SOURCES (the first and the latest kept when there are
    more: where a fact began and where it was last seen)."""
    ordered = sorted(set(indexes))
    if len(ordered) <= MAX_SOURCES:
        return tuple(ordered)
    half = MAX_SOURCES // 2
    return tuple(ordered[:half] + ordered[-half:])


@dataclass(frozen=True)
class Citations:
    """What `split_citations` read from one line."""

    text: str  # the line without its citations
    sources: tuple[int, ...]
    unreadable: tuple[str, ...]  # citation-like text that could not be read


def split_citations(line: str) -> Citations:
    """The `[#N]` citations of a line and the line without them."""
    if "[#" not in line:
        return Citations(line, (), ())
    sources: list[int] = []
    for found in _CITATION.finditer(line):
        for number in _NUMBER_OR_RANGE.finditer(found.group(1)):
            first = int(number.group(1))
            last = int(number.group(2)) if number.group(2) else first
            if last < first:
                first, last = last, first
            if last - first > MAX_RANGE:
                sources.extend((first, last))
            else:
                sources.extend(range(first, last + 1))
    text = _CITATION.sub("", line)
    unreadable = tuple(_BROKEN_CITATION.findall(text))
    if unreadable:
        text = _SPACES.sub(" ", _BROKEN_CITATION.sub("", text))
    return Citations(text.rstrip(), limited(sources), unreadable)


_SPACES = re.compile(r"(?<=\S)[ \t]{2,}")
