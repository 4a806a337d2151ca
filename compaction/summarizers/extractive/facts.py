"""What the extractive scan reads from one message, computed once per distinct message.

Everything costly in the scan (sentence splitting, path and identifier mining, error lines,
parsing call arguments, Phase 1's one-liners) depends only on a message's strings: its text, a
call's name and arguments, the call's output, and Phase 1's line for it. The scan's running state
(open questions, failures, the files table, Active State) is cheap to update from those facts.
So the facts are frozen values kept in bounded caches (cache.py) keyed by the strings
themselves, and a second compaction of the same session only replays them (scan.py).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from compaction.cache import remembered
from compaction.messages import parse_arguments
from compaction.summarizers.extractive import text as tx
from compaction.summarizers.extractive.definitions import definition_paths, definitions
from compaction.summarizers.extractive.findings import (
    ERROR_LINES_PER_FAILURE,
    command_key,
    command_targets,
    exit_status,
    failure_lines,
    identifier_kind,
    identifier_label,
    missing_path_lines,
    window,
)
from compaction.summarizers.extractive.shell_files import changes, command_effects, patch_effects
from compaction.summarizers.extractive.state import (
    CommandEffect,
    command_effect,
    is_test_command,
)
from compaction.text.one_liners import exit_code, summarize_tool_output, tool_kind
from compaction.text.patterns import (
    collapse,
    command_text,
    cut,
    error_lines,
    identifiers,
    written_paths,
)
from compaction.text.patterns import readable_text as readable
from compaction.text.redact import redact
from compaction.text.tool_calls import argument, call_kind

# Constraints, commands and written paths are read exactly as the probes read them, so what the
# recall study counts is what the summary keeps.

IDENTIFIER_WINDOW_CHARS = 1_500
TODO_TOOLS = ("TodoWrite", "todo_write", "update_plan", "UpdatePlan")
_FAILURE_IN_OUTPUT = re.compile(
    r"^(?:Traceback \(most recent call last\)|\w{0,60}(?:Error|Exception): |error(?:\[\w+\])?: "
    # test runners: pytest's FAILED lines and its "=== 2 failed, 4 passed ===" verdict, unittest's
    r"|fatal: |FAILED |FAIL: |=+ (?:.*, )?\d+ failed\b)",
    re.M,
)
# Every _FAILURE_IN_OUTPUT match holds one of these. The pattern is tried at every position
# (each line start can open a match), so the many outputs without them skip it.
_FAILURE_WORDS = ("Traceback", "Error: ", "Exception: ", "error", "fatal: ", "FAIL", " failed")
_APPLIED_EDIT = re.compile(r"^Applied edit to (\S+)", re.M)
_COMMIT_NOTICE = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+)$", re.M)
_PATH_ARGUMENTS = ("path", "file_path", "filename", "absolute_path", "target_file", "notebook_path")

#: (kind, value, label) in text order, as the Critical Context section groups them; the label
#: says what the value is, from the words beside it ("" when they say nothing).
Identifiers = tuple[tuple[str, str, str], ...]


# Words that name a secret in an assignment (`ENCRYPTION_KEY=9f3a…`): a value found in such a
# text is kept only if the redactor leaves it, or the summary would carry the secret without
# its name (as a bare "hash"), where the line-by-line redaction of the summary cannot see it.
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|auth|credential")


def _identifiers(text: str, prose: bool) -> Identifiers:
    source = text if prose else readable(text)
    found = identifiers(source)
    if found and _SECRET_NAME.search(source):
        redacted = redact(source)
        if redacted != source:
            found = [value for value in found if value in redacted]
    return tuple((identifier_kind(v), v, identifier_label(source, v)) for v in found)


class UserFacts(NamedTuple):
    blank: bool
    constraints: tuple[str, ...]
    observation: bool  # tool output pasted as a user row (old SWE-agent): not prose
    questions: tuple[str, ...]
    request: str  # the opening sentence, pending until acted on (when there are no questions)
    paths: tuple[str, ...]
    blocked: tuple[str, ...]
    identifiers: Identifiers


def _user_facts(text: str, words: str) -> UserFacts:
    """What a user turn says: `text` is the turn without the harness's envelope, `words` what
    of it the user typed (user_words.own_words). Rules, questions and the request come from the
    words alone; paths, identifiers and reported errors from the whole text (a pasted log's
    error is still the failure the user reports)."""
    if not text.strip():
        return UserFacts(True, (), False, (), "", (), (), ())
    observation = len(text) > 3_000
    questions: tuple[str, ...] = ()
    request = ""
    paths: tuple[str, ...] = ()
    if not observation:
        questions = tuple([s for s in tx.sentences(words) if tx.is_question(s)][:3])
        request = "" if questions or not words else tx.first_sentences(words, 1)
        paths = tuple(tx.mentioned_paths(text))
    blocked = tuple(
        f"reported in a user turn: `{line}`"
        for line in error_lines(readable(text))[-ERROR_LINES_PER_FAILURE:]
    )
    return UserFacts(
        False,
        tx.constraints(words),
        observation,
        questions,
        request,
        paths,
        blocked,
        _identifiers(text, prose=not observation),
    )


class ProseFacts(NamedTuple):
    """An assistant message's text."""

    blank: bool
    is_answer: bool  # opens with an answer rather than an announcement ("Let me check")
    decisions: tuple[str, ...]
    last_intent: str | None
    remaining: tuple[str, ...]  # next-step sentences, then open checkboxes
    paths: tuple[str, ...]
    identifiers: Identifiers


