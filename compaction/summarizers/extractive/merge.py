"""The iterative update: fold an earlier summary into the one built from the new turns.

The rules are ALGORITHM.md's: keep what is still relevant, continue the Completed Actions
numbering, move finished In Progress items to Completed Actions and answered questions to
Resolved Questions, update Active State, and drop only what is clearly obsolete (a blocker whose
command has since succeeded, a plan superseded by a newer plan). Earlier items get lower
priorities than new ones, so under a tight budget the old history is what gives way.
"""

from __future__ import annotations

import re
from typing import Any

from compaction.summarizers.extractive.findings import Findings, command_key
from compaction.summarizers.extractive.items import Item, Sections
from compaction.summarizers.extractive.text import content_words, first_sentences
from compaction.summary import Summary
from compaction.summary.items import CARRIED

_NUMBERED = re.compile(r"^\s*(\d{1,6})[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,6}[.)])\s+")
_OMITTED = re.compile(r"^\(\+[\d,]+ more \w+ not listed(?:: [^)]*)?\)$")
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_KEY_VALUE = re.compile(r"^([A-Za-z][\w /&-]{1,40}):\s+(.+)$")
_FILE_LINE = re.compile(r"^`?([^\s`]+)`?\s+(?:—|-|:)\s+(.+)$")
OLD = 0.5  # previous items rank below new ones of the same section


def previous_lines(body: str) -> list[str]:
    """The non-empty lines of a previous section, bullets stripped; `None.` and our own
    "(+N more … not listed)" notes are not content."""
    lines = []
    for raw in body.splitlines():
        line = _BULLET.sub("", raw).strip()
        if line and line != "None." and not _OMITTED.match(line):
            lines.append(line)
    return lines


def previous_actions(body: str) -> tuple[list[tuple[int, str]], int]:
    """Numbered (number, text) actions of a previous summary and the next free number."""
    actions: list[tuple[int, str]] = []
    highest = 0
    for raw in body.splitlines():
        if not raw.strip() or raw.strip() == "None." or _OMITTED.match(raw.strip()):
            continue
        numbered = _NUMBERED.match(raw)
        if numbered:
            number, text = int(numbered.group(1)), numbered.group(2).strip()
        else:
            number, text = highest + 1, _BULLET.sub("", raw).strip()
        highest = max(highest, number)
        actions.append((number, text))
    return actions, highest + 1


def finished_in_progress(previous: Summary, findings: Findings) -> list[str]:
    """Earlier In Progress items, now finished if the work went on (new results or replies).

    They take the numbers right after the earlier actions, before the new turns' actions."""
    if not (findings.actions or findings.assistant_texts):
        return []
    return previous_lines(previous.sections["In Progress"])


def _answer_for(question: str, answers: list[str]) -> str | None:
    """The first new assistant text sharing enough content words with `question`."""
    words = content_words(question)
    if not words:
        return None
    needed = min(2, len(words))
    for text in answers:
        if len(words & content_words(text)) >= needed:
            return first_sentences(text, 1, 240)
    return None


def merge_previous(
    sections: Sections,
    previous: Summary,
    findings: Findings,
    next_number: int,
    origin: str = CARRIED,
) -> dict[str, Any]:
    """Fold `previous` into `sections` (new items) in place; returns what moved, for details.

    Every item taken from the earlier summary says so (`origin`): it has no message of its own
    in the turns, and the provenance check looks for it in the earlier summary instead."""
    new = {id(item) for items in sections.values() for item in items}
    moved = _merge(sections, previous, findings, next_number)
    for items in sections.values():
        for item in items:
            if id(item) not in new:
                item.origin = origin
    return moved


def _merge(
    sections: Sections, previous: Summary, findings: Findings, next_number: int
) -> dict[str, Any]:
    moved: dict[str, Any] = {"finished_in_progress": 0, "answered": 0, "resolved_blockers": 0}
    body = previous.sections
    actions, _ = previous_actions(body["Completed Actions"])
    done = sections["Completed Actions"]
    count = max(len(actions), 1)
    for position, (number, text) in enumerate(actions):
        priority = 12.0 + 5 * position / count
        done.append(Item(text, priority * OLD + 5, float(number), number=number))
    finished = finished_in_progress(previous, findings)
    for number, text in enumerate(finished, next_number):
        done.append(Item(f"(finished) {text}", 20.0, float(number), number=number))
    moved["finished_in_progress"] = len(finished)
    if not finished:
        _keep(sections["In Progress"], previous_lines(body["In Progress"]), 60.0)

    if not sections["Goal"]:
        _keep(sections["Goal"], [body["Goal"]] if body["Goal"] != "None." else [], 100.0)
    _keep(
        sections["Constraints & Preferences"],
        previous_lines(body["Constraints & Preferences"]),
        45.0,
    )
    _merge_state(sections["Active State"], previous_lines(body["Active State"]))

    unresolved = []
    for text in previous_lines(body["Blocked"]):
        keys = {command_key(found) for found in _BACKTICKED.findall(text)}
        if keys & findings.succeeded_keys:
            moved["resolved_blockers"] += 1
        else:
            unresolved.append(text)
    _keep(sections["Blocked"], unresolved, 50.0)
    _keep(sections["Key Decisions"], previous_lines(body["Key Decisions"]), 30.0)

    resolved = previous_lines(body["Resolved Questions"])
    pending = []
    for question in previous_lines(body["Pending User Asks"]):
        answer = _answer_for(question, findings.assistant_texts)
        if answer is None:
            pending.append(question)
        else:
            resolved.append(f"{question} — {answer}")
            moved["answered"] += 1
    _keep(sections["Resolved Questions"], resolved, 25.0)
    _keep(sections["Pending User Asks"], pending, 50.0)
    _merge_files(sections["Relevant Files"], previous_lines(body["Relevant Files"]))
    if not findings.todo_list_seen:  # a new plan supersedes the old remaining work
        _keep(sections["Remaining Work"], previous_lines(body["Remaining Work"]), 45.0)
    _merge_critical(sections["Critical Context"], previous_lines(body["Critical Context"]))
    return moved


