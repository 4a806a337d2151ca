"""Cursor's "Export chat" Markdown (Cursor 2.6).

The file is `# <title>`, `_Exported on <date> from Cursor (<version>)_`, then the turns, each
opened by a line that is only `**User**` or `**Cursor**` after a `---` rule, and each turn's
Markdown (prose, code blocks) as Cursor showed it. The export keeps no tool calls: what the
agent read, ran and edited appears only as the assistant's own prose ("Let me check …") and
its code blocks, so there is nothing to pair, and the import report says so. A `---` inside a
turn is the turn's own rule, and a header line inside a fenced code block is code: neither
starts a turn.
"""

from __future__ import annotations

import re
from typing import Any

from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "cursor"
EXPORTED = re.compile(r"^_Exported on (?P<date>.+?) from Cursor \((?P<version>[^)]+)\)_\s*$")
SPEAKERS = {"**User**": "user", "**Cursor**": "assistant"}
RULE = "---"
FENCE = re.compile(r"^\s*(```|~~~)")


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "text":
        return False, "not plain text"
    lines = doc.text.splitlines()
    if any(EXPORTED.match(line) for line in lines[:10]):
        return True, "Markdown with Cursor's `_Exported on … from Cursor (…)_` line"
    turns = len(_turn_starts(lines))
    if turns >= 2 and any(lines[i].strip() == "**Cursor**" for i in _turn_starts(lines)):
        return True, f"Markdown with {turns} `**User**` / `**Cursor**` turns after `---` rules"
    return False, "no `_Exported on … from Cursor` line and no `**User**`/`**Cursor**` turns"


def _turn_starts(lines: list[str]) -> list[int]:
    """The indexes of the lines that open a turn: a speaker line after a `---` rule (blank lines
    between allowed), outside fenced code."""
    starts: list[int] = []
    fenced = False
    rule_seen = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if FENCE.match(line):
            fenced = not fenced
            rule_seen = False
            continue
        if fenced:
            continue
        if stripped in SPEAKERS and rule_seen:
            starts.append(index)
        if stripped == RULE:
            rule_seen = True
        elif stripped:
            rule_seen = False
    return starts


def load(doc: Document) -> list[Conversation]:
    lines = doc.text.splitlines()
    starts = _turn_starts(lines)
    metadata: dict[str, Any] = {}
    title = None
    for line in lines[: starts[0] if starts else 10]:
        match = EXPORTED.match(line)
        if match:
            metadata.update(exported=match.group("date"), version=match.group("version"))
        elif line.startswith("# ") and title is None:
            title = line[2:].strip()
    messages: list[Message] = []
    report = ImportReport(records=len(starts))
    empty: list[int] = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        body = lines[start + 1 : end]
        if position + 1 < len(starts):
            body = _without_closing_rule(body)
        text = "\n".join(body).strip("\n")
        if not text.strip():
            empty.append(start + 1)
            report.skip("empty turn", "a turn with no text", start + 1)
            continue
        messages.append({"role": SPEAKERS[lines[start].strip()], "content": text})
        report.imported += 1
    warnings = [
        "Cursor's export keeps no tool calls: what the agent read, ran and edited is only in "
        "its prose and code blocks, so the import has no tool calls or results"
    ]
    if empty:
        warnings.append(f"line(s) {', '.join(map(str, empty))}: empty turn(s) left out")
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=title,
            metadata=metadata,
            warnings=warnings,
            report=report,
        )
    ]


def _without_closing_rule(body: list[str]) -> list[str]:
    """A turn's lines without the `---` rule (and blank lines) that separate it from the next."""
    end = len(body)
    while end and not body[end - 1].strip():
        end -= 1
    if end and body[end - 1].strip() == RULE:
        end -= 1
    return body[:end]
