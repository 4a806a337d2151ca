"""Phase 1's one-line summaries of tool outputs.

Agents name the same tools differently (Claude Code's `Bash`, Codex's `exec_command`, SWE-agent's
`str_replace_editor`...) and shape their arguments differently: the table of aliases and the
reading of each call (its family, its commands, its patch) are in compaction/tool_calls, and
re-exported here. Summarising never raises: an odd argument shape falls back to the generic
template, because a summary line that could crash would take the whole compaction down with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from compaction.summary import STATIC_MARKER_START
from compaction.text.tool_calls import FILE_SEARCHES, PatchChange, argument, read_call
from compaction.text.tool_calls import TOOL_ALIASES as TOOL_ALIASES
from compaction.text.tool_calls import tool_kind as tool_kind
from compaction.text.tool_output import may_be_wrapped, parse_tool_output

DUPLICATE_MARKER = "[Duplicate tool output — same content as a more recent call]"
STUB_RESULT = "[Result from earlier conversation — see context summary above]"

_SUMMARY_LINE = re.compile(r"^\[[^\]\n]{1,80}\] [^\n]*$")
_EXIT_JSON = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
# `exit code 2`, `Exit code: 1` (Codex Desktop), `Process exited with code 1` (Codex CLI).
_EXIT_TEXT = re.compile(r"(?im)\bexit(?:ed with)? (?:code|status)\b[:=]?\s*(-?\d+)")
_FAILURE_WORD = re.compile(r"(?i)error|exception|traceback|failed|fatal")
# An optional "E   " is pytest's prefix for the lines explaining a failure.
_EXCEPTION_LINE = re.compile(
    r"(?m)^[ \t]*(?:E[ \t]{2,})?"
    r"((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b:?.*)$"
)
# Every _EXCEPTION_LINE names one of these words: the pattern is tried only on the lines that
# hold one (_last_exception_line), never at every line start of a long log.
_EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Failure")
_TOTAL_COUNT = re.compile(r'"total_count"\s*:\s*(\d+)')
#: A patch line names at most this many files, each cut to this many chars; the rest are
#: counted, so the line stays one short line (is_already_pruned knows it again).
PATCH_FILES_SHOWN = 3
PATCH_PATH_MAX_CHARS = 120


def is_already_pruned(content: str) -> bool:
    """True for a summary line, duplicate marker or stub: Phase 1 leaves these alone."""
    if not content.startswith("["):
        return False  # every one of them opens with "[": nearly every output stops here
    if content in (DUPLICATE_MARKER, STUB_RESULT) or content.startswith(STATIC_MARKER_START):
        return True
    return len(content) < 600 and _SUMMARY_LINE.match(content) is not None


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + "..."


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return str(value)


def exit_code(output: str) -> int | None:
    """The exit code an output reports (`"exit_code": N`, `exit code N`, `exit status N`,
    `exited with code N`, `exited with status N`)."""
    # Every match of _EXIT_JSON holds its key: a literal scan (at memory speed) rules most
    # outputs out before the pattern steps through them.
    match = (_EXIT_JSON.search(output) if '"exit_code"' in output else None) or (
        _EXIT_TEXT.search(output) if _may_say_exit(output) else None
    )
    return int(match.group(1)) if match else None


#: Every match of _EXIT_TEXT opens with one of these (lower-cased).
_EXIT_PHRASES = ("exit code", "exit status", "exited with code", "exited with status")


#: The only characters outside ASCII that the case-insensitive pattern matches to one of its
#: letters: dotted and dotless I (as "i") and the long s (as "s").
_FOLDED_TO_ASCII = ("\u0130", "\u0131", "\u017f")


def _may_say_exit(output: str) -> bool:
    """False only where _EXIT_TEXT cannot match: an output whose lower-cased text holds none
    of _EXIT_PHRASES. The pattern, case-insensitive and opening on a word boundary, is tried at
    every position (some 15-40 ns a character); most outputs never say it.

    A match is made of letters of those phrases and spaces, which lower() maps one to one to
    the phrase itself; outside ASCII, case folding also matches İ, ı and ſ to "i" and "s"
    (and nothing else to the phrases' letters), so an output holding one of those is left to
    the pattern."""
    if not output.isascii() and any(char in output for char in _FOLDED_TO_ASCII):
        return True
    lowered = output.lower()
    # Each phrase opens with "exit": one scan rules out nearly every output.
    return "exit" in lowered and any(phrase in lowered for phrase in _EXIT_PHRASES)


def line_count(text: str) -> int:
    return text.count("\n") + 1


def _non_blank_lines(text: str) -> int:
    """How many of the text's lines hold more than whitespace (a search's matches, one a line):
    stripped and tested in C, where a generator did both per line in the interpreter."""
    return sum(map(bool, map(str.strip, text.splitlines())))


def error_evidence(output: str, code: int | None = None) -> str | None:
    """The most informative error line of a failed output, cut to 160 chars, or None.

    An exception line (`ValueError: ...`, the last one: the final line of a traceback is the actual
    exception) beats any other line that mentions an error or a failure.

    An output whose command did not report a failure (exit 0, or no exit code) names an error
    only in a line that reports one — `sqlite3.IntegrityError: UNIQUE …` in a journal,
    `error: …`, `fatal: …`, FAILED, a traceback — never in a line that merely holds the word:
    a file's source (`code: ERROR_CODES.NOT_FOUND,`, `error.message`) printed by `sed` would
    otherwise read as the command's failure.
    """
    if code is None or code == 0:
        reported = _reported_error(output)
        if reported is not None or code == 0:
            return _cut(reported.strip(), 160) if reported is not None else None
        if not output[:200].lstrip().lower().startswith(_FAILURE_OPENINGS):
            return None
    exception = _last_exception_line(output)
    if exception is not None:
        return _cut(exception.strip(), 160)
    last_failure = _last_failure_line(output)
    if last_failure is not None:
        return _cut(last_failure.strip(), 160)
    lines = [line for line in output.splitlines() if line.strip()]
    return _cut(lines[-1].strip(), 160) if lines else None


def _last_exception_line(output: str) -> str | None:
    """The last exception line (_EXCEPTION_LINE's group) that holds a ":", or None: the last
    of `_EXCEPTION_LINE.findall(output)` holding one."""
    match = _last_line_matching(
        output, _EXCEPTION_LINE, _EXCEPTION_WORDS, lambda found: ":" in found.group(1)
    )
    return match.group(1) if match is not None else None


def _last_line_matching(
    output: str,
    pattern: re.Pattern[str],
    words: tuple[str, ...],
    accept: Callable[[re.Match[str]], bool] = lambda found: True,
    end: int | None = None,
) -> re.Match[str] | None:
    """The last match of `pattern` at a line start of `output[:end]` that `accept`s, where
    every match of the pattern lies within one line and holds one of `words`.

    The lines holding a word are found by literal scans from the end (at memory speed) and only
    those are matched, rather than trying the pattern at every line start of a long log: the
    last match findall would list. Each word's scan only moves backwards (a word is looked for
    again only once its last find is passed), so the whole search is linear.
    """
    limit = len(output) if end is None else end
    found = [output.rfind(word, 0, limit) for word in words]  # each word's last place
    while True:
        position = max(found)
        if position < 0:
            return None
        start = output.rfind("\n", 0, position) + 1
        match = pattern.match(output, start)
        if match is not None and accept(match):
            return match
        for number, at in enumerate(found):
            if at >= start:  # on this line: look again before it (a word holds no newline)
                found[number] = output.rfind(words[number], 0, start)


# A line that reports an error as an event: an exception or `error:`/`fatal:` with its message,
# FAILED, a traceback's header. Source code that merely names one has no message after it.
_REPORTED = re.compile(
    r"(?m)^.*(?:(?:\b[A-Z]\w*(?:Error|Exception)|\berror|\bfatal)(?:\[\w+\])?: \S|\bFAILED\b|"
    r"^Traceback \(most recent call last\)).*$"
)
_REPORTED_WORDS = ("Error: ", "Exception: ", "error: ", "fatal: ", "]: ", "FAILED", "Traceback")


_NAMED_WORDS = ("Error: ", "Exception: ")
#: The words of _REPORTED_WORDS without ": ", the only ones an output without it can hold.
_WORDS_WITHOUT_COLON = tuple(word for word in _REPORTED_WORDS if ": " not in word)


def _reported_error(output: str) -> str | None:
    """The last line that reports an error (one naming an exception first: "Error: " or
    "Exception: "), or None. Every such line holds one of _REPORTED_WORDS: only those lines
    are matched (_last_line_matching), from the end."""
    # One scan for ": " spares most outputs the scans for the five words that hold it.
    words = _REPORTED_WORDS if ": " in output else _WORDS_WITHOUT_COLON
    last = _last_line_matching(output, _REPORTED, words)
    if last is None:
        return None
    line = last.group(0)
    if any(word in line for word in _NAMED_WORDS):
        return line
    # A later line reported an error without naming one: the last line that names one wins.
    named = _last_line_matching(output, _REPORTED, _NAMED_WORDS, end=last.start())
    return named.group(0) if named is not None else line


_FAILURE_WORDS = ("error", "exception", "traceback", "failed", "fatal")
_FAILURE_OPENINGS = ("<tool_use_error>", "error", "fatal", "traceback", "exception", "failed")


#: Outside ASCII, the only characters that _FAILURE_WORD matches to a letter of its words
#: (İ and ı as "i", the Kelvin sign as "k"), and the only ones lower() lengthens (İ) or turns
#: into ASCII (İ, the Kelvin sign): in an output holding none of them, lower() keeps every
#: position and makes no word the pattern would not match.
_FAILURE_FOLDS = ("\u0130", "\u0131", "\u212a")


def _last_failure_line(output: str) -> str | None:
    """The last line mentioning an error or failure: found by a literal scan (fast), then the
    surrounding line cut out, rather than matching `^.*word.*$` at every line start."""
    if output.isascii() or not any(char in output for char in _FAILURE_FOLDS):
        # No word overlaps another (none ends with a letter another begins with), so the last
        # match of _FAILURE_WORD is the rightmost occurrence of any word; `lower()` keeps every
        # position here (_FAILURE_FOLDS), and `rfind` runs at memory speed where the
        # case-insensitive regular expression stepped through every character.
        lowered = output.lower()
        starts = [(lowered.rfind(word), word) for word in _FAILURE_WORDS]
        position, word = max(starts)
        if position < 0:
            return None
        first, after = position, position + len(word)
    else:  # case folding changes lengths or letters here: the regular expression decides
        last = None
        for last in _FAILURE_WORD.finditer(output):  # noqa: B007 - only the last match counts
            pass
        if last is None:
            return None
        first, after = last.start(), last.end()
    start = output.rfind("\n", 0, first) + 1
    end = output.find("\n", after)
    return output[start : end if end >= 0 else len(output)]


def _with_evidence(line: str, output: str, code: int | None) -> str:
    evidence = error_evidence(output, code)
    return f"{line} — {evidence}" if evidence else line


def _generic(tool_name: str, arguments: dict[str, Any], size: int) -> str:
    pairs = []
    for key, value in list(arguments.items())[:2]:
        shown = value if isinstance(value, str) else _as_text(value)
        pairs.append(f"{key}={_cut(shown, 40)}")
    middle = " ".join(pairs)
    return (
        f"[{tool_name}] {middle} ({size:,} chars result)"
        if middle
        else (f"[{tool_name}] ({size:,} chars result)")
    )


def summarize_tool_output(tool_name: str, arguments: dict[str, Any], output: str) -> str:
    """One line naming the tool, its key argument and the size of what was dropped."""
    try:
        return _summarize(tool_name or "unknown", arguments, output)
    except Exception:  # never raise: a strange argument shape gets the generic template
        return _with_evidence(_generic(tool_name or "unknown", {}, len(output)), output, None)


def unwrap_output(output: str) -> tuple[str, int | None, str | None]:
    """(text, exit code, error) of an output; agents such as hermes and Codex wrap terminal
    results in JSON (`{"output": ..., "exit_code": N, "error": null}`), whose lines and errors
    are inside. The text is `output` itself (the same object) when it is not wrapped."""
    if not may_be_wrapped(output):
        return output, None, None
    parsed = parse_tool_output(output)
    if not parsed.wrapped:
        return output, None, None
    return parsed.text, parsed.exit_code, parsed.error


def _summarize(tool_name: str, arguments: dict[str, Any], output: str) -> str:
    reading = read_call(tool_name, arguments)
    kind, arguments = reading.kind, reading.arguments
    # A code-mode cell that calls several tools: the line names one and counts the others.
    more = f" (+{reading.more:,} more)" if reading.more else ""
    size = len(output)
    text, wrapped_code, _ = unwrap_output(output)
    if text is not output:
        # Judge the wrapped text (the decoder appends a reported error or stderr to it: that is
        # evidence in its own right).
        output = text
    if kind == "terminal":
        command = reading.commands[0] if reading.commands else ""
        code = wrapped_code if wrapped_code is not None else exit_code(output)
        shown = "?" if code is None else str(code)
        line = (
            f"[{tool_name}] ran `{_cut(command, 80)}`{more} -> exit {shown}, "
            f"{line_count(output):,} lines output"
        )
        return _with_evidence(line, output, code)
    if kind == "read_file":
        path = argument(arguments, "path", "file_path", "filename", "absolute_path", default="?")
        offset = argument(arguments, "offset", "start_line", "line", default=1)
        line = f"[{tool_name}] read {_as_text(path)} from line {offset}{more} ({size:,} chars)"
        return line
    if kind == "write_file":
        path = argument(arguments, "path", "file_path", "filename", "target_file", default="?")
        content = argument(arguments, "content", "code_content", default="")
        lines = line_count(content) if isinstance(content, str) else 0
        return _with_evidence(
            f"[{tool_name}] wrote to {_as_text(path)} ({lines:,} lines){more}",
            output,
            exit_code(output),
        )
    if kind == "search_files":
        pattern = argument(arguments, "pattern", "query", "regex", "glob", default="")
        path = argument(
            arguments, "path", "dir", "directory", "search_path", "search_directory", default="."
        )
        default_target = "files" if tool_name in FILE_SEARCHES else "content"
        target = argument(arguments, "target", default=default_target)
        total = _TOTAL_COUNT.search(output) if '"total_count"' in output else None
        matches = int(total.group(1)) if total else _non_blank_lines(output)
        return (
            f"[{tool_name}] {target} search for '{_cut(_as_text(pattern), 80)}' in "
            f"{_as_text(path)}{more} -> {matches:,} matches"
        )
    if kind == "patch":
        path = argument(arguments, "path", "file_path", "filename", "target_file", default=None)
        if path is None and reading.patch:
            return _with_evidence(
                _patch_line(tool_name, reading.patch, reading.more, size), output, exit_code(output)
            )
        mode = argument(arguments, "mode", default="replace")
        line = f"[{tool_name}] {mode} in {_as_text(path or '?')}{more} ({size:,} chars result)"
        return _with_evidence(line, output, exit_code(output))
    if kind == "browser_navigate":
        url = argument(arguments, "url", "uri", default="?")
        return f"[{tool_name}] {_as_text(url)}{more} ({size:,} chars)"
    if kind == "delegate_task":
        goal = _as_text(argument(arguments, "goal", "description", "prompt", "task", default=""))
        goal = " ".join(goal.split())
        shown = goal if len(goal) <= 30 else goal[:30].rstrip() + "..."
        return f"[{tool_name}] '{shown}'{more} ({size:,} chars result)"
    return _with_evidence(_generic(tool_name, arguments, size), output, exit_code(output))


def _patch_line(tool_name: str, changes: tuple[PatchChange, ...], more: int, size: int) -> str:
    """`[apply_patch] update src/a.py, add src/b.py (N chars result)`: what the patch changed."""
    listed = changes[:PATCH_FILES_SHOWN]
    shown = ", ".join(_cut(change.text(), PATCH_PATH_MAX_CHARS) for change in listed)
    hidden = len(changes) - len(listed) + more
    count = f" (+{hidden:,} more)" if hidden > 0 else ""
    return f"[{tool_name}] {shown}{count} ({size:,} chars result)"
