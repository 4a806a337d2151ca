"""Summary drift: what each iterative summary changed, and which facts it silently dropped.

An iterative update rewrites the previous summary. A fact that survives one compaction and is
gone after the next is lost for good — no later summary can bring it back — and nobody notices,
because each summary looks fine on its own. So the drift view diffs the 13 sections of every
summary version against the previous one (difflib, per section) and lists plainly the facts of
version k that version k+1 no longer mentions anywhere: file paths, error strings, identifiers
(the same scanners the probes use) and the user's constraints.

A fact that moved to another section is not "vanished": presence is checked against the whole
next summary, normalised as the probes normalise (lower case, whitespace collapsed).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.lab.probes import normalise
from compaction.summary import EMPTY_SECTION, SECTION_NAMES, render_summary
from compaction.text.patterns import error_lines, identifiers

DRIFT_CATEGORIES = ("paths", "errors", "identifiers", "constraints")

# A path: something with a slash, or a bare file name with a common source/config extension
# (a bare "a.b" is too often an attribute, `users.email`, to count as a path).
_EXTENSIONS = (
    "py|pyi|js|jsx|ts|tsx|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|m|sh|bash|zsh|sql|md|rst|"
    "txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|lock|xml|html|css|scss|csv|ipynb|traj|log"
)
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~?[\w.-]*/[\w./-]*[\w-]|[\w.-]+\.(?:" + _EXTENSIONS + r"))(?![\w/])"
)
_URLISH = re.compile(r"https?://\S+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s*")
_SEPARATORS = re.compile(r" — | \| |; ")
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)+$")
_ALTERNATIVES = frozenset({"and/or", "read/write", "input/output", "yes/no", "on/off"})


@dataclass(frozen=True)
class VanishedFact:
    """A fact present in summary version k and absent from version k+1."""

    category: str  # paths | errors | identifiers | constraints
    text: str
    section: str  # where it was in version k

    def to_dict(self) -> dict[str, str]:
        return {"category": self.category, "text": self.text, "section": self.section}


@dataclass(frozen=True)
class SectionDiff:
    """One section of version k+1 against version k."""

    name: str
    changed: bool
    added: list[str]
    removed: list[str]
    diff: str  # a unified diff of the section bodies ("" when unchanged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "changed": self.changed,
            "added": self.added,
            "removed": self.removed,
            "diff": self.diff,
        }


@dataclass
class DriftEntry:
    """Summary version `version` (the (version+1)-th summary) compared with the one before."""

    version: int  # 1 for the second summary: version 0 has nothing to compare with
    event: int  # the timeline event number that produced this version
    previous_event: int
    step: int
    sections: list[SectionDiff]
    vanished: list[VanishedFact] = field(default_factory=list)

    @property
    def changed_sections(self) -> list[str]:
        return [diff.name for diff in self.sections if diff.changed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "event": self.event,
            "previous_event": self.previous_event,
            "step": self.step,
            "changed_sections": self.changed_sections,
            "sections": [diff.to_dict() for diff in self.sections],
            "vanished": [fact.to_dict() for fact in self.vanished],
        }


def summary_paths(text: str) -> list[str]:
    """File paths mentioned in summary text (URLs and version numbers are not paths)."""
    text = _URLISH.sub(" ", text)
    found = []
    for match in _PATH.finditer(text):
        value = match.group().rstrip(".")
        if not re.search(r"[A-Za-z]", value) or _VERSIONISH.match(value):
            continue
        if _label_or_alternative(value, text[match.end() : match.end() + 2]):
            continue
        found.append(value)
    return found


def _label_or_alternative(value: str, after: str) -> bool:
    """`Files modified/created: …` labels a list, and `and/or` is prose: slashed words that are
    not paths. A plain `word/word` followed by a colon, or a known pair, is skipped."""
    if value.lower() in _ALTERNATIVES:
        return True
    plain = bool(re.fullmatch(r"[a-z]+/[a-z]+", value))
    return plain and after.startswith(":") and after[1:2] in ("", " ")


def error_fragments(body: str) -> list[str]:
    """The error evidence of a summary section, one fact per error.

    Summary lines pack several things together (`2. ran pytest -> exit 1 — FAILED test_x |
    "exit_code": 1`); the whole line vanishing says nothing when its error moved to another
    line. So each error line is split at the separators summaries use and only the pieces that
    are themselves errors are facts.
    """
    fragments: list[str] = []
    for line in error_lines(body):
        pieces = [_BULLET.sub("", piece).strip(" `") for piece in _SEPARATORS.split(line)]
        errors = [piece for piece in pieces if piece and error_lines(piece)]
        fragments.extend(errors or [line])
    return fragments


def _constraint_items(body: str) -> list[str]:
    items = []
    for line in body.splitlines():
        item = _BULLET.sub("", line).strip()
        if item and item != EMPTY_SECTION:
            items.append(item)
    return items


def summary_facts(sections: dict[str, str]) -> list[VanishedFact]:
    """Every fact of a summary, with the section it sits in, deduplicated per category."""
    facts: list[VanishedFact] = []
    seen: set[tuple[str, str]] = set()

    def add(category: str, texts: Iterable[str], section: str) -> None:
        for text in texts:
            key = (category, normalise(text))
            if key[1] and key not in seen:
                seen.add(key)
                facts.append(VanishedFact(category, " ".join(text.split()), section))

    for name in SECTION_NAMES:
        body = sections.get(name) or EMPTY_SECTION
        if body.strip() == EMPTY_SECTION:
            continue
        add("paths", summary_paths(body), name)
        add("errors", error_fragments(body), name)
        add("identifiers", identifiers(body), name)
        if name == "Constraints & Preferences":
            add("constraints", _constraint_items(body), name)
    return facts


def diff_sections(before: dict[str, str], after: dict[str, str]) -> list[SectionDiff]:
    """Per-section line diff of two summary versions, in the 13-section order."""
    diffs = []
    for name in SECTION_NAMES:
        old = (before.get(name) or EMPTY_SECTION).splitlines()
        new = (after.get(name) or EMPTY_SECTION).splitlines()
        if old == new:
            diffs.append(SectionDiff(name, False, [], [], ""))
            continue
        matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
        added: list[str] = []
        removed: list[str] = []
        for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
            if tag in ("replace", "delete"):
                removed.extend(old[a_start:a_end])
            if tag in ("replace", "insert"):
                added.extend(new[b_start:b_end])
        unified = "\n".join(difflib.unified_diff(old, new, "previous", "current", n=1, lineterm=""))
        diffs.append(SectionDiff(name, True, added, removed, unified))
    return diffs


def vanished_facts(before: dict[str, str], after: dict[str, str]) -> list[VanishedFact]:
    """Facts of `before` that appear nowhere in `after` (normalised substring test)."""
    haystack = normalise(render_summary(after))
    return [fact for fact in summary_facts(before) if normalise(fact.text) not in haystack]


def drift(events: Any) -> list[DriftEntry]:
    """Drift between consecutive summary versions of a Timeline (or its list of events).

    Events without a summary (skipped, static fallback) are not versions; the comparison runs
    from the last summary before them to the next one after.
    """
    sequence: Sequence[Any] = getattr(events, "events", events)
    versions = [event for event in sequence if getattr(event, "summary", None)]
    entries = []
    for position in range(1, len(versions)):
        previous, current = versions[position - 1], versions[position]
        entries.append(
            DriftEntry(
                version=position,
                event=current.number,
                previous_event=previous.number,
                step=current.step,
                sections=diff_sections(previous.summary, current.summary),
                vanished=vanished_facts(previous.summary, current.summary),
            )
        )
    return entries
