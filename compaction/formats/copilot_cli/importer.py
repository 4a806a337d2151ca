"""The Copilot CLI importer: every event of a session log read in order, into a Conversation
with its import report, metadata and the compactions the CLI recorded."""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    join_text,
    line_list,
    make_call,
    split_user_words,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.copilot_cli.events import (
    NAME,
    NOT_CONVERSATION,
    TRIGGERS,
    arguments_of,
    image_parts,
    result_text,
    title_of,
)
from compaction.formats.source import Document
from compaction.messages import Message


class CopilotImport:
    """The state of one import: messages without their results, results by call id."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.messages: list[Message] = []
        self.results: dict[str, Message] = {}
        self.calls: dict[str, Message] = {}  # call id -> the assistant message that made it
        self.metadata: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.report = ImportReport(records=len(doc.records))
        self.compactions: list[RecordedCompaction] = []
        self.system_prompt: str | None = None
        self.turn_assistant: Message | None = None  # the latest assistant message of the turn
        self.pending_reasoning: list[str] = []
        self.encrypted: list[int] = []
        # (position in self.messages, cwd, origin) of each working directory the log names.
        self.directories: list[tuple[int, str, str]] = []
        self.nudges: list[int] = []
        self.unknown: dict[str, list[int]] = {}
        self.subagent: list[int] = []
        self.title: str | None = None

    def skip(self, kind: str, reason: str, line: int) -> None:
        self.report.skip(kind, reason, line)

    def used(self) -> None:
        self.report.imported += 1

    # -- events -----------------------------------------------------------------------------

    def event(self, line: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        data = record.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.warnings.append(
                f"line {line}: skipped a malformed event (no string `type` or no `data` object)"
            )
            self.skip("malformed", "not a {type, data} event", line)
            return
        if record.get("agentId") or data.get("parentToolCallId"):
            self.subagent.append(line)
            self.skip(
                f"{kind} (sub-agent)",
                "a sub-agent's own history; the main model sees the spawning tool's result",
                line,
            )
            return
        handler = {
            "session.start": self.session_start,
            "system.message": self.system_message,
            "user.message": self.user_message,
            "assistant.message": self.assistant_message,
            "assistant.reasoning": self.assistant_reasoning,
            "tool.execution_start": self.tool_start,
            "tool.user_requested": self.tool_start,
            "tool.execution_complete": self.tool_complete,
            "session.compaction_complete": self.compaction,
        }.get(kind)
        if handler is not None:
            handler(line, data)
            return
        self.note_metadata(kind, data, line)
        if kind == "assistant.turn_start":
            self.turn_assistant = None
        if kind == "session.truncation":
            removed = data.get("messagesRemovedDuringTruncation")
            self.warnings.append(
                f"line {line}: Copilot truncated the model's context here ({removed} message(s) "
                "removed); the import keeps the full history"
            )
            self.skip(kind, "context truncation marker (see warnings)", line)
        elif kind == "session.error":
            self.warnings.append(
                f"line {line}: session error ({data.get('errorType')}): {data.get('message')}"
            )
            self.skip(kind, "error shown in the UI (see warnings)", line)
        elif kind in NOT_CONVERSATION:
            self.skip(kind, NOT_CONVERSATION[kind], line)
        else:
            self.unknown.setdefault(kind, []).append(line)
            self.skip(kind, "event type this importer does not know; not imported", line)

    def note_metadata(self, kind: str, data: dict[str, Any], line: int) -> None:
        if kind == "session.model_change" and isinstance(data.get("newModel"), str):
            self.metadata["model"] = data["newModel"]
            models = self.metadata.setdefault("models", [])
            if data["newModel"] not in models:
                models.append(data["newModel"])
            if data.get("reasoningEffort"):
                self.metadata["reasoning_effort"] = data["reasoningEffort"]
        elif kind == "session.shutdown":
            for key in ("shutdownType", "currentModel", "totalPremiumRequests", "codeChanges"):
                if key in data:
                    self.metadata[key] = data[key]
        elif kind == "session.title_changed" and isinstance(data.get("title"), str):
            self.metadata["session_title"] = data["title"]
        elif kind == "session.context_changed" and isinstance(data.get("cwd"), str):
            self.metadata["cwd"] = data["cwd"]
            where = f"`cwd` of the Copilot CLI session.context_changed event on line {line}"
            self.directories.append((len(self.messages), data["cwd"], where))

    def session_start(self, line: int, data: dict[str, Any]) -> None:
        for key, name in (
            ("sessionId", "session_id"),
            ("version", "format_version"),
            ("producer", "producer"),
            ("copilotVersion", "version"),
            ("startTime", "start_time"),
        ):
            if key in data:
                self.metadata.setdefault(name, data[key])
        context = data.get("context")
        if isinstance(context, dict):
            for key in ("cwd", "gitRoot", "branch", "repository", "headCommit"):
                if key in context:
                    self.metadata.setdefault("git_root" if key == "gitRoot" else key, context[key])
            if isinstance(context.get("cwd"), str):
                where = f"`context.cwd` of the Copilot CLI session.start event on line {line}"
                self.directories.append((len(self.messages), context["cwd"], where))
        self.skip("session.start", "session metadata (recorded in metadata)", line)

    def system_message(self, line: int, data: dict[str, Any]) -> None:
        text = as_text(data.get("content"))
        if not text:
            self.skip("system.message", "empty system message", line)
            return
        if text == self.system_prompt:
            self.skip("system.message", "repeats the system prompt already imported", line)
            return
        if self.system_prompt is not None or self.messages:
            self.warnings.append(
                f"line {line}: the system prompt changed mid-session; the new one is kept as a "
                "system message at this point"
            )
        self.system_prompt = text
        self.messages.append({"role": "system", "content": text})
        self.used()

    def user_message(self, line: int, data: dict[str, Any]) -> None:
        raw = data.get("content")
        typed = raw if isinstance(raw, str) else ""
        sent = data.get("transformedContent")
        text = sent if isinstance(sent, str) and sent else typed
        images = image_parts(data.get("attachments"))
        if not text and not images:
            self.skip("user.message", "empty message", line)
            return
        self.turn_assistant = None
        if not typed.strip() and not images:
            # Text the CLI wrote itself (autopilot's "you have not yet marked the task as
            # complete"), sent in the user turn: a harness instruction, not a user request.
            self.nudges.append(line)
            self.messages.append({"role": "system", "content": text})
            self.used()
            return
        if self.title is None:
            self.title = title_of(typed)
        # `transformedContent` wraps what the user typed in the CLI's own text (the current
        # time before it, `<reminder>` blocks after it): the typed words become a message of
        # their own, the CLI's text around them messages marked as context.
        at = text.find(typed.strip()) if typed.strip() and text != typed else -1
        if at >= 0:
            self.messages.extend(
                split_user_words(text, at, at + len(typed.strip()), "context", images)
            )
            self.used()
            return
        content: Any = text
        if images:
            content = [{"type": "text", "text": text}, *images] if text else images
        self.messages.append({"role": "user", "content": content})
        self.used()

    def assistant_message(self, line: int, data: dict[str, Any]) -> None:
        message: Message = {"role": "assistant", "content": as_text(data.get("content"))}
        reasoning = [*self.pending_reasoning]
        self.pending_reasoning = []
        said = data.get("reasoningText")
        if isinstance(said, str) and said and said not in reasoning:
            reasoning.append(said)
        if reasoning:
            message["reasoning"] = join_text(reasoning)
        if data.get("reasoningOpaque") or data.get("encryptedContent"):
            self.encrypted.append(line)
        calls = []
        requests = data.get("toolRequests")
        if requests is not None and not isinstance(requests, list):
            self.warnings.append(f"line {line}: `toolRequests` is not a list; ignored")
            requests = []
        for position, request in enumerate(requests or []):
            if not isinstance(request, dict):
                self.warnings.append(
                    f"line {line}: toolRequests[{position}] is not an object; ignored"
                )
                continue
            call_id = str(request.get("toolCallId") or f"copilot_{line}_{position}")
            if call_id in self.calls:
                self.warnings.append(f"line {line}: call {call_id} requested twice; kept once")
                continue
            name = str(request.get("name") or "unknown")
            calls.append(make_call(call_id, name, arguments_of(request.get("arguments"))))
            self.calls[call_id] = message
        if calls:
            message["tool_calls"] = calls
            message["content"] = message["content"] or None
        if isinstance(data.get("model"), str):
            self.metadata.setdefault("model", data["model"])
        if not message.get("content") and not calls and not reasoning:
            self.skip("assistant.message", "empty message (no text, reasoning or calls)", line)
            return
        self.messages.append(message)
        self.turn_assistant = message
        self.used()

    def assistant_reasoning(self, line: int, data: dict[str, Any]) -> None:
        text = as_text(data.get("content"))
        target = self.turn_assistant
        if not text:
            self.skip("assistant.reasoning", "empty reasoning", line)
        elif target is not None and text in str(target.get("reasoning", "")):
            self.skip("assistant.reasoning", "repeats the message's reasoningText", line)
        elif target is not None:
            target["reasoning"] = join_text([str(target.get("reasoning", "")), text])
            self.used()
        else:
            self.pending_reasoning.append(text)
            self.used()

    def tool_start(self, line: int, data: dict[str, Any]) -> None:
        call_id = data.get("toolCallId")
        if isinstance(call_id, str) and call_id in self.calls:
            self.skip(
                "tool.execution_start", "repeats a call of the assistant.message before it", line
            )
            return
        call_id = str(call_id or f"copilot_{line}")
        call = make_call(
            call_id, str(data.get("toolName") or "unknown"), arguments_of(data.get("arguments"))
        )
        target = self.turn_assistant
        if target is not None and target is self.messages[-1]:
            target.setdefault("tool_calls", []).append(call)
            if target.get("content") == "":
                target["content"] = None
        else:
            target = {"role": "assistant", "content": None, "tool_calls": [call]}
            self.messages.append(target)
            self.turn_assistant = target
            self.warnings.append(
                f"line {line}: tool call {call_id} ({data.get('toolName')}) has no "
                "assistant.message requesting it (user-requested?); kept as an assistant call"
            )
        self.calls[call_id] = target
        self.used()

    def tool_complete(self, line: int, data: dict[str, Any]) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str) or call_id not in self.calls:
            self.warnings.append(
                f"line {line}: a tool result for call {call_id!r}, which no event requested; "
                "left out"
            )
            self.skip("tool.execution_complete", "result of a call that was never made", line)
            return
        if call_id in self.results:
            self.warnings.append(f"line {line}: a second result for call {call_id}; left out")
            self.skip("tool.execution_complete", "second result for the same call", line)
            return
        self.results[call_id] = tool_message(call_id, result_text(data))
        self.used()

    def compaction(self, line: int, data: dict[str, Any]) -> None:
        summary = data.get("summaryContent")
        if not data.get("success", True) or not isinstance(summary, str) or not summary:
            self.skip(
                "session.compaction_complete",
                "compaction without a summary (failed, or the summary was not recorded)",
                line,
            )
            return
        tokens = data.get("preCompactionTokens")
        self.compactions.append(
            RecordedCompaction(
                position=len(self.messages),
                agent=NAME,
                trigger=TRIGGERS.get(str(data.get("trigger")), "unknown"),
                tokens_before=tokens if isinstance(tokens, int) else None,
                tokens_source="agent" if isinstance(tokens, int) else None,
                summary=summary,
                line=line,
            )
        )
        self.messages.append({"role": "user", "content": summary})
        self.turn_assistant = None
        self.used()

    # -- result -----------------------------------------------------------------------------

    def finish(self) -> Conversation:
        messages: list[Message] = []
        unanswered: list[str] = []
        for message in self.messages:
            messages.append(message)
            for call in message.get("tool_calls") or []:
                result = self.results.get(call["id"])
                if result is not None:
                    messages.append(result)
                else:
                    unanswered.append(call["id"])
        # Positions of recorded compactions count the messages before tool results were placed.
        for compaction in self.compactions:
            summary_message = self.messages[compaction.position]
            compaction.position = next(i for i, m in enumerate(messages) if m is summary_message)
        if self.pending_reasoning:
            messages.append(
                {"role": "assistant", "content": "", "reasoning": join_text(self.pending_reasoning)}
            )
        if unanswered:
            self.warnings.append(
                f"{len(unanswered)} tool call(s) have no tool.execution_complete result "
                f"(session cut off?): {', '.join(unanswered[:8])}"
            )
        if self.encrypted:
            self.warnings.append(
                f"{line_list(self.encrypted)}: encrypted reasoning (reasoningOpaque) left out"
            )
        if self.nudges:
            self.warnings.append(
                f"{line_list(self.nudges)}: a user.message with no typed text, only the CLI's "
                "own prompt (autopilot continuation), kept as a system message"
            )
        if self.subagent:
            self.warnings.append(
                f"{line_list(self.subagent)}: {len(self.subagent)} sub-agent event(s) left out "
                "(the sub-agent's own history; the main conversation keeps the result it returned)"
            )
        for kind, lines in self.unknown.items():
            self.warnings.append(
                f"{line_list(lines)}: {len(lines)} {kind!r} event(s) of a type this importer "
                "does not know; not imported"
            )
        conversation = Conversation(
            messages=messages,
            format=NAME,
            title=self.title,
            metadata=self.metadata,
            warnings=self.warnings,
            compactions=self.compactions,
            report=self.report,
        )
        placed = {id(message): index for index, message in enumerate(messages)}
        for position, cwd, origin in self.directories:
            # A position counts the messages before tool results were placed after their calls.
            at = (
                placed.get(id(self.messages[position]), len(messages))
                if position < len(self.messages)
                else len(messages)
            )
            conversation.note_directory(at, cwd, origin)
        return conversation
