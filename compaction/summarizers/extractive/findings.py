"""What the extractive scan finds, and the small rules it shares with the merge.

Kept apart from the scan itself so the merge (which must recognise a resolved blocker by the same
command key) and the section builders depend on these types without pulling in the scanner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compaction.text.patterns import ERROR_MAX_CHARS, collapse, cut, error_lines, lines_holding

ERROR_LINES_PER_FAILURE = 4
WINDOW_CHARS = 4_000
_COMPILER_ERROR = re.compile(r"^[^\s:]{1,200}:\d{1,7}(?::\d{1,7})?: (?:error|fatal)\b[^\n]*", re.M)
_EXIT_ONLY = re.compile(
    r"^\W*(?:exit(?:ed)?(?: with)? (?:code|status)|\"exit_code\")\W*-?\d+\W*$", re.I
)


@dataclass
class Action:
    """One tool call and its outcome, as a Completed Actions line."""

    index: int
    line: str
    failed: bool
    pending: bool
    key: str | None  # what a later success must match to resolve this failure
    errors: list[str] = field(default_factory=list)
    command: str | None = None
    kind: str | None = None
    targets: tuple[str, ...] = ()  # a test command's targets (see command_targets)
    fixes: int | None = None  # position in actions of the earlier failure this success fixed
    fixed_by: int | None = None  # position in actions of the later success that fixed this
    subject: str | None = None  # the file it read or changed, when it names one
    exit_code: int | None = None
    result_index: int | None = None  # the tool message that answered it

    @property
    def sources(self) -> tuple[int, ...]:
        """The call and its result: where a Completed Actions line about it comes from."""
        return (self.index,) if self.result_index is None else (self.index, self.result_index)


@dataclass
class FileRecord:
    path: str
    verbs: list[str]
    last_index: int
    indexes: list[int] = field(default_factory=list)  # every message that touched it
    defines: dict[str, int] = field(default_factory=dict)  # signature or doc -> its message


@dataclass(frozen=True)
class StateLine:
    """One Active State line: its value and the messages that showed it."""

    value: str
    sources: tuple[int, ...]
    origin: str | None = None  # a record of the session file, when it came from one


@dataclass
class Findings:
    """Everything the section builders need, each list in conversation order."""

    actions: list[Action] = field(default_factory=list)
    files: dict[str, FileRecord] = field(default_factory=dict)
    constraints: list[tuple[int, str]] = field(default_factory=list)
    decisions: list[tuple[int, str]] = field(default_factory=list)
    #: (question's message, question, answer, answer's message)
    resolved: list[tuple[int, str, str, int]] = field(default_factory=list)
    pending: list[tuple[int, str]] = field(default_factory=list)
    #: (message, line, further messages it draws on: a failure's result)
    blocked: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)
    identifiers: list[tuple[int, str, str, bool]] = field(default_factory=list)
    identifier_labels: dict[str, str] = field(default_factory=dict)  # value -> what it is
    in_progress: list[tuple[int, str]] = field(default_factory=list)
    remaining: list[tuple[int, str]] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    succeeded_keys: set[str] = field(default_factory=set)
    state: dict[str, StateLine] = field(default_factory=dict)
    first_user: str | None = None
    first_user_index: int | None = None
    todo_list_seen: bool = False


# What a failed output says, beyond the shared error lines: a module-qualified exception whose
# name does not end in Error (`psycopg.errors.UniqueViolation: …`), pytest's `E   assert …`, and a
# test runner's verdict (`1 failed, 212 passed`, vitest's `Tests 1 failed | 30 passed (31)`).
_QUALIFIED_EXCEPTION = re.compile(r"^[ \t]*(?:E[ \t]+)?((?:[a-z_]\w*\.)+[A-Z]\w*: [^\n]+)", re.M)
_ASSERTION = re.compile(
    r"^[ \t]*(?:E[ \t]+(assert [^\n]+)|(Assertion (?:with|of) [^\n]{0,80}failed[^\n]*))", re.M
)
# Elixir and Erlang raise as `** (RuntimeError) message`.
_RAISED = re.compile(r"^[ \t]*(\*\* \([\w.]+\) [^\n]+)", re.M)
_VERDICT = re.compile(r"^[^\n]*\b\d+ failed\b[^\n]*", re.M)
_FAILED_WORD = re.compile(r" failed\b")
_DIGIT = re.compile(r"\d")


def _counts_failures(output: str) -> bool:
    """Whether `output` has a digit before " failed" (`2 failed`), which every _VERDICT line
    holds. _VERDICT is tried at every position and reads each line to its end and back; most
    outputs that say "failed" say it otherwise (`UNIQUE constraint failed`), and this finds
    them at the speed of a literal search."""
    return any(
        hit.start() > 0 and _DIGIT.match(output, hit.start() - 1)
        for hit in _FAILED_WORD.finditer(output)
    )


_EXIT_STATUS = re.compile(r"(?i)\bexit(?:ed)?(?: with)? (?:code|status)\s*:?\s*(-?\d+)")
_EXCEPTION_LINE = re.compile(
    r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b|^(?:[a-z_]\w*\.)+[A-Z]\w*: "
)


def _telling(line: str) -> int:
    """How much a line tells of why a call failed: lower is more telling."""
    if _EXCEPTION_LINE.match(line) or line.startswith(("error", "fatal", "panicked", "** (")):
        return 0
    if line.startswith(("assert", "Assertion")):
        return 1
    if _EXIT_ONLY.match(line) or _EXIT_STATUS.search(line):
        return 4
    if re.search(r"\b\d+ failed\b", line):
        return 3
    return 2


# A line saying a path does not exist: `ls: cannot access 'x': No such file or directory`,
# `ENOENT: no such file or directory, open 'x'`, `cat: x: No such file or directory`.
_MISSING_PATH = re.compile(
    r"^[^\n]*(?:No such file or directory|cannot access|ENOENT|"
    r"(?:[Pp]ath|[Ff]ile|[Dd]irectory) (?:'[^'\n]*' |\"[^\"\n]*\" |`[^`\n]*` )?does not exist)"
    r"[^\n]*",
    re.M,
)
_MISSING_WORDS = ("No such file", "cannot access", "ENOENT", "does not exist")


def missing_path_lines(output: str) -> list[str]:
    """The lines of `output` that say a path does not exist (what a next window must not try
    again), each cut as error lines are."""
    if not any(word in output for word in _MISSING_WORDS):
        return []
    return [cut(line.strip(), ERROR_MAX_CHARS) for line in _MISSING_PATH.findall(output)]


def failure_lines(output: str) -> list[str]:
    """The exact error lines of a failed output, most telling first (the exception, the
    assertion, a FAILED line, the verdict, the exit status), at most ERROR_LINES_PER_FAILURE: the
    probe scanners' lines plus compiler-style `path:line: error: …` lines (mypy, gcc, tsc, ruff),
    module-qualified exceptions, pytest assertions and test verdicts."""
    found = error_lines(output)
    if ": error" in output or ": fatal" in output:
        found += [cut(line, ERROR_MAX_CHARS) for line in _COMPILER_ERROR.findall(output)]
    if "." in output:
        # Each match starts a line and holds ": " (lines_holding): tried at those lines only.
        for start in lines_holding(output, (": ",)):
            qualified = _QUALIFIED_EXCEPTION.match(output, start)
            if qualified is not None:
                found.append(cut(qualified.group(1), ERROR_MAX_CHARS))
    if "ssert" in output:
        found += [cut(a or b, ERROR_MAX_CHARS) for a, b in _ASSERTION.findall(output)]
    if "** (" in output:
        found += [cut(line, ERROR_MAX_CHARS) for line in _RAISED.findall(output)]
    if "failed" in output and _counts_failures(output):
        found += [cut(line.strip(" =-|"), ERROR_MAX_CHARS) for line in _VERDICT.findall(output)]
    found += missing_path_lines(output)
    unique = list(dict.fromkeys(line for line in found if line))
    # The latest of each kind: a traceback's last exception line is the one that was raised.
    ordered = sorted(unique, key=lambda line: (_telling(line), -output.rfind(line)))
    informative = [line for line in ordered if not _EXIT_ONLY.match(line)]
    return (informative or ordered)[:ERROR_LINES_PER_FAILURE]


def exit_status(output: str) -> int | None:
    """The exit status an output reports in words (`Process exited with code 1`, Codex's
    `Exit code: 2`), for outputs whose form the one-line summaries do not read."""
    found = _EXIT_STATUS.search(output)
    if found is None:
        found = re.search(r"(?i)\bexit code:\s*(-?\d+)", output)
    return int(found.group(1)) if found else None


def command_targets(command: str) -> tuple[str, ...]:
    """What a test command runs (`tests/test_db.py`, `-k users`), so a narrower run that passes
    does not resolve a failure of the whole suite; empty for the whole suite."""
    first = command.split("\n", 1)[0]
    segment = re.split(r"&&|;|\|", first)
    words: list[str] = []
    for part in segment:
        tokens = [w for w in part.split() if "=" not in w or w.startswith("-")]
        if tokens and tokens[0] not in ("cd", "export", "source", "set"):
            words = tokens
            break
    key_words = len(command_key(command).split())
    return tuple(
        word for word in words[key_words:] if not word.startswith(("-q", "-v", "2>", "--color"))
    )


def command_key(command: str) -> str:
    """The program and sub-command a command runs (`cargo test`, `python -m pytest`), ignoring a
    leading `cd …&&` and environment assignments, so a later success can resolve a failure."""
    segments = re.split(r"&&|;|\|\|", command.split("\n", 1)[0])
    for segment in segments:
        words = [w for w in segment.split() if "=" not in w or w.startswith("-")]
        if not words or words[0] in ("cd", "export", "source", "set"):
            continue
        picked = [words[0]]
        for word in words[1:3]:
            if word.startswith("-") and word != "-m":
                break
            picked.append(word)
            if word != "-m":
                break
        return " ".join(picked)
    return collapse(command)[:40]


def identifier_kind(value: str) -> str:
    if "://" in value:
        return "URLs"
    if value.startswith("#"):
        return "Issues/PRs"
    if value.startswith(":") or value[:1] in "Pp":
        return "Ports"
    if all(char in "0123456789abcdef" for char in value):
        return "Hashes"
    return "Versions"


_LABEL_WORD = re.compile(r"([A-Za-z][\w.-]{1,30})[\s:=@(\[\"'`>]{1,4}$")
_LABEL_STOP = frozenset(
    "the a an and or of to in on for with from is are was at by see on as at commit".split()
)
LABEL_MAX_CHARS = 40


def identifier_label(text: str, value: str) -> str:
    return _LABEL_UNSAFE.sub(" ", _label(text, value)).strip()


# A label sits inside "value (label)" in a comma-separated line: it may hold neither.
_LABEL_UNSAFE = re.compile(r"[,()]+")


def _label(text: str, value: str) -> str:
    """What an identifier is, from its own line: the word before it (`task-id b0be39e`,
    `ash 3.4.1`, `PR #17`), or for a value that opens its line (`05fd186 fix: login` in a
    git log) the words after it. Empty when neither says anything."""
    if value.startswith(("http://", "https://")) or value[:1] in ":Pp":
        return ""  # a URL or a port already says what it is
    position = text.find(value)
    if position < 0:
        return ""
    start = text.rfind("\n", 0, position) + 1
    before = text[max(start, position - 60) : position]
    word = _LABEL_WORD.search(before)
    if word and word.group(1).lower() not in _LABEL_STOP and not word.group(1)[0].isdigit():
        return word.group(1).rstrip(".-")
    if before.strip(" -*[(") == "" and identifier_kind(value) == "Hashes":
        end = text.find("\n", position)
        rest = text[position + len(value) : end if end >= 0 else len(text)].strip(" ]:-")
        return cut(rest, LABEL_MAX_CHARS) if rest else ""
    return ""


def window(text: str, keep: int = WINDOW_CHARS) -> str:
    """The start and the end of a long output: where exit codes, verdicts and the final exception
    of a traceback are. Scanning only these keeps the cost per output bounded."""
    if len(text) <= 2 * keep:
        return text
    return text[:keep] + "\n" + text[-keep:]
