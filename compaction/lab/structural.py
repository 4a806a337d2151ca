"""Structural recall: a second fact set, defined only by the shape of the transcript.

The probes (probes.py) mine facts with the same text patterns the extractive summariser uses
(compaction/text_patterns.py), so their recall is an upper bound by construction: whatever the
patterns find, the summary was built to keep. This measure is independent on purpose. It imports
neither the summarisers nor text_patterns; every fact is defined by where it sits in the
transcript, not by what a pattern of ours recognises in prose:

- `paths`: every path in a tool call's arguments — the value of an argument whose name says it
  is a path or file, the file names of an `apply_patch` body, and every path-like word of a
  command line that is not the program itself (`sed -i s/a/b/ src/a.py` → `src/a.py`);
- `errors`: the error lines of every failed call — a result whose exit status is non-zero, or
  that the agent's harness marked as an error, or that opens with a traceback — the last few
  lines of it that name an error, an exception, a failure or a panic;
- `urls`: every http(s) URL anywhere in the conversation;
- `constraints`: every sentence of the user's own messages that states a rule (must, never,
  always, don't, only, make sure, avoid…);
- `latest_request`: the user's latest message of their own (not hook output, a system reminder,
  a command wrapper or a tool-result carrier).

The user's own messages are found from the transcript's structure too: a user-role message the
importer marked as injected (`messages.INJECTED_KEY`), or whose text opens with a harness wrapper
(`<command-name>`, `<system-reminder>`, `<task-notification>`, "Stop hook feedback:", …), is not
the user speaking. Each category keeps its newest MAX_PER_CATEGORY facts; a fact counts as kept
when its normalised text (a prefix of FACT_PREFIX_CHARS for long lines) appears in one message
of the compacted conversation.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.messages import INJECTED_KEY, Message, call_arguments, call_name, tool_calls
from compaction.messages import content_text as _content_text

CATEGORIES: tuple[str, ...] = ("latest_request", "constraints", "paths", "errors", "urls")
MAX_PER_CATEGORY = 50
ERROR_LINES_PER_CALL = 3
#: Long facts are matched on their first characters: a summary may cut a long line at its end.
FACT_PREFIX_CHARS = 100
LATEST_REQUEST_CHARS = 120

#: Argument names whose values are paths.
_PATH_ARGUMENT = re.compile(r"(?:^|_)(?:path|file|filename|filepath|notebook|dir|directory)s?$")
_COMMAND_ARGUMENT = ("command", "cmd", "script")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_MOVE_TO = re.compile(r"^\*\*\* Move to: (.+)$", re.M)
_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}|\\^]+")
_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "then", "do", "xargs"})
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
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
_RULE = re.compile(
    r"\b(?:must|never|always|don'?t|do not|should(?:n'?t)?|only|make sure|avoid|without|"
    r"prefer|no need to|instead)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: str) -> str:
    return " ".join(text.lower().translate(_QUOTES).split())


@dataclass(frozen=True)
class StructuralFact:
    category: str
    text: str
    source_index: int

    @property
    def key(self) -> str:
        key = normalise(self.text)
        return key[:FACT_PREFIX_CHARS]

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "text": self.text, "source_index": self.source_index}


@dataclass
class StructuralRecall:
    found: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    lost: list[StructuralFact] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        total = sum(self.total.values())
        return sum(self.found.values()) / total if total else 1.0

    def category_ratio(self, name: str) -> float | None:
        total = self.total.get(name, 0)
        return self.found.get(name, 0) / total if total else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ratio": round(self.ratio, 4),
            "categories": {
                name: {"found": self.found.get(name, 0), "total": self.total.get(name, 0)}
                for name in CATEGORIES
            },
            "lost": [fact.to_dict() for fact in self.lost],
        }


# -- whose words ------------------------------------------------------------------------------


def _text(message: Message) -> str:
    return _content_text(message)


def _is_summary(text: str) -> bool:
    return text.lstrip().startswith(("[CONTEXT COMPACTION", "This session is being continued"))


def own_words(message: Message) -> str | None:
    """The user's own words in a user-role message, or None when it is not the user speaking."""
    if message.get("role") != "user" or message.get(INJECTED_KEY):
        return None
    text = _text(message)
    if _is_summary(text) or _WRAPPER_START.match(text):
        return None
    own = _REMINDER.sub(" ", text).strip()
    return own or None


