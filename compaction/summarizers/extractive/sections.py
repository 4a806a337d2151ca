"""From the scan's findings to prioritised items for each of the 12 non-task sections.

Priorities encode what the next context window needs most: failures and file changes over
reads, recent over old, facts stated by the user or the assistant over identifiers that merely
appeared in a tool's output. Exact strings (commands, paths, error lines) are kept verbatim,
because an agent resuming the work will search for, re-run or fix exactly those.
"""

from __future__ import annotations

import re

from compaction.summarizers.extractive.findings import Findings
from compaction.summarizers.extractive.items import Item, Sections, empty_sections, recency
from compaction.summarizers.extractive.text import constraints, first_sentences
from compaction.text_patterns import cut, user_text

_VERB_PRIORITY = {
    "deleted": 46.0,
    "created": 45.0,
    "written": 45.0,
    "edited": 45.0,
    "read": 25.0,
    "searched": 18.0,
    "used in a command": 18.0,
    "mentioned": 15.0,
}
_KIND_PRIORITY = {
    "write_file": 25.0,
    "patch": 25.0,
    "terminal": 22.0,
    "delegate_task": 18.0,
    "read_file": 10.0,
    "search_files": 10.0,
}
_CONFIG_VALUE = re.compile(
    r"(?:--[\w-]{2,40}=[^\s'\"`]{1,60}|\b[A-Z][A-Z0-9_]{2,40}=[^\s'\"`;&]{1,60})"
)
_ERROR_CODE = re.compile(r"\b(?:[A-Z]{1,3}\d{3,5}|HTTP \d{3}|errno \d{1,4})\b")


def build_sections(findings: Findings, total: int, first_number: int, goal: str | None) -> Sections:
    """Items for every section but Active Task; actions numbered from `first_number`."""
    sections = empty_sections()
    if goal:
        sections["Goal"].append(Item(first_sentences(goal), 100.0, 0.0))
    _constraints(sections, findings, total, goal)
    _actions(sections, findings, total, first_number)
    for position, (key, value) in enumerate(findings.state.items()):
        sections["Active State"].append(Item(f"{key}: {value}", 80.0 - position, position))
    for position, text in enumerate(findings.in_progress[-3:]):
        sections["In Progress"].append(Item(cut(text, 300), 70.0 + position, position))
    for index, text in findings.blocked:
        sections["Blocked"].append(Item(text, 60.0 + 10 * recency(index, total), index))
    _unique(sections["Key Decisions"], findings.decisions, 35.0, total)
    for index, question, answer in findings.resolved:
        text = f"{question} — {answer}"
        sections["Resolved Questions"].append(Item(text, 30.0 + 10 * recency(index, total), index))
    _unique(sections["Pending User Asks"], findings.pending, 55.0, total)
    _files(sections, findings, total)
    seen: set[str] = set()
    for position, text in enumerate(findings.remaining):
        if text not in seen:
            seen.add(text)
            sections["Remaining Work"].append(Item(text, 50.0 - position * 0.01, position))
    _critical(sections, findings, total)
    return sections


def _unique(target: list[Item], entries: list[tuple[int, str]], base: float, total: int) -> None:
    seen: set[str] = set()
    for index, text in entries:
        key = text.lower()
        if key not in seen:
            seen.add(key)
            target.append(Item(text, base + 10 * recency(index, total), index))


def _constraints(sections: Sections, findings: Findings, total: int, goal: str | None) -> None:
    # The opening request usually sets the ground rules; it may sit in the head, not the turns.
    opening = [(-1, s) for s in constraints(user_text({"content": goal}))] if goal else []
    _unique(sections["Constraints & Preferences"], opening + findings.constraints, 50.0, total)


def _actions(sections: Sections, findings: Findings, total: int, first_number: int) -> None:
    for number, action in enumerate(findings.actions, first_number):
        text = action.line
        if action.failed and action.errors:
            extra = [line for line in action.errors if line not in text][-2:]
            if extra:
                text += " | " + " | ".join(extra)
        base = 30.0 if action.failed else _KIND_PRIORITY.get(action.kind or "", 15.0)
        priority = base + 10 * recency(action.index, total)
        item = Item(text, priority, float(number), number=number)
        sections["Completed Actions"].append(item)


def _files(sections: Sections, findings: Findings, total: int) -> None:
    records = list(findings.files.values())
    # A bare or relative path that names a file already known by a longer path is that file.
    by_suffix: dict[str, str] = {}
    for record in records:
        parts = record.path.split("/")
        for start in range(1, len(parts)):
            by_suffix.setdefault("/".join(parts[start:]), record.path)
    merged: dict[str, list[str]] = {}
    last: dict[str, int] = {}
    for record in records:
        target = record.path
        if record.verbs == ["mentioned"] and record.path in by_suffix:
            target = by_suffix[record.path]
        verbs = merged.setdefault(target, [])
        verbs.extend(verb for verb in record.verbs if verb not in verbs)
        last[target] = max(last.get(target, 0), record.last_index)
    for order, (path, verbs) in enumerate(merged.items()):
        best = max(_VERB_PRIORITY.get(verb, 15.0) for verb in verbs)
        priority = best + 10 * recency(last[path], total)
        sections["Relevant Files"].append(Item(f"{path} — {', '.join(verbs)}", priority, order))


def _critical(sections: Sections, findings: Findings, total: int) -> None:
    latest: dict[str, tuple[int, str, bool]] = {}
    for index, kind, value, prose in findings.identifiers:
        earlier = latest.get(value)
        latest[value] = (index, kind, prose or (earlier is not None and earlier[2]))
    for action in findings.actions:
        if action.command:
            for value in _CONFIG_VALUE.findall(action.command.split("\n", 1)[0]):
                latest.setdefault(value, (action.index, "Config values", True))
        for line in action.errors:
            for code in _ERROR_CODE.findall(line):
                latest[code] = (action.index, "Error codes", True)
    target = sections["Critical Context"]
    for order, (value, (index, kind, prose)) in enumerate(latest.items()):
        base = 30.0 if prose else 15.0
        target.append(Item(value, base + 10 * recency(index, total), order, group=kind))
