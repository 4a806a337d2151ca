"""One linear pass over the turns to be summarised, collecting what each section needs.

The pass reads the middle as it was *before* Phase 1 (the request's `raw_turns`), because the
exact error lines, paths and identifiers live in the full tool outputs that Phase 1 reduced to one
line. Each message is looked at once and each tool output is scanned by the fast literal-first
scanners of `compaction.probe_patterns`, so a 5,000-message session stays well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from compaction.messages import (
    Message,
    call_arguments,
    call_name,
    content_text,
    is_summary_message,
    parse_arguments,
    tool_calls,
)
from compaction.probe_patterns import collapse, cut, error_lines, identifiers
from compaction.probes import _command_text as command_text
from compaction.probes import _readable as readable
from compaction.probes import _written_paths as written_paths
from compaction.summarizers import extractive_text as tx
from compaction.summarizers.extractive_findings import (
    ERROR_LINES_PER_FAILURE,
    Action,
    FileRecord,
    Findings,
    command_key,
    failure_lines,
    identifier_kind,
    window,
)
from compaction.summarizers.extractive_state import StateTracker
from compaction.tool_summaries import (
    DUPLICATE_MARKER,
    STUB_RESULT,
    exit_code,
    is_already_pruned,
    summarize_tool_output,
    tool_kind,
)

COMMAND_MAX_CHARS = 80
#: Identifiers are mined from at most this much tool output, newest first: most of a long
#: session's text is tool output, and the identifiers that matter next are the recent ones.
IDENTIFIER_SCAN_CHARS = 300_000
IDENTIFIER_WINDOW_CHARS = 1_500
SKIP_LINES = (DUPLICATE_MARKER, STUB_RESULT)
TODO_TOOLS = ("TodoWrite", "todo_write", "update_plan", "UpdatePlan")
_FAILURE_IN_OUTPUT = re.compile(
    r"^(?:Traceback \(most recent call last\)|\w{0,60}(?:Error|Exception): |error(?:\[\w+\])?: "
    r"|fatal: )",
    re.M,
)
_APPLIED_EDIT = re.compile(r"^Applied edit to (\S+)", re.M)
_COMMIT_NOTICE = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+)$", re.M)
_RM = re.compile(r"^\s*(?:sudo\s+)?(?:rm|git rm)\s+(.+)$")
_PATH_ARGUMENTS = ("path", "file_path", "filename", "absolute_path", "target_file", "notebook_path")


def _kind(name: str, arguments: dict[str, Any]) -> str | None:
    kind = tool_kind(name)
    if kind == "editor":
        command = arguments.get("command")
        return "read_file" if command == "view" else "patch"
    return kind


def _path_argument(arguments: dict[str, Any]) -> str | None:
    for key in _PATH_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _failed(kind: str | None, output: str, code: int | None) -> bool:
    if code is not None:
        return code != 0
    head = output[:300].lstrip().lower()
    if head.startswith(("<tool_use_error>", "error", "fatal", "traceback")):
        return True
    return kind == "terminal" and _FAILURE_IN_OUTPUT.search(output) is not None


class _Scanner:
    def __init__(self) -> None:
        self.findings = Findings()
        self.state = StateTracker()
        self.open_questions: list[tuple[int, str]] = []
        self.last_answer: str | None = None
        self.answered = False  # whether last_answer is a real answer, not an announcement
        self.unanswered_request: tuple[int, str] | None = None
        self.failures: dict[str, int] = {}  # key -> position in actions of the latest failure
        self.last_intent: tuple[int, str] | None = None
        self.identifier_outputs: set[int] = set()  # tool messages whose identifiers are mined
        self.todo_line: str | None = None
        self.one_liners: dict[str, str] = {}  # tool_call_id -> Phase 1's line
        self.line_cache: dict[tuple[str, str, str], str] = {}  # duplicate outputs: one summary

    # -- files -------------------------------------------------------------------------------
    def touch(self, path: str, verb: str, index: int) -> None:
        path = path.strip().strip("'\"`")
        if not path or len(path) > 300:
            return
        record = self.findings.files.get(path)
        if record is None:
            self.findings.files[path] = FileRecord(path, [verb], index)
            return
        if verb not in record.verbs:
            record.verbs.append(verb)
        record.last_index = index

    # -- messages ----------------------------------------------------------------------------
    def user(self, index: int, message: Message) -> None:
        text = tx.user_text(message)
        if not text.strip():
            return
        findings = self.findings
        if findings.first_user is None:
            findings.first_user = text
        self._close_questions()
        for sentence in tx.constraint_sentences(text):
            findings.constraints.append((index, sentence))
        observation = len(text) > 3_000  # tool output pasted as a user row (old SWE-agent)
        if not observation:
            questions = [s for s in tx.sentences(text) if tx.is_question(s)]
            self.open_questions = [(index, q) for q in questions[:3]]
            self.unanswered_request = None if questions else (index, tx.first_sentences(text, 1))
            for path in tx.mentioned_paths(text):
                self.touch(path, "mentioned", index)
        for line in error_lines(readable(text))[-ERROR_LINES_PER_FAILURE:]:
            findings.blocked.append((index, f"reported in a user turn: `{line}`"))
        self._identifiers(index, text, prose=not observation)

    def notice(self, index: int, text: str) -> None:
        """A system row inside the turns: agents such as Aider report edits and commits there."""
        for path in _APPLIED_EDIT.findall(text):
            self.touch(path, "edited", index)
            self.state.modified(path)
        for commit, subject in _COMMIT_NOTICE.findall(text):
            line = f"[notice] commit {commit} {cut(subject, 100)}"
            self.findings.actions.append(Action(index, line, False, False, None, kind="notice"))
            self.state.commit = f"{commit} {cut(subject, 100)}"
        for path in tx.mentioned_paths(text):
            self.touch(path, "mentioned", index)
        self._identifiers(index, window(text), prose=True)

    def assistant(self, index: int, message: Message, results: dict[str, tuple[int, str]]) -> None:
        text = content_text(message)
        if text.strip():
            # The answer is the first reply that is not just an announcement ("Let me check").
            opening = tx.sentences(text)[:1]
            is_answer = bool(opening) and not tx.is_intent(opening[0])
            if self.last_answer is None or (is_answer and not self.answered):
                self.last_answer = text
                self.answered = is_answer
            self.unanswered_request = None
            self.findings.assistant_texts.append(text[:2_000])
            for sentence in tx.sentences(text):
                if tx.is_decision(sentence):
                    self.findings.decisions.append((index, sentence))
                if tx.is_intent(sentence):
                    self.last_intent = (index, sentence)
                if tx.is_next_step(sentence):
                    self.findings.remaining.append(sentence)
            self.findings.remaining.extend(tx.open_checkboxes(text))
            for path in tx.mentioned_paths(text):
                self.touch(path, "mentioned", index)
            self._identifiers(index, text, prose=True)
        calls = [call for call in tool_calls(message) if isinstance(call, dict)]
        if calls:
            self.unanswered_request = None  # acted on: what became of it is in the actions
        for call in calls:
            self.call(index, call, results)

    def call(self, index: int, call: dict[str, Any], results: dict[str, tuple[int, str]]) -> None:
        name = call_name(call) or "unknown"
        raw = call_arguments(call)
        arguments = parse_arguments(raw)
        kind = _kind(name, arguments)
        result = results.get(str(call.get("id")))
        output = result[1] if result is not None else ""
        command: str | None = None
        shown = arguments
        if kind == "terminal":
            command = command_text(arguments).strip()
            shown = {"command": command}
        self._todos(name, arguments)
        self._files(index, name, kind, arguments, raw, command, output)
        self._identifiers(index, window(raw, IDENTIFIER_WINDOW_CHARS), prose=True)
        if result is None:
            line = summarize_tool_output(name, shown, "").split(" (", 1)[0]
            line = line.split(" -> ", 1)[0] + " (no result yet)"
            action = Action(index, line, False, True, None, command=command, kind=kind)
            self.findings.actions.append(action)
            self.findings.in_progress.append(f"Waiting for {line}")
            return
        seen = window(output)
        # Most outputs never mention an exit code; a substring test spares them the regex.
        code = exit_code(seen) if "xit" in seen or "XIT" in seen else None
        failed = _failed(kind, seen, code)
        line = self.one_liners.get(str(call.get("id"))) or self._line(name, shown, output)
        if code is None and " -> exit ?" in line:  # say what the output showed instead of "?"
            line = line.replace(" -> exit ?", " -> failed" if failed else " -> no error seen", 1)
        if name in TODO_TOOLS:
            line = self.todo_line or line
        key = command_key(command) if command else f"{kind or name}:{_path_argument(arguments)}"
        action = Action(index, line, failed, False, key, command=command, kind=kind)
        if failed:
            action.errors = failure_lines(readable(seen))
            self.failures[key] = len(self.findings.actions)
        else:
            self.findings.succeeded_keys.add(key)
            self.failures.pop(key, None)
        self.findings.actions.append(action)
        if command:
            self.state.command(index, command, seen, code, failed)
        if result[0] in self.identifier_outputs:
            self._identifiers(result[0], output, prose=False)

    def _line(self, name: str, arguments: dict[str, Any], output: str) -> str:
        key = (name, repr(sorted(arguments.items())), output)
        line = self.line_cache.get(key)
        if line is None:
            line = summarize_tool_output(name, arguments, output)
            self.line_cache[key] = line
        return line

    def _files(
        self,
        index: int,
        name: str,
        kind: str | None,
        arguments: dict[str, Any],
        raw: str,
        command: str | None,
        output: str,
    ) -> None:
        path = _path_argument(arguments)
        if kind == "read_file" and path:
            self.touch(path, "read", index)
        elif kind == "search_files":
            where = arguments.get("path") or arguments.get("dir")
            if isinstance(where, str) and where.strip():
                self.touch(where, "searched", index)
        written = written_paths(name, arguments, raw)
        creating = tool_kind(name) == "editor" and arguments.get("command") == "create"
        for path_written in written:
            if kind == "write_file" or creating:
                verb = "created" if "created" in output[:200].lower() else "written"
            elif kind == "terminal":
                verb = "written"
            else:
                verb = "edited"
            self.touch(path_written, verb, index)
            self.state.modified(path_written)
        if command:
            first = command.split("\n", 1)[0]
            handled = set(written)
            for segment in re.split(r"&&|;", first):
                removed = _RM.match(segment)
                if removed:
                    for target in removed.group(1).split():
                        if not target.startswith("-"):
                            target = target.strip("'\"")
                            handled.add(target)
                            self.touch(target, "deleted", index)
                            self.state.modified(target)
            for mentioned in tx.mentioned_paths(first):
                if "/" in mentioned and mentioned not in handled:
                    self.touch(mentioned, "used in a command", index)

    def _todos(self, name: str, arguments: dict[str, Any]) -> None:
        if name not in TODO_TOOLS:
            return
        entries = arguments.get("todos")
        if entries is None:
            entries = arguments.get("plan")
        if not isinstance(entries, list):
            return
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
        self.todo_line = f"[{name}] plan updated: {done} of {done + len(pending)} steps done" + (
            f"; now: {current[0].rsplit(' (', 1)[0]}" if current else ""
        )
        # The latest list supersedes earlier ones: it is the agent's current plan.
        self.findings.remaining = pending
        self.findings.todo_list_seen = True

    def _identifiers(self, index: int, text: str, prose: bool) -> None:
        for value in identifiers(readable(text) if not prose else text):
            self.findings.identifiers.append((index, identifier_kind(value), value, prose))

    def _close_questions(self) -> None:
        """A user turn ends the previous one: its questions are answered if the assistant wrote
        anything after them (the last text is the answer), else they stay pending."""
        for index, question in self.open_questions:
            if self.last_answer is not None:
                answer = tx.first_sentences(self.last_answer, 1, 240)
                self.findings.resolved.append((index, question, answer))
            else:
                self.findings.pending.append((index, question))
        self.open_questions = []
        self.last_answer = None
        self.answered = False

    def finish(self) -> Findings:
        findings = self.findings
        self._close_questions()
        if self.unanswered_request is not None:
            findings.pending.append(self.unanswered_request)
        for position in sorted(self.failures.values()):
            action = findings.actions[position]
            quoted = "; ".join(f"`{line}`" for line in action.errors) or "no error line"
            subject = (
                f"`{cut(action.command, COMMAND_MAX_CHARS)}`"
                if action.command
                else action.line.split(" — ", 1)[0]
            )
            findings.blocked.append((action.index, f"{subject} failed: {quoted}"))
        if self.last_intent is not None and not findings.in_progress:
            intent_index, sentence = self.last_intent
            later_results = any(a.index >= intent_index and not a.pending for a in findings.actions)
            if not later_results:
                findings.in_progress.append(sentence)
        findings.state = self.state.render(findings.files)
        return findings


def scan(turns: Sequence[Message], pruned: Sequence[Message] | None = None) -> Findings:
    """Collect the findings of `turns` (never modified) in one pass.

    `pruned` is the same middle after Phase 1: its one-line summaries of tool outputs are reused
    as Completed Actions lines rather than computed again from the full outputs.
    """
    results: dict[str, tuple[int, str]] = {}
    for index, message in enumerate(turns):
        if message.get("role") == "tool":
            results[str(message.get("tool_call_id"))] = (index, content_text(message))
    scanner = _Scanner()
    allowance = IDENTIFIER_SCAN_CHARS
    for index, text in sorted(results.values(), reverse=True):
        if allowance <= 0:
            break
        scanner.identifier_outputs.add(index)
        allowance -= len(text)
    if pruned is not None and len(pruned) == len(turns):
        for message in pruned:
            content = message.get("content")
            if (
                message.get("role") == "tool"
                and isinstance(content, str)
                and is_already_pruned(content)
                and content not in SKIP_LINES
            ):
                scanner.one_liners[str(message.get("tool_call_id"))] = content
    for index, message in enumerate(turns):
        role = message.get("role")
        if role == "user" and not is_summary_message(message):
            scanner.user(index, message)
        elif role == "assistant":
            scanner.assistant(index, message, results)
        elif role in ("system", "developer"):
            scanner.notice(index, content_text(message))
    return scanner.finish()
