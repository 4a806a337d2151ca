"""Reading a transcript's structure: whose words a message holds, the paths a call names, whether
a call failed and its error lines. Nothing here knows what the summariser looks for."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from compaction.messages import INJECTED_KEY, Message, call_arguments
from compaction.messages import content_text as _content_text

ERROR_LINES_PER_CALL = 3

#: Argument names whose values are paths.
_PATH_ARGUMENT = re.compile(r"(?:^|_)(?:path|file|filename|filepath|notebook|dir|directory)s?$")
_COMMAND_ARGUMENT = ("command", "cmd", "script")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_MOVE_TO = re.compile(r"^\*\*\* Move to: (.+)$", re.M)
_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "then", "do", "xargs"})
_SED_EXPRESSION = re.compile(r"^(?:[sy]/[^/]*/[^/]*/[A-Za-z0-9]*|/[^/]*/[^/]*/)$")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
#: A Windows path: a drive, `.`, `..` or `~` and backslash-separated names, or two separators.
_WINDOWS_PATH = re.compile(
    r"^(?:(?:[A-Za-z]:|\.{1,2}|~)\\[\w.@~-]+(?:\\[\w.@~-]+)*|[\w.@~-]+(?:\\[\w.@~-]+){2,})$"
)
#: What wraps a path in prose and error messages: quotes, brackets, a trailing colon or stop.
_PATH_WRAPPING = "'\"`‘’“”()[]{}<>,;"
_WRAPPER_START = re.compile(
    r"^\s*(?:<(?:command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|system-reminder|task-notification|user-prompt-submit-hook|"
    r"environment_context|user_instructions|bash-input|bash-stdout|bash-stderr)>"
    r"|Stop hook feedback:|Caveat: The messages below|Base directory for this skill:"
    r"|# AGENTS\.md instructions|\[Request interrupted by user)",
)
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|$)", re.S)
_EXIT_STATUS = re.compile(
    r"(?:exit(?:ed)?(?: with)? (?:code|status)|Exit code:|\"exit_code\":)\s*(-?\d+)", re.I
)
_ERROR_WORD = re.compile(
    r"Error\b|Exception\b|error(?:\[\w+\])?:|fatal:|FAILED|FAIL:|panicked|Traceback|"
    r"\bfailed\b|No such file|not found|Permission denied",
)
#: A log line's prefix: anything short, then an ISO timestamp (GitHub Actions, docker logs).
_LOG_PREFIX = re.compile(r"^.{0,60}?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\s+")
_DECORATION = re.compile(r"^[\s=*#_~-]{3,}|[\s=*#_~-]{3,}$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def text(message: Message) -> str:
    return _content_text(message)


def is_summary(content: str) -> bool:
    return content.lstrip().startswith(("[CONTEXT COMPACTION", "This session is being continued"))


# -- whose words ------------------------------------------------------------------------------


def _mark(message: Message, index: int, marks: Mapping[int, str] | None) -> str | None:
    """A message's mark: from the conversation's marks when given, else its `injected` key."""
    if marks is not None:
        return marks.get(index)
    kind = message.get(INJECTED_KEY)
    return kind if isinstance(kind, str) and kind else None


def own_words(message: Message, mark: str | object | None = ...) -> str | None:
    """The user's own words in a user-role message, or None when it is not the user speaking
    (`mark`: the message's mark from the conversation's marks; left out, its `injected` key)."""
    kind = message.get(INJECTED_KEY) if mark is ... else mark
    if message.get("role") != "user" or kind:
        return None
    content = text(message)
    if is_summary(content) or _WRAPPER_START.match(content):
        return None
    own = _REMINDER.sub(" ", content).strip()
    return own or None


def latest_request(
    messages: Sequence[Message], marks: Mapping[int, str] | None = None
) -> tuple[int, str] | None:
    """(index, text) of the user's latest message of their own."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict):
            own = own_words(message, _mark(message, index, marks))
            if own is not None:
                return index, own
    return None


def sentences(content: str) -> list[str]:
    return [" ".join(s.split()) for s in _SENTENCE_END.split(content) if len(s.strip()) >= 12]


# -- arguments and paths ------------------------------------------------------------------------


def leaves(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(argument name, string value) of every string leaf of decoded arguments."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, key)
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, str(name))


def arguments(call: dict[str, Any]) -> Any:
    """A call's decoded arguments; raw text that is not JSON is `{"input": raw}`."""
    raw = call_arguments(call)
    try:
        return json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        return {"input": raw}


