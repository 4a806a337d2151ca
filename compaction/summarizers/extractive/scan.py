"""One linear pass over the turns to be summarised, collecting what each section needs.

The pass reads the middle as it was *before* Phase 1 (the request's `raw_turns`), because the
exact error lines, paths and identifiers live in the full tool outputs that Phase 1 reduced to one
line. What each message says is computed once per distinct message and cached
(facts.py); this pass only replays those facts in conversation order through the
running state (open questions, failures, files, Active State), so compacting the same session
again with other budgets costs a small fraction of the first run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction.messages import (
    Message,
    call_arguments,
    call_name,
    content_text,
    is_summary_message,
    is_user_request,
    mark_of,
    tool_calls,
)
from compaction.summarizers.extractive import text as tx
from compaction.summarizers.extractive.facts import (
    Identifiers,
    call_definitions,
    call_facts,
    notice_facts,
    output_identifiers,
    prose_facts,
    user_facts,
)
from compaction.summarizers.extractive.findings import Action, FileRecord, Findings
from compaction.summarizers.extractive.state import StateTracker
from compaction.summary.recorded import RecordedDirectory
from compaction.text.one_liners import DUPLICATE_MARKER, STUB_RESULT, is_already_pruned
from compaction.text.patterns import cut
from compaction.text.user_words import own_words, unwrapped

COMMAND_MAX_CHARS = 80
#: Identifiers are mined from at most this much tool output, newest first: most of a long
#: session's text is tool output, and the identifiers that matter next are the recent ones.
IDENTIFIER_SCAN_CHARS = 300_000
SKIP_LINES = (DUPLICATE_MARKER, STUB_RESULT)
#: What one file's line in Relevant Files lists of what it defines.
MAX_DEFINITIONS_PER_FILE = 8
#: Injected user turns whose error lines are a real failure, not the user's words about one.
_FAILURE_CARRIERS = ("tool-result", "hook", "stop-hook")


class _Scanner:
    def __init__(self) -> None:
        self.findings = Findings()
        self.state = StateTracker()
        self.open_questions: list[tuple[int, str]] = []
        self.last_answer: str | None = None
        self.last_answer_index = -1
        self.answered = False  # whether last_answer is a real answer, not an announcement
        self.unanswered_request: tuple[int, str] | None = None
        # (key, test targets) -> positions in actions of the failures not yet fixed, in order
        self.failures: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        # key -> the targets of its failures not yet fixed: a success reads only its own key's
        # (reading every open failure on every success grew with their product)
        self.open_targets: dict[str, dict[tuple[str, ...], None]] = {}
        self.last_intent: tuple[int, str] | None = None
        self.identifier_outputs: set[int] = set()  # tool messages whose identifiers are mined
        self.todo_line: str | None = None
        self.one_liners: dict[int, str] = {}  # tool message index -> Phase 1's line

    # -- files -------------------------------------------------------------------------------
    def touch(self, path: str, verb: str, index: int) -> None:
        path = path.strip().strip("'\"`")
        if not path or len(path) > 300:
            return
        record = self.findings.files.get(path)
        if record is None:
            self.findings.files[path] = FileRecord(path, [verb], index, [index])
            return
        if verb not in record.verbs:
            record.verbs.append(verb)
        record.last_index = index
        if record.indexes[-1] != index:
            record.indexes.append(index)

    def define(self, path: str, definition: str, index: int) -> None:
        """`path` defines `definition` (a signature, or its doc line in quotes) as of `index`."""
        record = self._definable(path)
        if record is not None:
            record.defines.setdefault(definition, index)

    def _definable(self, path: str) -> FileRecord | None:
        """The record of `path` when it has room for another definition."""
        record = self.findings.files.get(path.strip().strip("'\"`")) if path else None
        if record is not None and len(record.defines) < MAX_DEFINITIONS_PER_FILE:
            return record
        return None

    # -- messages ----------------------------------------------------------------------------
    def user(self, index: int, message: Message, mark: str | None) -> None:
        # The turn's text without the harness's envelope, and what of it the user typed: rules,
        # questions and the request come only from the latter (user_words.py).
        text = unwrapped(content_text(message))
        facts = user_facts(text, own_words(message, mark))
        if facts.blank:
            return
        if not is_user_request(message, mark):
            # Hook output, reminders, command wrappers: not the user's goal, rules or asks
            # (messages.INJECTED_KEY). What they name may still matter: paths and identifiers.
            for path in facts.paths:
                self.touch(path, "mentioned", index)
            self._identifiers(index, facts.identifiers, prose=False)
            if mark in _FAILURE_CARRIERS:
                # A tool's output or a hook's verdict sent as a user turn: its error lines are
                # the failure itself (SWE-agent observations, a failing pre-commit hook).
                self.findings.blocked.extend((index, line, ()) for line in facts.blocked)
            return
        findings = self.findings
        if findings.first_user is None:
            findings.first_user = text
            findings.first_user_index = index
        self._close_questions()
        findings.constraints.extend((index, sentence) for sentence in facts.constraints)
        if not facts.observation:
            self.open_questions = [(index, question) for question in facts.questions]
            self.unanswered_request = None if facts.questions else (index, facts.request)
            for path in facts.paths:
                self.touch(path, "mentioned", index)
        findings.blocked.extend((index, line, ()) for line in facts.blocked)
        self._identifiers(index, facts.identifiers, prose=not facts.observation)

    def notice(self, index: int, text: str) -> None:
        """A system row inside the turns: agents such as Aider report edits and commits there."""
        facts = notice_facts(text)
        for path in facts.edited:
            self.touch(path, "edited", index)
            self.state.modified(path, index)
        for line, commit in facts.commits:
            self.findings.actions.append(Action(index, line, False, False, None, kind="notice"))
            self.state.commit = (commit, (index,))
        for path in facts.paths:
            self.touch(path, "mentioned", index)
        self._identifiers(index, facts.identifiers, prose=True)

    def assistant(self, index: int, message: Message, results: Results) -> None:
        text = content_text(message)
        facts = prose_facts(text)
        if not facts.blank:
            # The answer is the first reply that is not just an announcement ("Let me check").
            if self.last_answer is None or (facts.is_answer and not self.answered):
                self.last_answer = text
                self.last_answer_index = index
                self.answered = facts.is_answer
            self.unanswered_request = None
            findings = self.findings
            findings.assistant_texts.append(text[:2_000])
            findings.decisions.extend((index, sentence) for sentence in facts.decisions)
            if facts.last_intent is not None:
                self.last_intent = (index, facts.last_intent)
            findings.remaining.extend((index, line) for line in facts.remaining)
            for path in facts.paths:
                self.touch(path, "mentioned", index)
            self._identifiers(index, facts.identifiers, prose=True)
        calls = [call for call in tool_calls(message) if isinstance(call, dict)]
        if calls:
            self.unanswered_request = None  # acted on: what became of it is in the actions
        for call in calls:
            self.call(index, call, results)

    def call(self, index: int, call: dict[str, Any], results: Results) -> None:
        result = results.get((index, str(call.get("id"))))
        raw = call_arguments(call)
        facts = call_facts(
            call_name(call),
            raw,
            result[1] if result is not None else None,
            self.one_liners.get(result[0]) if result is not None else None,
        )
        findings = self.findings
        if facts.todo is not None:
            self.todo_line = facts.todo[0]
            # The latest list supersedes earlier ones: it is the agent's current plan.
            findings.remaining = [(index, step) for step in facts.todo[1]]
            findings.todo_list_seen = True
        for path, verb in facts.touches:
            self.touch(path, verb, index)
        first_touched = facts.touches[0][0] if facts.touches else ""
        # The definitions are read only when a file they would go to has room for them.
        if any(self._definable(path or first_touched) for path in facts.defines_in):
            for path, definition in call_definitions(raw):
                self.define(path or first_touched, definition, index)
        for path in facts.modified:
            self.state.modified(path, index)
        self._identifiers(index, facts.identifiers, prose=True)
        if result is None:
            action = Action(
                index, facts.line, False, True, None, command=facts.command, kind=facts.kind
            )
            findings.actions.append(action)
            findings.in_progress.append((index, f"Waiting for {facts.line}"))
            return
        line = (self.todo_line or facts.line) if facts.todo_tool else facts.line
        key = facts.key
        action = Action(
            index,
            line,
            facts.failed,
            False,
            key,
            command=facts.command,
            kind=facts.kind,
            targets=facts.targets,
            subject=facts.touches[0][0] if facts.touches else None,
            exit_code=facts.exit_code,
            result_index=result[0],
        )
        position = len(findings.actions)
        if facts.failed:
            action.errors = list(facts.errors)
            self.failures.setdefault((key, facts.targets), []).append(position)
            self.open_targets.setdefault(key, {})[facts.targets] = None
        else:
            findings.succeeded_keys.add(key)
            self._resolve(key, facts.targets, action, position)
        findings.actions.append(action)
        if facts.effect is not None:
            self.state.apply(facts.effect, action.sources)
        if result[0] in self.identifier_outputs:
            self._identifiers(result[0], output_identifiers(result[1]), prose=False)

    def _resolve(self, key: str, targets: tuple[str, ...], action: Action, position: int) -> None:
        """A success fixes the earlier failures of the same command, test or file: the same
        targets, or the whole suite (no targets) — a narrower run that passes fixes nothing."""
        open_targets = self.open_targets.get(key)
        if not open_targets:
            return
        fixed = [known for known in open_targets if not targets or targets == known]
        for failed_targets in fixed:
            del open_targets[failed_targets]
            # Every failed attempt since is fixed; the latest is the one the success answers.
            for failed_at in self.failures.pop((key, failed_targets)):
                self.findings.actions[failed_at].fixed_by = position
                action.fixes = max(action.fixes or 0, failed_at)

    def _identifiers(self, index: int, found: Identifiers, prose: bool) -> None:
        labels = self.findings.identifier_labels
        for kind, value, label in found:
            self.findings.identifiers.append((index, kind, value, prose))
            if label:
                labels[value] = label  # the latest word on what the value is

    def _close_questions(self) -> None:
        """A user turn ends the previous one: its questions are answered if the assistant wrote
        anything after them (the last text is the answer), else they stay pending."""
        for index, question in self.open_questions:
            if self.last_answer is not None:
                answer = tx.first_sentences(self.last_answer, 1, 240)
                self.findings.resolved.append((index, question, answer, self.last_answer_index))
            else:
                self.findings.pending.append((index, question))
        self.open_questions = []
        self.last_answer = None
        self.answered = False

    def finish(self, recorded: RecordedDirectory | None = None) -> Findings:
        findings = self.findings
        self._close_questions()
        if self.unanswered_request is not None:
            findings.pending.append(self.unanswered_request)
        for position in sorted(positions[-1] for positions in self.failures.values()):
            action = findings.actions[position]
            # The most telling line first, verbatim: the exception, the assertion, the verdict.
            quoted = "; ".join(f"`{line}`" for line in action.errors) or "no error line"
            subject = (
                f"`{cut(action.command, COMMAND_MAX_CHARS)}`"
                if action.command
                else action.line.split(" — ", 1)[0]
            )
            status = f" (exit {action.exit_code})" if action.exit_code else ""
            line = f"{subject} failed{status}, not fixed since: {quoted}"
            findings.blocked.append((action.index, line, action.sources))
        if self.last_intent is not None and not findings.in_progress:
            intent_index, sentence = self.last_intent
            later_results = any(a.index >= intent_index and not a.pending for a in findings.actions)
            if not later_results:
                findings.in_progress.append((intent_index, sentence))
        findings.state = self.state.render(findings.files, recorded)
        return findings


#: (assistant message index, tool-call id) -> (tool message index, its text)
Results = dict[tuple[int, str], tuple[int, str]]


def pair_results(turns: Sequence[Message]) -> Results:
    """Each tool result paired with the latest earlier call that carries its id.

    Keyed by the calling message as well as the id because real agents reuse ids (tau-bench runs
    answer two different calls with the same id): keyed by id alone, the second call would take
    the first one's result and the first call's error would vanish from the summary.
    """
    open_calls: dict[str, int] = {}
    results: Results = {}
    for index, message in enumerate(turns):
        role = message.get("role")
        if role == "assistant":
            for call in tool_calls(message):
                if isinstance(call, dict):
                    open_calls[str(call.get("id"))] = index
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            caller = open_calls.pop(call_id, None)
            if caller is not None:
                results[(caller, call_id)] = (index, content_text(message))
    return results


def scan(
    turns: Sequence[Message],
    pruned: Sequence[Message] | None = None,
    tail_outputs: Sequence[str] = (),
    recorded: RecordedDirectory | None = None,
    marks: Sequence[str | None] | None = None,
) -> Findings:
    """Collect the findings of `turns` (never modified) in one pass.

    `pruned` is the same middle after Phase 1: its one-line summaries of tool outputs are reused
    as Completed Actions lines rather than computed again from the full outputs. `tail_outputs`
    are tail outputs Phase 1 cut to one line: only their identifiers are mined (as the newest),
    within the same character allowance as the middle's outputs.
    """
    results = pair_results(turns)
    scanner = _Scanner()
    allowance = IDENTIFIER_SCAN_CHARS
    # Newest first: the tail's outputs, then the middle's.
    for position in range(len(tail_outputs) - 1, -1, -1):
        if allowance <= 0:
            break
        text = tail_outputs[position]
        allowance -= len(text)
        scanner._identifiers(len(turns) + position, output_identifiers(text), prose=False)
    for index, text in sorted(results.values(), reverse=True):
        if allowance <= 0:
            break
        scanner.identifier_outputs.add(index)
        allowance -= len(text)
    if pruned is not None and len(pruned) == len(turns):
        for index, message in enumerate(pruned):
            content = message.get("content")
            if (
                message.get("role") == "tool"
                and isinstance(content, str)
                and is_already_pruned(content)
                and content not in SKIP_LINES
            ):
                scanner.one_liners[index] = content
    for index, message in enumerate(turns):
        role = message.get("role")
        if role == "user" and not is_summary_message(message):
            mark = marks[index] if marks is not None else mark_of(message, index, None)
            scanner.user(index, message, mark)
        elif role == "assistant":
            scanner.assistant(index, message, results)
        elif role in ("system", "developer"):
            scanner.notice(index, content_text(message))
    return scanner.finish(recorded)