def _prose_facts(text: str) -> ProseFacts:
    if not text.strip():
        return ProseFacts(True, False, (), None, (), (), ())
    found = tx.sentences(text)
    intents = [s for s in found if tx.is_intent(s)]
    return ProseFacts(
        False,
        bool(found) and not tx.is_intent(found[0]),
        tuple(tx.decisions(found)),
        intents[-1] if intents else None,
        tuple([s for s in found if tx.is_next_step(s)] + tx.open_checkboxes(text)),
        tuple(tx.mentioned_paths(text)),
        _identifiers(text, prose=True),
    )


class NoticeFacts(NamedTuple):
    """A system row inside the turns: agents such as Aider report edits and commits there."""

    edited: tuple[str, ...]
    commits: tuple[tuple[str, str], ...]  # (action line, Active State's last commit)
    paths: tuple[str, ...]
    identifiers: Identifiers


def _notice_facts(text: str) -> NoticeFacts:
    commits = tuple(
        (f"[notice] commit {commit} {cut(subject, 100)}", f"{commit} {cut(subject, 100)}")
        for commit, subject in _COMMIT_NOTICE.findall(text)
    )
    return NoticeFacts(
        tuple(_APPLIED_EDIT.findall(text)),
        commits,
        tuple(tx.mentioned_paths(text)),
        _identifiers(window(text), prose=True),
    )


class CallFacts(NamedTuple):
    """One tool call with its output (or none yet) and Phase 1's line for it."""

    kind: str | None
    command: str | None
    todo_tool: bool
    todo: tuple[str, tuple[str, ...]] | None  # (plan line, pending steps) of a plan update
    touches: tuple[tuple[str, str], ...]  # (path, verb) in order
    modified: tuple[str, ...]
    identifiers: Identifiers  # from the arguments
    pending: bool  # no result yet
    line: str
    failed: bool
    key: str  # what a later success must match to resolve a failure ('' while pending)
    errors: tuple[str, ...]
    effect: CommandEffect | None
    targets: tuple[str, ...] = ()  # a test command's targets: what a success must cover
    exit_code: int | None = None
    #: The paths of the texts the call wrote (definitions.definition_paths): what they define
    #: is read only when one of those files still has room in Relevant Files (call_definitions)
    defines_in: tuple[str, ...] = ()


def _kind(name: str, arguments: dict[str, Any]) -> str | None:
    kind = tool_kind(name)
    if kind == "editor":
        return "read_file" if arguments.get("command") == "view" else "patch"
    # Per call: a code-mode cell is a terminal call when it runs a command, else what it calls.
    return call_kind(name, arguments)


def _path_argument(arguments: dict[str, Any]) -> str | None:
    # Keys matched as the one-liners match them: Antigravity's `AbsolutePath` is a path too.
    value = argument(arguments, *_PATH_ARGUMENTS)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _failed(kind: str | None, output: str, code: int | None) -> bool:
    if code is not None:
        return code != 0
    head = output[:300].lstrip().lower()
    if head.startswith(("<tool_use_error>", "error", "fatal", "traceback")):
        return True
    if kind == "terminal" and missing_path_lines(output):
        return True  # `ls: cannot access 'src/lib': No such file…` with no exit code shown
    return (
        kind == "terminal"
        and any(word in output for word in _FAILURE_WORDS)
        and _FAILURE_IN_OUTPUT.search(output) is not None
    )


