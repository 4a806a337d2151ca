"""From the scan's findings to prioritised items for each of the 12 non-task sections.

Priorities encode what the next context window needs most: failures and file changes over
reads, recent over old, facts stated by the user or the assistant over identifiers that merely
appeared in a tool's output. Exact strings (commands, paths, error lines) are kept verbatim,
because an agent resuming the work will search for, re-run or fix exactly those.
"""

from __future__ import annotations

import re

from compaction.summarizers.extractive.findings import Action, Findings, command_key
from compaction.summarizers.extractive.items import Item, Sections, empty_sections, recency
from compaction.summarizers.extractive.shell_files import changes
from compaction.summarizers.extractive.state import is_test_command
from compaction.summarizers.extractive.text import constraints, first_sentences
from compaction.summary.items import limited
from compaction.text.patterns import cut

_VERB_PRIORITY = {
    "deleted": 46.0,
    "created": 45.0,
    "written": 45.0,
    "edited": 45.0,
    "read": 25.0,
    "staged": 40.0,
    "ran": 22.0,
    "tested": 22.0,
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


#: The source index of the opening request when it lies before the summarised turns (the head):
#: the summariser turns it into the request's own index in the conversation.
OPENING = -1


def build_sections(
    findings: Findings,
    total: int,
    first_number: int,
    goal: str | None,
    goal_words: str | None = None,
) -> Sections:
    """Items for every section but Active Task; actions numbered from `first_number`.

    `goal` is the opening request as quoted (the harness's envelope removed) and `goal_words`
    what of it the user typed, which alone may give rules. Without them the first request of
    the turns is the goal."""
    sections = empty_sections()
    goal_source = OPENING
    if not goal and findings.first_user is not None:
        goal, goal_source = findings.first_user, findings.first_user_index or 0
    if goal:
        sections["Goal"].append(Item(first_sentences(goal), 100.0, 0.0, sources=(goal_source,)))
    _constraints(sections, findings, total, goal_words if goal_source == OPENING else None)
    _actions(sections, findings, total, first_number)
    for position, (key, line) in enumerate(findings.state.items()):
        sections["Active State"].append(
            Item(
                f"{key}: {line.value}",
                80.0 - position,
                position,
                sources=line.sources,
                origin=line.origin,
            )
        )
    for position, (index, text) in enumerate(findings.in_progress[-3:]):
        sections["In Progress"].append(
            Item(cut(text, 300), 70.0 + position, position, sources=(index,))
        )
    for index, text, more in findings.blocked:
        sections["Blocked"].append(
            Item(text, 60.0 + 10 * recency(index, total), index, sources=(index, *more))
        )
    _unique(sections["Key Decisions"], findings.decisions, 35.0, total)
    for index, question, answer, answered_at in findings.resolved:
        text = f"{question} — {answer}"
        sections["Resolved Questions"].append(
            Item(text, 30.0 + 10 * recency(index, total), index, sources=(index, answered_at))
        )
    _unique(sections["Pending User Asks"], findings.pending, 55.0, total)
    _files(sections, findings, total)
    seen: set[str] = set()
    for position, (index, text) in enumerate(findings.remaining):
        if text not in seen:
            seen.add(text)
            sections["Remaining Work"].append(
                Item(text, 50.0 - position * 0.01, position, sources=(index,))
            )
    _critical(sections, findings, total)
    return sections


def _unique(target: list[Item], entries: list[tuple[int, str]], base: float, total: int) -> None:
    seen: dict[str, Item] = {}
    for index, text in entries:
        key = text.lower()
        known = seen.get(key)
        if known is None:
            seen[key] = Item(text, base + 10 * recency(index, total), index, sources=(index,))
            target.append(seen[key])
        elif index not in known.sources:
            known.sources = (*known.sources, index)  # said again: every place it was said


def _constraints(sections: Sections, findings: Findings, total: int, opening: str | None) -> None:
    # The opening request usually sets the ground rules; it may sit in the head, not the turns.
    rules = [(OPENING, s) for s in constraints(opening)] if opening else []
    _unique(sections["Constraints & Preferences"], rules + findings.constraints, 50.0, total)


def _actions(sections: Sections, findings: Findings, total: int, first_number: int) -> None:
    actions = findings.actions
    items: list[Item] = []
    for number, action in enumerate(actions, first_number):
        text = action.line
        if action.failed and action.errors:
            extra = [line for line in action.errors if line not in text][:3]
            if extra:
                text += " | " + " | ".join(extra)
        if action.fixed_by is not None:
            text += f" (fixed by action {first_number + action.fixed_by})"
        if action.fixes is not None:
            failure = actions[action.fixes]
            why = f": `{failure.errors[0]}`" if failure.errors else ""
            text += f" — fixed the failure of action {first_number + action.fixes}{why}"
        base = 30.0 if action.failed else _KIND_PRIORITY.get(action.kind or "", 15.0)
        if action.fixes is not None:
            base = 32.0  # what was broken and now works: the next window must not redo it
        priority = base + 10 * recency(action.index, total)
        sources = action.sources
        if action.fixes is not None:  # the line quotes the failure it fixed
            sources = (*sources, *actions[action.fixes].sources)
        items.append(Item(text, priority, float(number), number=number, sources=sources))
    sections["Completed Actions"].extend(_grouped(actions, items, first_number))


#: Alike actions are grouped from this many on: "ran `pytest` 7×", "read 6 files".
GROUP_MIN = 3
GROUP_EVIDENCE = 8
GROUP_VARIANTS = 6
_GROUPABLE_KINDS = ("read_file", "search_files", "patch", "write_file")
_GROUP_VERBS = {
    "read_file": "read",
    "search_files": "searched",
    "patch": "edited",
    "write_file": "wrote",
}


def _grouped(actions: list[Action], items: list[Item], first_number: int) -> list[Item]:
    """Alike actions as one line each, so the list reads as what happened instead of a
    numbered list with gaps where the budget dropped lines: every run of the same test command
    ("ran `mix test` 7× …, last: …"), and a stretch of three or more reads, searches or edits by
    one tool in a row ("read 6 files: …"). A group keeps the number of its last action and
    names the others, so the numbering still continues from one summary to the next."""
    runs: dict[str, list[int]] = {}
    for position, action in enumerate(actions):
        if action.command and not action.pending and is_test_command(action.command):
            runs.setdefault(command_key(action.command), []).append(position)
    replaced: dict[int, Item | None] = {}
    for key, positions in runs.items():
        if len(positions) < GROUP_MIN:
            continue
        last = positions[-1]
        failed = sum(1 for p in positions if actions[p].failed)
        fixed = sum(1 for p in positions if actions[p].failed and actions[p].fixed_by is not None)
        numbers = ", ".join(str(first_number + p) for p in positions[:-1])
        outcome = items[last].text.split(" -> ", 1)[1] if " -> " in items[last].text else "done"
        tally = f"; {failed} failed ({fixed} of them fixed)" if failed else ""
        # Each distinct failure's telling line stays: what broke is what the next window needs.
        evidence = list(dict.fromkeys(line for p in positions for line in actions[p].errors[:2]))[
            :GROUP_EVIDENCE
        ]
        if evidence:
            tally += ": " + "; ".join(f"`{line}`" for line in evidence)
        # The distinct command lines, as run: a later window may re-run exactly one of them.
        variants = list(dict.fromkeys(_first_line(actions[p].command) for p in positions))
        shown = ", ".join(f"`{variant}`" for variant in variants[:GROUP_VARIANTS])
        text = (
            f"ran `{key}` {len(positions)}× as {shown} (also actions {numbers}){tally}; "
            f"last -> {outcome}"
        )
        priority = max(items[p].priority for p in positions) + 1.0
        for p in positions[:-1]:
            replaced[p] = None
        sources = limited(source for p in positions for source in items[p].sources)
        replaced[last] = Item(
            text, priority, items[last].order, number=items[last].number, sources=sources
        )
    stretch: list[int] = []

    def close() -> None:
        if len(stretch) >= GROUP_MIN:
            first, last = stretch[0], stretch[-1]
            kind = actions[last].kind or ""
            tool = (
                items[last].text.split("]", 1)[0] + "]" if items[last].text.startswith("[") else ""
            )
            paths = list(dict.fromkeys(actions[p].subject or "?" for p in stretch))
            text = (
                f"{tool} {_GROUP_VERBS.get(kind, 'used')} {len(paths)} file"
                f"{'s' if len(paths) != 1 else ''} in {len(stretch)} calls "
                f"(actions {first_number + first}–{first_number + last}): {', '.join(paths)}"
            )
            priority = max(items[p].priority for p in stretch)
            for p in stretch[:-1]:
                replaced[p] = None
            replaced[last] = Item(
                text.strip(),
                priority,
                items[last].order,
                number=items[last].number,
                sources=limited(source for p in stretch for source in items[p].sources),
            )
        stretch.clear()

    for position, action in enumerate(actions):
        alike = (
            position not in replaced
            and action.kind in _GROUPABLE_KINDS
            and not (action.failed or action.pending or action.fixes is not None)
            and action.subject is not None
        )
        if stretch and not (alike and _tool(items[position]) == _tool(items[stretch[-1]])):
            close()
        if alike:
            stretch.append(position)
    close()
    grouped = []
    for position, item in enumerate(items):
        if position in replaced:
            kept = replaced[position]
            if kept is not None:
                grouped.append(kept)
        else:
            grouped.append(item)
    return grouped


def _first_line(command: str | None) -> str:
    return cut((command or "").split("\n", 1)[0], 80)


def _tool(item: Item) -> str:
    return item.text.split("]", 1)[0]


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
    seen_in: dict[str, list[int]] = {}
    defines: dict[str, dict[str, int]] = {}
    for record in records:
        target = record.path
        if not record.path.startswith(("/", "~")) and record.path in by_suffix:
            # `lib/a.ex` staged by `git add` is the `/repo/lib/a.ex` the agent edited.
            target = by_suffix[record.path]
        verbs = merged.setdefault(target, [])
        verbs.extend(verb for verb in record.verbs if verb not in verbs)
        last[target] = max(last.get(target, 0), record.last_index)
        seen_in.setdefault(target, []).extend(record.indexes)
        for definition, index in record.defines.items():
            defines.setdefault(target, {}).setdefault(definition, index)
    for order, (path, verbs) in enumerate(merged.items()):
        best = max(_verb_priority(verb) for verb in verbs)
        priority = best + 10 * recency(last[path], total)
        text = f"{path} — {', '.join(verbs)}"
        defined = defines.get(path, {})
        if defined:
            # What the file is for and what it defines: the next window asks "what does
            # mint/2 take?" and cannot read the file's text back from a line count.
            docs = [d for d in defined if d.startswith('"')]
            names = [d for d in defined if not d.startswith('"')]
            text += "".join(f": {doc}" for doc in docs[:1])
            text += f"; defines {', '.join(names)}" if names else ""
            priority += 2.0
        sources = limited([*seen_in[path], *defined.values()])
        sections["Relevant Files"].append(Item(text, priority, order, sources=sources))


_CSS_WORDS = frozenset(
    "color colour background background-color border border-color fill stroke solid".split()
)


def _not_an_identifier(kind: str, value: str) -> bool:
    """A URL cut at a template (`http://127.0.0.1:$PORT`) leads nowhere."""
    return kind == "URLs" and ("$" in value or value.rstrip("/").endswith(":"))


def _verb_priority(verb: str) -> float:
    """`edited (sed -i)`, `moved to b.py`, `staged (git add)` rank as the change they are."""
    exact = _VERB_PRIORITY.get(verb)
    if exact is not None:
        return exact
    first = verb.split(" ", 1)[0]
    return _VERB_PRIORITY.get(first, 44.0 if changes(verb) else 20.0)


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
                # The error line is the result's: cite the result, where the code is.
                where = action.result_index if action.result_index is not None else action.index
                latest[code] = (where, "Error codes", True)
    target = sections["Critical Context"]
    labels = findings.identifier_labels
    for order, (value, (index, kind, prose)) in enumerate(latest.items()):
        if _not_an_identifier(kind, value):
            continue
        if kind == "Issues/PRs" and labels.get(value, "").lower() in _CSS_WORDS:
            kind, prose = "Colours", False  # `color: #888` is a colour, not issue 888
        base = 30.0 if prose else 15.0
        # "b0be39e (task-id)", "3.4.1 (ash)": a bare list of hashes says nothing.
        text = f"{value} ({labels[value]})" if labels.get(value) else value
        target.append(
            Item(text, base + 10 * recency(index, total), order, group=kind, sources=(index,))
        )
