"""The Antigravity importer: every step of a trajectory read in order, into a Conversation
with its import report, metadata and the checkpoints it recorded."""

from __future__ import annotations

from typing import Any

from compaction.formats.antigravity.steps import (
    ACTION_TOOLS,
    BRAIN,
    FAILED,
    MODEL_SETTING,
    NAME,
    PLANNER,
    REQUEST_END,
    SOURCES,
    SYSTEM_STEPS,
    TRUNCATED,
    USER_INPUT,
    decode_args,
    is_step,
    step_text,
    title_of,
)
from compaction.formats.common import (
    as_text,
    line_list,
    make_call,
    mark_injected,
    split_user_words,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.source import Document
from compaction.messages import Message


class AntigravityImport:
    def __init__(self, doc: Document) -> None:
        self.messages: list[Message] = []  # without tool results; those are placed at the end
        self.results: dict[str, Message] = {}
        self.open: list[tuple[str, str]] = []  # (call id, tool name) awaiting a result, in order
        self.metadata: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.report = ImportReport(records=len(doc.records))
        self.compactions: list[RecordedCompaction] = []
        self.title: str | None = None
        self.user_actions: list[int] = []
        self.orphans: list[int] = []
        self.unknown: dict[str, list[int]] = {}
        self.failed: list[int] = []
        self.indices: list[int] = []
        self.truncated_args: list[int] = []
        self.planner_indices: set[Any] = set()
        self.truncated_content: list[int] = []

    def used(self) -> None:
        self.report.imported += 1

    def step(self, line: int, step: dict[str, Any]) -> None:
        kind = step.get("type")
        if not is_step(step) or not isinstance(kind, str):
            self.warnings.append(
                f"line {line}: skipped a malformed step (needs `step_index`, a `source` of "
                f"{'/'.join(SOURCES)} and a string `type`)"
            )
            self.report.skip("malformed", "not a {step_index, source, type} step", line)
            return
        if isinstance(step.get("step_index"), int):
            self.indices.append(step["step_index"])
        for key in ("model", "generator_model"):
            if isinstance(step.get(key), str):
                self.metadata.setdefault("model", step[key])
        if "start_time" not in self.metadata and step.get("created_at"):
            self.metadata["start_time"] = step["created_at"]
        text = step_text(step)
        if TRUNCATED.search(text):
            self.truncated_content.append(line)
        setting = MODEL_SETTING.search(text) if kind == USER_INPUT else None
        if setting:
            self.metadata["model"] = setting.group(1)
        match = BRAIN.search(text)
        if match and "conversation_id" not in self.metadata:
            self.metadata["conversation_id"] = match.group(1)
        if kind == USER_INPUT:
            self.user_input(line, text)
        elif kind == PLANNER:
            self.planner(line, step, text)
        elif kind in SYSTEM_STEPS:
            self.system(line, kind, text)
        elif kind in ACTION_TOOLS or self.open or step.get("source") == "USER_EXPLICIT":
            self.action(line, step, kind, text)
        else:
            self.unknown.setdefault(kind, []).append(line)
            if text:
                role = "system" if step.get("source") == "SYSTEM" else "assistant"
                self.close_calls()
                self.messages.append({"role": role, "content": text})
                self.used()
            else:
                self.report.skip(kind, "step type this importer does not know, no content", line)

    def close_calls(self) -> None:
        self.open = []

    def user_input(self, line: int, text: str) -> None:
        if not text:
            self.report.skip(USER_INPUT, "empty prompt", line)
            return
        self.close_calls()
        if self.title is None:
            self.title = title_of(text)
        # The prompt is `<USER_REQUEST>` (the user's words) followed by the IDE's own blocks
        # (`<ADDITIONAL_METADATA>`: the local time; `<USER_SETTINGS_CHANGE>`): those become a
        # message of their own, marked as context, so the request stays the user's alone.
        end = text.find(REQUEST_END)
        if text.lstrip().startswith("<USER_REQUEST>") and end >= 0:
            self.messages.extend(split_user_words(text, 0, end + len(REQUEST_END), "context"))
        else:
            self.messages.append({"role": "user", "content": text})
        self.used()

    def planner(self, line: int, step: dict[str, Any], text: str) -> None:
        self.close_calls()
        message: Message = {"role": "assistant", "content": text}
        thinking = as_text(step.get("thinking"))
        if thinking:
            message["reasoning"] = thinking
        raw_calls = step.get("tool_calls")
        if raw_calls is not None and not isinstance(raw_calls, list):
            self.warnings.append(f"line {line}: `tool_calls` is not a list; ignored")
            raw_calls = []
        calls = []
        index = step.get("step_index")
        if not isinstance(index, int) or index in self.planner_indices:
            index = f"line{line}"  # ids must be unique even when step indices are not
        self.planner_indices.add(index)
        for position, raw in enumerate(raw_calls or []):
            if not isinstance(raw, dict) or not raw.get("name"):
                self.warnings.append(f"line {line}: tool_calls[{position}] has no name; ignored")
                continue
            call_id = f"antigravity_{index}_{position}"
            name = str(raw["name"])
            calls.append(
                make_call(
                    call_id,
                    name,
                    decode_args(raw.get("args"), line, self.warnings, self.truncated_args),
                )
            )
            self.open.append((call_id, name))
        if calls:
            message["tool_calls"] = calls
            message["content"] = text or None
        elif not text and "reasoning" not in message:
            self.report.skip(PLANNER, "empty response (no text, thinking or calls)", line)
            return
        self.messages.append(message)
        self.used()

    def action(self, line: int, step: dict[str, Any], kind: str, text: str) -> None:
        if kind not in ACTION_TOOLS:
            self.unknown.setdefault(kind, []).append(line)
        if str(step.get("status") or "").upper() in FAILED or step.get("error"):
            self.failed.append(line)
        fits = ACTION_TOOLS.get(kind) or ()
        by_user = step.get("source") == "USER_EXPLICIT"
        if self.open and (not by_user or any(c[1] in fits for c in self.open)):
            # A user-sourced step answers an open call only when it fits the call's tool (the
            # user approved the model's command); otherwise it is the user's own action.
            chosen = next((c for c in self.open if c[1] in fits), self.open[0])
            self.open.remove(chosen)
            self.results[chosen[0]] = tool_message(chosen[0], text)
            self.used()
            return
        if by_user:
            # An action the user ran (a command, a file opened): the model is shown its output.
            self.user_actions.append(line)
            self.messages.append({"role": "user", "content": text})
            self.used()
            return
        # A result with no call before it (the response step is missing from the export).
        self.orphans.append(line)
        call_id = f"antigravity_line{line}_result"
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [make_call(call_id, kind.lower(), {})],
            }
        )
        self.results[call_id] = tool_message(call_id, text)
        self.used()

    def system(self, line: int, kind: str, text: str) -> None:
        role = SYSTEM_STEPS[kind]
        if not text:
            self.report.skip(kind, "system marker without content", line)
        elif role == "ephemeral":
            self.report.skip(
                kind, "ephemeral: shown to the model for one call, not kept in its history", line
            )
        elif role == "error":
            self.warnings.append(f"line {line}: {kind}: {text[:200]}")
            self.report.skip(kind, "error shown in the UI (see warnings)", line)
        elif self.open:
            # Between a response's calls and their results: keeping it would split the turn.
            self.warnings.append(
                f"line {line}: a {kind} step between tool calls and their results; left out"
            )
            self.report.skip(kind, "falls between calls and their results", line)
        elif role == "checkpoint":
            self.compactions.append(
                RecordedCompaction(position=len(self.messages), agent=NAME, summary=text, line=line)
            )
            # The checkpoint's summary of the earlier steps: the IDE's handoff, not the user.
            self.messages.append(mark_injected({"role": "user", "content": text}, "compaction"))
            self.used()
        else:
            self.messages.append({"role": "system", "content": text})
            self.used()

    def finish(self) -> Conversation:
        messages: list[Message] = []
        unanswered: list[str] = []
        positions: dict[int, int] = {}
        for position, message in enumerate(self.messages):
            positions[position] = len(messages)
            messages.append(message)
            for call in message.get("tool_calls") or []:
                result = self.results.get(call["id"])
                if result is not None:
                    messages.append(result)
                else:
                    unanswered.append(call["id"])
        for compaction in self.compactions:
            compaction.position = positions[compaction.position]
        if unanswered:
            self.warnings.append(
                f"{len(unanswered)} tool call(s) have no result step after them: "
                f"{', '.join(unanswered[:8])}"
            )
        missing = (
            sorted(set(range(min(self.indices), max(self.indices) + 1)) - set(self.indices))
            if self.indices
            else []
        )
        if missing:
            shown = ", ".join(str(index) for index in missing[:8])
            self.warnings.append(
                f"step_index {shown}{' …' if len(missing) > 8 else ''}: {len(missing)} step(s) "
                "missing from the export (numbering has gaps)"
            )
        if self.truncated_args:
            lines = sorted(set(self.truncated_args))
            self.warnings.append(
                f"{line_list(lines)}: the export truncated {len(self.truncated_args)} tool-call "
                "argument(s) (`<truncated N bytes>`); the part it kept is imported"
            )
        if self.truncated_content:
            self.warnings.append(
                f"{line_list(self.truncated_content)}: the export left out part of the step's "
                "text (`<truncated N bytes>`)"
            )
        if self.failed:
            self.warnings.append(f"{line_list(self.failed)}: failed action step(s)")
        if self.user_actions:
            self.warnings.append(
                f"{line_list(self.user_actions)}: actions the user ran (no model call); their "
                "output is kept as user messages"
            )
        if self.orphans:
            self.warnings.append(
                f"{line_list(self.orphans)}: result step(s) with no PLANNER_RESPONSE call before "
                "them; a call named after the step type was added so the result is kept"
            )
        for kind, lines in self.unknown.items():
            self.warnings.append(
                f"{line_list(lines)}: {len(lines)} step(s) of type {kind!r}, which this importer "
                "does not know; imported by their position"
            )
        return Conversation(
            messages=messages,
            format=NAME,
            title=self.title,
            metadata=self.metadata,
            warnings=self.warnings,
            compactions=self.compactions,
            report=self.report,
        )
