"""Text patterns the engine's summariser and the lab's probes both read: error lines,
identifiers, the user's own words and rules, commands and written paths.

They live in the engine so the summariser never depends on the scorer (compaction/lab/probes.py
keeps its own scoring). Error lines and identifiers are found fast:

Tool outputs are most of a session's text, so these scans set the cost of mining. Python's regex
engine scans quickly only for patterns that start with a literal or a plain character class;
lookbehinds and leading `.*` make it crawl (a few MB/s). So each pattern here is a cheap one
that finds candidates at C speed, and the boundary rules (what may precede or follow a hash, a
version, an issue number) are checked in Python on the few candidates found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from compaction.messages import Message
from compaction.messages import content_text as _content_text
from compaction.text.tool_calls import argument, patch_changes, read_call, tool_kind, written
from compaction.text.tool_calls import command_text as command_text
from compaction.text.user_words import prose_sentences

ERROR_MAX_CHARS = 160  # as Phase 1's error evidence

# -- error lines ---------------------------------------------------------------------------------

#: Every error line holds one of these (see error_lines).
_ERROR_WORDS = ("rror", "xception", "FAILED", "fatal", "xit")
# An error line is one of three kinds, each its own pattern so that a line is tried only
# against the kinds whose word it holds: one alternation of all three spent ~15 µs a line
# backtracking through the two `.*` branches (see _is_error_line).
_EXCEPTION_LINE = re.compile(
    r"[ \t]*(?:"
    r"(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*)?(?:Error|Exception)\b(?:\[\w+\])?:.*"
    r"|(?:error|fatal)(?:\[\w+\])?:.*"
    r")"
)
_FAILED_LINE = re.compile(r".*\bFAILED\b.*")
_EXIT_LINE = re.compile(
    r".*(?i:\bexit(?:ed)?(?: with)? (?:code|status)|\"exit_code\")\s*[:=]?\s*-?[1-9]\d*\b.*"
)
_NAMED_FAILURE = re.compile(r"(?:Error|Exception)\b|FAILED")
# pytest prefixes the lines of a failure's explanation with "E   ": the error is what follows.
_PYTEST_PREFIX = re.compile(r"^[ \t]*E[ \t]{2,}")


def collapse(text: str) -> str:
    return " ".join(text.split())


def cut(text: str, limit: int) -> str:
    """Whitespace collapsed and cut as Phase 1 cuts (minus its "..."), so a kept prefix matches."""
    text = collapse(text)
    return text if len(text) <= limit else text[:limit].rstrip()


def _is_error_line(line: str) -> bool:
    """An exception or `error:`/`fatal:` line, a FAILED line, or one reporting a non-zero exit.

    The FAILED and exit kinds are tried only on lines holding their word. The exit word is
    matched case-insensitively: on ASCII text `lower()` folds case as the pattern does; outside
    ASCII the pattern alone decides (it reads "EXİT" and "exıt" as "exit"; lower() does not).
    """
    return bool(
        _EXCEPTION_LINE.fullmatch(line)
        or ("FAILED" in line and _FAILED_LINE.fullmatch(line))
        or ((not line.isascii() or "exit" in line.lower()) and _EXIT_LINE.fullmatch(line))
    )


def lines_holding(text: str, words: tuple[str, ...]) -> list[int]:
    """Where each line of `text` that holds one of `words` (none holding a newline) starts, in
    order, each once.

    For a line-anchored pattern whose every match holds one of the words, trying it at these
    starts finds what searching the whole text finds, without trying it at every position: the
    words are found at memory speed (an alternation of them is tried at every position too), and
    each word's search skips to the next line once it is found on one, so each word reads the
    text once."""
    starts: set[int] = set()
    for word in words:
        found = text.find(word)
        while found != -1:
            starts.add(text.rfind("\n", 0, found) + 1)
            end = text.find("\n", found)
            found = -1 if end == -1 else text.find(word, end + 1)
    return sorted(starts)


def error_lines(text: str) -> list[str]:
    """Exception lines (`ValueError: …`, `Error: …`, `error[E0308]: …`, `fatal: …`), FAILED lines
    and lines reporting a non-zero exit code, in order, each collapsed and cut to 160 chars."""
    lines: list[str] = []
    for start in lines_holding(text, _ERROR_WORDS):
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
        line = _PYTEST_PREFIX.sub("", text[start:line_end].rstrip("\r"), count=1)
        if not _is_error_line(line):
            continue
        collapsed = collapse(line)
        if (
            len(collapsed) > ERROR_MAX_CHARS
            and "exit" in collapsed.lower()
            and not _NAMED_FAILURE.search(collapsed)
        ):
            continue  # a long blob that merely reports an exit code: no line to keep
        lines.append(cut(collapsed, ERROR_MAX_CHARS))
    return lines


# -- identifiers ---------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")
_HEX = re.compile(r"[0-9a-f]{7,}")
_ISSUE = re.compile(r"#\d{1,6}\b")
# Versions are found from their first ".<digit>" (a literal start the engine scans fast), then
# read whole from where their digits begin.
_VERSION_HINT = re.compile(r"\.\d")
_VERSION = re.compile(r"v?\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?")
_HOST_PORT = re.compile(r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(:\d{2,5})\b")
_HOST_HINT = re.compile(r"localhost:|\.0\.0\.[01]:")
_PORT_WORD = re.compile(r"ort\s*[=:]?\s*\d{2,5}\b")
_DIGIT = re.compile(r"\d")
_HEX_LETTER = re.compile(r"[a-f]")


def _before(text: str, position: int) -> str:
    return text[position - 1] if position > 0 else ""


def _after(text: str, position: int) -> str:
    return text[position] if position < len(text) else ""


def _wordish(char: str) -> bool:
    return bool(char) and (char.isalnum() or char in "_-")


def identifiers(text: str) -> list[str]:
    """URLs, git hashes (7–40 hex with a digit and a letter), issue numbers (#123), versions
    (v1.2, 1.2.3, v1.2.3-rc.1), ports (localhost:8080 → ':8080', 'port 8080'), in text order."""
    found: list[tuple[int, str]] = []
    # A substring test spares the texts without "://" or "#" (most) a pattern scan each.
    if "://" in text:
        for match in _URL.finditer(text):
            found.append((match.start(), match.group().rstrip(".,;:!?'\"")))
    if _DIGIT.search(text) is None:
        return [value for _, value in found]  # every other kind holds a digit
    for start, end in hex_runs(text):
        value = text[start:end]
        if (
            len(value) <= 40
            and _DIGIT.search(value)
            and _HEX_LETTER.search(value)
            and not _wordish(_before(text, start))
            and not _wordish(_after(text, end))
        ):
            found.append((start, value))
    if "#" in text:
        for match in _ISSUE.finditer(text):
            before = _before(text, match.start())
            if not (before.isalnum() or before in "_&#/"):
                found.append((match.start(), match.group()))
    found += _versions(text)
    found += _host_ports(text)
    for match in _PORT_WORD.finditer(text):
        start = match.start() - 1  # the "P" or "p"
        if start < 0 or text[start] not in "Pp" or _wordish(_before(text, start)):
            continue
        found.append((start, text[start : match.end()]))
    found.sort(key=lambda item: item[0])
    return [value for _, value in found]


#: Each byte to b"x" if it is a lower-case hex digit, else to b" ".
_HEX_MASK = bytes(b"x"[0] if chr(byte) in "0123456789abcdef" else b" "[0] for byte in range(256))
_HEX_RUN = b"x" * 7


def hex_runs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each match of `[0-9a-f]{7,}` in `text`: every maximal run of 7 or more
    lower-case hex digits, in order.

    The pattern starts a match attempt at every a–f letter, about a third of all prose and code,
    and was most of the identifier scan. On ASCII text the runs are found instead in a mask of
    the text (hex digits as "x", everything else as " ") with bytes.find, at memory speed.
    """
    if not text.isascii():  # character positions are byte positions only in ASCII
        for match in _HEX.finditer(text):
            yield match.span()
        return
    mask = text.encode("ascii").translate(_HEX_MASK)
    start = mask.find(_HEX_RUN)
    while start >= 0:
        # The first 7 x's at or after the end of the previous run begin a run: one more x
        # before them would be an earlier match.
        end = mask.find(b" ", start + len(_HEX_RUN))
        if end < 0:
            end = len(mask)
        yield start, end
        start = mask.find(_HEX_RUN, end)


def _host_ports(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    if "localhost:" not in text and ".0.0." not in text:
        # Every _HOST_HINT match holds one of these literals: a substring test spares the many
        # texts without a host the alternation's slower scan.
        return found
    for hint in _HOST_HINT.finditer(text):
        # The host starts at the hint ("localhost:"), or 3 ("127.0.0.1") or 1 ("0.0.0.0") before.
        for begin in (hint.start(), hint.start() - 3, hint.start() - 1):
            host = _HOST_PORT.match(text, begin) if begin >= 0 else None
            if host:
                found.append((host.start(1), host.group(1)))
                break
    return found


def _versions(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    resume = 0
    for hint in _VERSION_HINT.finditer(text):
        if hint.start() < resume:
            continue
        start = hint.start()
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        if start == hint.start():
            continue  # no digits before the dot
        if start > 0 and text[start - 1] == "v":
            start -= 1
        match = _VERSION.match(text, start)
        if match is None:
            continue
        resume = match.end()
        value = match.group()
        before = _before(text, match.start())
        after = text[match.end() : match.end() + 2]
        if before.isalnum() or before in "_.":
            continue
        if (after[:1].isalnum() or after[:1] == "_") or (after[:1] == "." and after[1:].isdigit()):
            continue  # part of something longer: an IP address, a file name
        core = value.split("-", 1)[0]
        if core.count(".") >= 2 or value.startswith("v"):
            found.append((match.start(), value))
    return found


# -- the user's words, commands and written paths ----------------------------------------------

TEXT_MAX_CHARS = 160  # latest request snippet and constraint sentences

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_LIST_MARKER = re.compile(r"^(?:[-*•>]+|\d{1,3}[.)])\s+")
_CONSTRAINT = re.compile(
    r"\b(?:must|never|always|don't|do not|prefer|instead of|make sure|only)\b", re.I
)
_REDIRECT = re.compile(r"(?<![<>&\d])>>?\s*['\"]?([\w./~-]+)")
_SED_IN_PLACE = re.compile(r"^\s*sed\s+-i\b.*\s['\"]?([\w./~-]+)['\"]?\s*$")
_PATH_KEYS = ("path", "file_path", "filename", "target_file", "notebook_path")


def user_text(message: Message) -> str:
    # Agents inject reminders into user turns; those are not the user's words.
    return _REMINDER.sub(" ", _content_text(message)).replace("\u2019", "'")


def json_strings(value: Any) -> Iterator[str]:
    """Every string leaf of a decoded JSON value, in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)


def readable_text(text: str) -> str:
    """Text as a reader sees it: a JSON-wrapped tool output becomes its decoded string values."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict | list):
        return "\n".join(json_strings(value))
    return text


def written_paths(name: str, arguments: dict[str, Any], raw: str) -> list[str]:
    """The files a call writes: its path argument, the files its patch adds or updates, or
    what its commands redirect to or edit in place (each command a code-mode cell runs)."""
    if tool_kind(name) == "editor":
        if arguments.get("command") not in ("create", "str_replace", "insert"):
            return []
        path = argument(arguments, *_PATH_KEYS)
        return [path.strip()] if isinstance(path, str) and path.strip() else []
    reading = read_call(name, arguments)
    if reading.kind in ("write_file", "patch"):
        path = argument(reading.arguments, *_PATH_KEYS)
        if isinstance(path, str) and path.strip():
            return [path.strip()]
        # A patch body that did not parse as arguments (plain text) is read from the raw call.
        return written(reading.patch or patch_changes(raw))
    if reading.kind == "terminal":
        paths = written(reading.patch)  # a cell that patched, then ran a command
        for command in reading.commands:
            if "apply_patch" in command:
                paths += written(patch_changes(command))
            first_line = command.strip().split("\n", 1)[0]
            # Only the first line: a heredoc body is file content, not shell syntax.
            paths += _REDIRECT.findall(first_line)
            sed = _SED_IN_PLACE.match(first_line)
            if sed:
                paths.append(sed.group(1))
        return [p for p in paths if _looks_like_path(p)]
    return []


def _looks_like_path(text: str) -> bool:
    if text.startswith("/dev/") or not re.search(r"[A-Za-z]", text):
        return False
    return "/" in text or re.search(r"\.[A-Za-z]\w*$", text) is not None


def constraint_sentences(text: str, limit: int | None = TEXT_MAX_CHARS) -> list[str]:
    """The sentences of `text` that state a rule, list markers dropped (`- never …` is the rule
    `never …`), each cut to its first `limit` chars (a probe's prefix) or whole with None.

    Sentences are read whole: the lines of a hard-wrapped paragraph are one run (a rule is
    never cut at a line break), and a question states no rule."""
    found = []
    for piece in prose_sentences(text):
        sentence = _LIST_MARKER.sub("", piece)
        is_rule = len(sentence) >= 8 and _CONSTRAINT.search(sentence) is not None
        if is_rule and not is_question_sentence(sentence):
            found.append(sentence if limit is None else cut(sentence, limit))
    return found


_QUESTION_OPENING = re.compile(
    r"^(?:should|shall|can|could|would|will|is|are|am|does|did|what|how|why|where|when|which|"
    r"who)\b",
    re.I,
)


def is_question_sentence(sentence: str) -> bool:
    """A question, by its mark or by its first word when the mark is left off ("should i
    enable rls already"); "Do not …" and "Don't …" are rules, not questions."""
    return sentence.rstrip().endswith("?") or _QUESTION_OPENING.match(sentence) is not None


# -- harness text in a user turn ------------------------------------------------------------

#: How each agent's harness opens the text it sends in a user turn (OBSERVED_FORMATS.md), and
#: which kind of injection that is. Checked on the start of the text only: a user who quotes a
#: reminder in the middle of their own message is still the one speaking.
INJECTED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("Stop hook feedback:", "stop-hook"),
    ("<system-reminder>", "system-reminder"),
    ("Caveat: The messages below were generated by the user", "system-reminder"),
    ("Base directory for this skill:", "system-reminder"),
    ("<command-name>", "command"),
    ("<command-message>", "command"),
    ("<local-command-stdout>", "command"),
    ("<local-command-stderr>", "command"),
    ("<bash-input>", "command"),
    ("<bash-stdout>", "command"),
    ("<user_shell_command>", "command"),
    ("<task-notification>", "task-notification"),
    ("<user-prompt-submit-hook>", "hook"),
    ("SessionStart:", "hook"),
    ("PostToolUse:", "hook"),
    ("PreToolUse:", "hook"),
    ("UserPromptSubmit hook", "hook"),
    ("# AGENTS.md instructions", "context"),
    ("<environment_context>", "context"),
    ("<user_instructions>", "context"),
    ("<permissions instructions>", "context"),
    ("[Request interrupted by user", "interruption"),
    ("<turn_aborted>", "interruption"),
    ("<local-command-caveat>", "system-reminder"),
    ("<skill>", "system-reminder"),  # Codex's skill instructions
    ("<skill ", "system-reminder"),
    ("<user_action>", "command"),  # Codex's /review result
    ("<context_update>", "context"),
    ("<subagent_notification>", "task-notification"),
    ("<tool_response>", "tool-result"),  # Hermes function calling, when a human turn carries it
    ("<session_context>", "context"),  # Gemini CLI
    ("This is the Gemini CLI. We are setting up the context for our chat.", "context"),
    # The prompt Gemini CLI's `/init` sends in the user's place (a slash command's expansion).
    ("You are an AI agent that brings the power of Gemini directly into the terminal.", "command"),
    ("<hook_context>", "hook"),
    ("<state_snapshot>", "compaction"),
    # Claude Code's compaction request, the user turn of its `agent-acompact-…` sidechain.
    ("Your task is to create a detailed summary of the conversation so far", "compaction"),
    # Codex's handoff after a compaction, and the older bridge message that preceded it.
    ("Another language model started to solve this problem", "compaction"),
    ("You were originally given instructions from a user over one or more turns", "compaction"),
)


def injected_kind(text: str) -> str | None:
    """The kind of harness text `text` is (messages.INJECTED_KINDS), or None for the user's own."""
    start = text.lstrip()[:80]
    for prefix, kind in INJECTED_PREFIXES:
        if start.startswith(prefix):
            return kind
    return None