def latest_request(messages: Sequence[Message]) -> tuple[int, str] | None:
    """(index, text) of the user's latest message of their own."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict):
            own = own_words(message)
            if own is not None:
                return index, own
    return None


# -- paths --------------------------------------------------------------------------------------


def _leaves(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(argument name, string value) of every string leaf of decoded arguments."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _leaves(item, str(name))


def _words(command: str) -> list[str]:
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = ""
        lexer.escape = ""  # a backslash is a Windows path separator as often as an escape
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain words
        return command.split()


def _path_like(word: str) -> bool:
    if len(word) < 3 or len(word) > 300 or word.startswith("-") or "://" in word:
        return False
    if any(char in word for char in "$`*?{}<>=\n\"'") or word.startswith("/dev/"):
        return False
    if not any(char.isalpha() for char in word):
        return False
    if "/" in word:
        # a sed expression (s/a/b/) or a bare slash is not a path
        return not re.match(r"^[sy]?/.*/.*/\w*$", word) or word.count("/") > 3
    return _EXTENSION.search(word) is not None and not word[0].isdigit()


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
            if _path_like(word):
                found.append(word.rstrip(",;:"))
    return found


def call_paths(call: dict[str, Any]) -> list[str]:
    raw = call_arguments(call)
    try:
        arguments: Any = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        arguments = {"input": raw}
    paths: list[str] = []
    for key, value in _leaves(arguments):
        lowered = key.lower()
        if _PATH_ARGUMENT.search(lowered) and value.strip() and "\n" not in value.strip():
            paths.append(value.strip())
        if "*** Begin Patch" in value:
            paths += [p.strip() for p in _PATCH_FILE.findall(value) + _MOVE_TO.findall(value)]
        elif lowered in _COMMAND_ARGUMENT:
            paths += command_paths(value)
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), list):
        parts = [str(part) for part in arguments["command"]]
        script = parts[-1] if len(parts) >= 3 and parts[1] in ("-lc", "-c") else " ".join(parts)
        paths += command_paths(script)
    return list(dict.fromkeys(path for path in paths if _path_like(path) or "/" in path))


# -- errors -----------------------------------------------------------------------------------


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


def _readable(output: str) -> str:
    """A JSON-wrapped output (`{"output": "…"}`) as its string values, one per line."""
    stripped = output.lstrip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return output
        return "\n".join(text for _, text in _leaves(value))
    return output


# -- mining -----------------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in _SENTENCE_END.split(text) if len(s.strip()) >= 12]


class _Facts:
    def __init__(self) -> None:
        self.facts: dict[str, list[StructuralFact]] = {name: [] for name in CATEGORIES}
        self.seen: set[tuple[str, str]] = set()

    def add(self, category: str, text: str, index: int) -> None:
        fact = StructuralFact(category, text, index)
        key = (category, fact.key)
        if not fact.key or key in self.seen or len(self.facts[category]) >= MAX_PER_CATEGORY:
            return
        self.seen.add(key)
        self.facts[category].append(fact)


def mine(messages: Sequence[Message]) -> list[StructuralFact]:
    """The structural facts of `messages` (never modified), newest first in each category."""
    facts = _Facts()
    latest = latest_request(messages)
    if latest is not None:
        first_line = next(line for line in latest[1].splitlines() if line.strip())
        facts.add("latest_request", first_line.strip()[:LATEST_REQUEST_CHARS], latest[0])
    outputs: dict[str, str] = {}
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "tool":
            outputs[str(message.get("tool_call_id"))] = _text(message)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict):
            continue
        text = _text(message)
        own = own_words(message)
        if own is not None:
            for sentence in reversed(_sentences(own)):
                if _RULE.search(sentence) and len(sentence) <= 400:
                    facts.add("constraints", sentence, index)
        for url in reversed(_URL.findall(text)):
            facts.add("urls", url.rstrip(".,;:!?*_"), index)
        for call in reversed(tool_calls(message)):
            if not isinstance(call, dict):
                continue
            for url in reversed(_URL.findall(call_arguments(call))):
                facts.add("urls", url.rstrip(".,;:!?*_\\"), index)
            for path in reversed(call_paths(call)):
                facts.add("paths", path, index)
            output = outputs.get(str(call.get("id")))
            if output is not None and failed(output):
                for line in reversed(failure_lines(_readable(output))):
                    facts.add("errors", line, index)
    return [fact for name in CATEGORIES for fact in facts.facts[name]]


def _haystack(messages: Sequence[Message]) -> str:
    parts = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        pieces = [_readable(_text(message))]
        for call in tool_calls(message):
            if isinstance(call, dict):
                pieces.append(call_name(call))
                raw = call_arguments(call)
                try:
                    pieces += [value for _, value in _leaves(json.loads(raw))]
                except (ValueError, RecursionError):
                    pieces.append(raw)
        parts.append(normalise("\n".join(pieces)))
    return "\x00".join(parts)


def structural_recall(
    facts: Sequence[StructuralFact], compacted: Sequence[Message]
) -> StructuralRecall:
    """Which structural `facts` survive in `compacted`."""
    text = _haystack(compacted)
    result = StructuralRecall()
    for fact in facts:
        result.total[fact.category] = result.total.get(fact.category, 0) + 1
        if fact.key in text:
            result.found[fact.category] = result.found.get(fact.category, 0) + 1
        else:
            result.lost.append(fact)
    return result
