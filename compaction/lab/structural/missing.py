"""Paths a call showed do not exist, and whether a context still says so.

Mined from a call's result: a line that says a thing is missing (`No such file or directory`,
`ENOENT`, `does not exist`, `cannot find`, `not found`, `cannot access`, `can't cd to`,
`did not match any file`) names the missing path. Only results that can be about the call's own
paths count: a failed call (transcript.failed), or a short result (at most SHORT_RESULT_LINES
lines), so a file's contents that happen to say "not found" are not read as a failure. A line's
first word is the program speaking (`cat:`, `bash:`, `/bin/sh:`) when another path follows it;
a line longer than MAX_LINE_CHARS is data, not a message.
A result that names no path (`File does not exist.`) is about the call's one path, if it has
exactly one.

Kept when a line of the context names the path and says it is missing (any of the words above,
or `missing`, `absent`, `nonexistent`, `not exist`), or when the context still holds the failed
call together with the result that said so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from compaction.lab.structural.facts import normalise
from compaction.lab.structural.transcript import (
    arguments,
    call_paths,
    failed,
    leaves,
    path_words,
    readable,
    text,
)
from compaction.messages import Message, tool_calls

SHORT_RESULT_LINES = 5
#: A longer line is data (a page of HTML, a minified file), not a message about a path.
MAX_LINE_CHARS = 300
_MISSING = re.compile(
    r"no such file|\benoent\b|\b(?:does|did) ?n[o']t exist|cannot find|can'?t find|"
    r"could ?n[o']t find|\bnot found\b|cannot access|can'?t access|can'?t cd|"
    r"did not match any file",
    re.I,
)
_SAID_MISSING = re.compile(
    _MISSING.pattern + r"|\bmissing\b|\babsent\b|\bnon-?existent\b|\bnot exist", re.I
)
_PROGRAM_NOT_FOUND = re.compile(r"command not found|is not recognized as", re.I)


def _lines(output: str) -> list[str]:
    return [line for line in readable(output).splitlines() if line.strip()]


def missing_paths(call: dict[str, Any], output: str) -> list[str]:
    """The paths `output`, the result of `call`, says do not exist."""
    lines = _lines(output)
    if not lines or not (failed(output) or len(lines) <= SHORT_RESULT_LINES):
        return []
    saying = [line for line in lines if len(line) <= MAX_LINE_CHARS and _MISSING.search(line)]
    found: list[str] = []
    for line in saying:
        words = path_words(line)
        first = line.split()[0]
        if len(words) > 1 and first.endswith(":") and path_words(first) == words[:1]:
            words = words[1:]  # `cat: src/x.py: No such file` — the first is the program
        found += words
    if not found and saying and len(lines) <= 2 and not _PROGRAM_NOT_FOUND.search(lines[0]):
        paths = call_paths(call)
        if len(paths) == 1:
            found = paths
    return list(dict.fromkeys(found))


def missing_statements(compacted: Sequence[Message]) -> list[str]:
    """Normalised lines of `compacted` that say something is missing, and each failed call
    kept with its result, as one line (the call's arguments, then the result's first saying)."""
    calls: dict[str, dict[str, Any]] = {}
    for message in compacted:
        if isinstance(message, dict):
            for call in tool_calls(message):
                if isinstance(call, dict):
                    calls[str(call.get("id"))] = call
    statements: list[str] = []
    for message in compacted:
        if not isinstance(message, dict):
            continue
        lines = readable(text(message)).splitlines()
        for made in tool_calls(message):
            if isinstance(made, dict):
                written = [value for _, value in leaves(arguments(made))]
                lines += [line for value in written for line in value.splitlines()]
        saying = [line for line in lines if _SAID_MISSING.search(line)]
        statements += [normalise(line) for line in saying]
        answered = calls.get(str(message.get("tool_call_id")))
        if message.get("role") == "tool" and answered is not None and saying:
            named = " ".join(value for _, value in leaves(arguments(answered)))
            statements.append(normalise(f"{named} {saying[0]}"))
    return statements