def _keep(target: list[Item], lines: list[str], base: float) -> None:
    """Previous lines go before the new items (older), deduplicated against them.

    A line the earlier summary cut short ("…and a deploy...") is the same line as the whole one
    the new turns produced, so a cut line that begins another is a duplicate too."""
    known = {item.text.lower() for item in target}
    count = max(len(lines), 1)
    for position, text in enumerate(lines):
        lowered = text.lower()
        stem = lowered.removesuffix("...").removesuffix("…").rstrip()
        if lowered in known or (stem != lowered and any(other.startswith(stem) for other in known)):
            continue
        known.add(lowered)
        target.append(Item(text, base * OLD + 5 * position / count, -count + position))


#: Critical Context's grouped lines (`Kind: a, b`) and how much an earlier value of each kind is
#: worth keeping: a commit hash or an issue number is what a later turn asks for; a version
#: number from a `pip list` rarely is.
_GROUP_WEIGHTS = {
    "Hashes": 30.0,
    "URLs": 30.0,
    "Issues/PRs": 30.0,
    "Error codes": 30.0,
    "Config values": 25.0,
    "Colours": 10.0,
    "Ports": 20.0,
    "Versions": 15.0,
}


def _merge_critical(target: list[Item], lines: list[str]) -> None:
    """Earlier `Kind: a, b` lines go back in value by value, into the new items' groups.

    Kept as whole lines they would sit beside the new line of the same kind (two `Hashes:`
    lines) and fall to the budget as one block: here a value already known is not repeated and
    under a tight budget the fitter drops single old values, not every hash at once."""
    plain = []
    # Known by the bare value: `4c1e9a7 (Merge branch)` and `4c1e9a7 (commit)` are one hash.
    known = {(item.group, _bare(item.text)) for item in target}
    for position, line in enumerate(lines):
        kind, _, values = line.partition(": ")
        weight = _GROUP_WEIGHTS.get(kind)
        if weight is None or not values:
            plain.append(line)
            continue
        parts = [value.strip() for value in values.split(", ") if value.strip()]
        for offset, value in enumerate(parts):
            if (kind, _bare(value)) in known:
                continue
            known.add((kind, _bare(value)))
            rank = offset / max(len(parts), 1)  # later values were found later
            target.append(
                Item(value, weight * OLD + 5 * rank, -len(lines) + position + rank, group=kind)
            )
    _keep(target, plain, 20.0)


def _bare(value: str) -> str:
    """An identifier without the label Critical Context gives it (`b0be39e (task-id)`)."""
    return value.split(" (", 1)[0]


def _merge_state(target: list[Item], lines: list[str]) -> None:
    """New values win per key; earlier keys the new turns did not show are kept."""
    current = {item.text.split(":", 1)[0] for item in target}
    for position, line in enumerate(lines):
        match = _KEY_VALUE.match(line)
        key = match.group(1) if match else line
        if key not in current:
            current.add(key)
            target.append(Item(line, 40.0 - position * 0.1, 100.0 + position))


def _merge_files(target: list[Item], lines: list[str]) -> None:
    """Paths seen before and again get their earlier verbs too; others are kept as they were."""
    by_path = {item.text.split(" — ", 1)[0]: item for item in target}
    count = max(len(lines), 1)
    for position, line in enumerate(lines):
        match = _FILE_LINE.match(line)
        path, verbs = (match.group(1), match.group(2)) if match else (line, "")
        item = by_path.get(path)
        if item is None:
            by_path[path] = Item(line, 14.0 + 5 * position / count, -count + position)
            target.append(by_path[path])
            continue
        have = item.text.split(" — ", 1)[1].split(", ") if " — " in item.text else []
        extra = [verb for verb in verbs.split(", ") if verb and verb not in have]
        if extra:
            item.text = f"{path} — {', '.join(extra + have)}"