def _words(command: str) -> list[str]:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = ""
        lexer.escape = ""  # a backslash is a Windows path separator as often as an escape
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain words
        return command.split()


def path_like(word: str) -> bool:
    if len(word) < 3 or len(word) > 300 or word.startswith("-") or "://" in word:
        return False
    if any(char in word for char in "$`*?{}<>=\n\"'") or word.startswith("/dev/"):
        return False
    if not any(char.isalpha() for char in word):
        return False
    if "/" in word:
        # a sed expression (s/a/b/g, y/ab/cd/) or address (/a/b/) is not a path; /w/a/b is
        return not _SED_EXPRESSION.match(word)
    return _EXTENSION.search(word) is not None and not word[0].isdigit()


def path_words(line: str) -> list[str]:
    """The paths a line of prose or output names: path-like words once the quotes, brackets and
    trailing punctuation around them are gone; Windows folders (`C:\\a\\b`) count too."""
    found = []
    for raw in line.split():
        word = raw.strip(_PATH_WRAPPING).rstrip(".:,;").strip(_PATH_WRAPPING)
        if len(word) > 3:
            word = word.rstrip("/\\")
        if path_like(word) or (len(word) <= 300 and _WINDOWS_PATH.match(word)):
            found.append(word)
    return found


def command_paths(command: str) -> list[str]:
    """Path-like words of a shell command that are not the program it runs."""
    found: list[str] = []
    for line in command.splitlines()[:1] if "<<" in command else command.splitlines():
        expect_program = True
        for word in _words(line):
            if word in _SHELL_SEPARATORS:
                expect_program = True
                continue
            if expect_program:
                if "=" in word and not word.startswith("="):
                    continue  # an environment assignment before the program
                expect_program = word in ("sudo", "time", "env", "nohup", "exec")
                continue
            if word.startswith(">") or word.startswith("2>"):
                word = word.lstrip("2>&")
            if path_like(word):
                found.append(word.rstrip(",;:"))
    return found


def call_paths(call: dict[str, Any]) -> list[str]:
    decoded = arguments(call)
    paths: list[str] = []
    for key, value in leaves(decoded):
        lowered = key.lower()
        if _PATH_ARGUMENT.search(lowered) and value.strip() and "\n" not in value.strip():
            paths.append(value.strip())
        if "*** Begin Patch" in value:
            paths += [p.strip() for p in _PATCH_FILE.findall(value) + _MOVE_TO.findall(value)]
        elif lowered in _COMMAND_ARGUMENT:
            paths += command_paths(value)
    if isinstance(decoded, dict) and isinstance(decoded.get("command"), list):
        parts = [str(part) for part in decoded["command"]]
        script = parts[-1] if len(parts) >= 3 and parts[1] in ("-lc", "-c") else " ".join(parts)
        paths += command_paths(script)
    return list(dict.fromkeys(path for path in paths if path_like(path) or "/" in path))


# -- failures ---------------------------------------------------------------------------------


def failed(output: str) -> bool:
    """A call failed: a non-zero exit status, an error the harness marked, or a traceback."""
    head = output.lstrip()[:200]
    if head.startswith(("Error", "<tool_use_error>", "Traceback", "fatal:")):
        return True
    statuses = _EXIT_STATUS.findall(output[:400] + "\n" + output[-400:])
    return any(status.strip() not in ("0", "-0") for status in statuses)


def failure_lines(output: str) -> list[str]:
    lines = []
    for line in output.splitlines():
        stripped = " ".join(line.split())
        if len(stripped) >= 8 and _ERROR_WORD.search(stripped) and not _EXIT_STATUS.search(line):
            lines.append(stripped)
    return lines[-ERROR_LINES_PER_CALL:]


def error_key(line: str) -> str:
    """The part of an error line a summary would quote: without a log's prefix up to its
    timestamp (`test Run tests 2024-06-03T08:12:52.44Z ERROR …` → `ERROR …`) and without the
    rules of `=`, `-`, `*`, `#`, `_` or `~` around it (`=== 1 failed in 0.9s ===`)."""
    key = _LOG_PREFIX.sub("", line, count=1)
    key = _DECORATION.sub("", key)
    return key if key and key != line else ""


def readable(output: str) -> str:
    """A JSON-wrapped output (`{"output": "…"}`) as its string values, one per line."""
    stripped = output.lstrip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return output
        return "\n".join(content for _, content in leaves(value))
    return output