def _todo(name: str, arguments: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    if name not in TODO_TOOLS:
        return None
    entries = arguments.get("todos")
    if entries is None:
        entries = arguments.get("plan")
    if not isinstance(entries, list):
        return None
    pending = []
    done = 0
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        text = entry.get("content") or entry.get("step") or entry.get("title")
        status = str(entry.get("status", "pending"))
        if status in ("completed", "done", "complete"):
            done += 1
        elif isinstance(text, str):
            pending.append(f"{collapse(text)} ({status})")
    current = [item for item in pending if item.endswith("(in_progress)")]
    line = f"[{name}] plan updated: {done} of {done + len(pending)} steps done" + (
        f"; now: {current[0].rsplit(' (', 1)[0]}" if current else ""
    )
    return line, tuple(pending)


class _Writes(NamedTuple):
    """The files a call touches as its arguments say: `touches` in order, then the files it
    wrote (`written`), whose verb is `written_verb` or, for a whole file, its output's word."""

    touches: tuple[tuple[str, str], ...]
    modified: tuple[str, ...]
    written: tuple[str, ...] = ()
    written_verb: str | None = None  # None: "created" when the output says so, else "written"


def _touched(
    name: str, kind: str | None, arguments: dict[str, Any], raw: str, command: str | None
) -> _Writes:
    """The files a call read, searched, wrote, deleted or named in its command, in order."""
    touches: list[tuple[str, str]] = []
    modified: list[str] = []
    path = _path_argument(arguments)
    if kind == "read_file" and path:
        touches.append((path, "read"))
    elif kind == "search_files":
        where = arguments.get("path") or arguments.get("dir")
        if isinstance(where, str) and where.strip():
            touches.append((where, "searched"))
    if kind == "terminal" and command:
        # Codex and Claude Code change files through the shell: read the command line itself.
        for target, verb in command_effects(command):
            touches.append((target, verb))
            if changes(verb):
                modified.append(target)
        return _Writes(tuple(touches), tuple(modified))
    patch = arguments.get("input") or arguments.get("patch")
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        for target, verb in patch_effects(patch):
            touches.append((target, verb))
            modified.append(target)
        return _Writes(tuple(touches), tuple(modified))
    written = tuple(written_paths(name, arguments, raw))
    creating = tool_kind(name) == "editor" and arguments.get("command") == "create"
    written_verb = None if kind == "write_file" or creating else "edited"
    return _Writes(tuple(touches), tuple(modified) + written, written, written_verb)


class _ArgumentFacts(NamedTuple):
    """What a call's name and arguments say, whatever its output: an agent runs the same test
    command and reads the same file again and again, so these are read once per distinct call
    (call_facts reads the output's part per output)."""

    kind: str | None
    command: str | None
    todo: tuple[str, tuple[str, ...]] | None
    writes: _Writes
    identifiers: Identifiers
    key: str  # what a later success must match to resolve a failure
    targets: tuple[str, ...]
    defines_in: tuple[str, ...]


def _argument_facts(name: str, raw: str) -> _ArgumentFacts:
    arguments = parse_arguments(raw)
    kind = _kind(name, arguments)
    command: str | None = None
    if kind == "terminal":
        command = command_text(arguments).strip()
    return _ArgumentFacts(
        kind,
        command,
        _todo(name, arguments),
        _touched(name, kind, arguments, raw, command),
        _identifiers(window(raw, IDENTIFIER_WINDOW_CHARS), prose=True),
        command_key(command) if command else f"{kind or name}:{_path_argument(arguments)}",
        command_targets(command) if command and is_test_command(command) else (),
        definition_paths(arguments),
    )


def argument_facts(name: str, raw: str) -> _ArgumentFacts:
    return remembered(("call arguments", name, raw), len(raw), lambda: _argument_facts(name, raw))


def _call_facts(name: str, raw: str, output: str | None, one_liner: str | None) -> CallFacts:
    known = argument_facts(name, raw)
    kind, command, writes = known.kind, known.command, known.writes
    touches = writes.touches
    if writes.written:
        said = "created" if "created" in (output or "")[:200].lower() else "written"
        touches += tuple((path, writes.written_verb or said) for path in writes.written)
    head = (
        kind,
        command,
        name in TODO_TOOLS,
        known.todo,
        touches,
        writes.modified,
        known.identifiers,
    )
    # The one-liner reads the command out of every call shape itself (tool_calls), a code-mode
    # cell's further commands too ("(+1 more)"): it gets the arguments as they are. Phase 1 has
    # written it for most outputs; the arguments are parsed again only where it has not.
    if output is None:
        line = summarize_tool_output(name, parse_arguments(raw), "").split(" (", 1)[0]
        line = line.split(" -> ", 1)[0] + " (no result yet)"
        return CallFacts(*head, True, line, False, "", (), None, defines_in=known.defines_in)
    seen = window(output)
    # Most outputs never mention an exit code; a substring test spares them the regex.
    code = exit_code(seen) if "xit" in seen or "XIT" in seen else None
    failed = _failed(kind, seen, code)
    line = one_liner or summarize_tool_output(name, parse_arguments(raw), output)
    if code is None and " -> exit ?" in line:  # say what the output showed instead of "?"
        line = line.replace(" -> exit ?", " -> failed" if failed else " -> no error seen", 1)
    text = _decoded(seen)
    errors = tuple(failure_lines(text)) if failed else ()
    effect = command_effect(command, text, code, failed) if command else None
    if code is None and kind == "terminal":
        code = exit_status(seen[:2_000]) if "xit" in seen else None
    defines_in = () if failed else known.defines_in  # a failed write defined nothing
    return CallFacts(
        *head, False, line, failed, known.key, errors, effect, known.targets, code, defines_in
    )


_JSON_ESCAPES = (("\\n", "\n"), ("\\t", "\t"), ('\\"', '"'))
#: `{"output": "` / `", "exit_code": ` — the seams between the fields of a JSON-wrapped output.
_JSON_SEAM = re.compile(r'^\s*\{\s*"\w+"\s*:\s*"?|"?\s*,\s*"\w+"\s*:\s*"?|"?\s*\}\s*$')


def _decoded(seen: str) -> str:
    """A tool output as lines of text. A JSON-wrapped output (`{"output": "..."}`) is decoded;
    once windowed it no longer parses, so its common escapes are undone by hand instead — else
    a test verdict is read from one long line full of escaped newlines."""
    text = readable(seen)
    if text is seen and seen.lstrip().startswith(("{", "[")) and "\\n" in seen:
        text = _JSON_SEAM.sub("\n", text)
        for escaped, plain in _JSON_ESCAPES:
            text = text.replace(escaped, plain)
    return text


# Each is a pure function of its strings, remembered in the running compaction's cache
# (compaction/cache.py): a re-run of the same session replays the facts instead of reading again.


def user_facts(text: str, words: str) -> UserFacts:
    return remembered(
        ("user", text, words), len(text) + len(words), lambda: _user_facts(text, words)
    )


def prose_facts(text: str) -> ProseFacts:
    return remembered(("assistant text", text), len(text), lambda: _prose_facts(text))


def notice_facts(text: str) -> NoticeFacts:
    return remembered(("notice", text), len(text), lambda: _notice_facts(text))


def call_facts(name: str, raw: str, output: str | None, one_liner: str | None) -> CallFacts:
    weight = len(raw) + len(output or "") + len(one_liner or "")
    return remembered(
        ("tool call", name, raw, output, one_liner),
        weight,
        lambda: _call_facts(name, raw, output, one_liner),
    )


def call_definitions(raw: str) -> tuple[tuple[str, str], ...]:
    """(path, what it defines) for the texts a call with these arguments wrote (definitions.py).

    Apart from call_facts because a file's line lists only its first few definitions: once
    they are known, reading a later write's signatures changes nothing, and in a long session
    most writes go to files already full (at 5,000 generated messages, 231 of 364)."""
    return remembered(("definitions", raw), len(raw), lambda: definitions(parse_arguments(raw)))


def output_identifiers(output: str) -> Identifiers:
    """Identifiers mined from a whole tool output (only the newest outputs are mined)."""
    return remembered(
        ("output identifiers", output), len(output), lambda: _identifiers(output, prose=False)
    )
