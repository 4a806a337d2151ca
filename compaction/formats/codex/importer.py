"""The Codex rollout importer: every record of a rollout read in order, into a Conversation
with its import report, metadata and the compactions Codex recorded."""

from __future__ import annotations

from typing import Any

from compaction.formats.codex.compacted import context_tokens, trigger_of
from compaction.formats.codex.fork import REPLAY, is_forked_subagent, replay_end
from compaction.formats.codex.items import (
    CALL_ITEMS,
    OUTPUT_ITEMS,
    ide_split,
    message_content,
    output_text,
    parts_text,
    payload_of,
    title_of,
    tool_call_of,
)
from compaction.formats.common import join_text, line_list, mark_injected, tool_message
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.source import Document
from compaction.formats.usage import count
from compaction.formats.usage.codex import CodexUsage
from compaction.messages import Message

NAME = "codex"

EVENT_REASONS = {
    "user_message": "UI event: duplicates the user response item",
    "agent_message": "UI event: duplicates the assistant response item",
    "agent_reasoning": "UI event: duplicates the reasoning item",
    "agent_reasoning_raw_content": "UI event: duplicates the reasoning item",
    "token_count": "telemetry: token usage (read as the calls' usage)",
    "exec_command_end": "UI event: duplicates the tool output item",
    "patch_apply_end": "UI event: duplicates the tool output item",
    "web_search_end": "UI event: duplicates the web search item",
    "mcp_tool_call_end": "UI event: duplicates the tool output item",
    "context_compacted": "UI event: the compaction is recorded from the `compacted` record",
    "task_started": "UI event: turn boundary",
    "task_complete": "UI event: turn boundary",
    "turn_aborted": "UI event: turn interrupted (the model-visible notice is a user item)",
    "item_completed": "UI event: duplicates an item (e.g. a plan) already in the conversation",
    "thread_name_updated": "UI event: thread title",
}


class CodexImporter:
    def __init__(self, doc: Document) -> None:
        self.records: list[dict[str, Any]] = doc.records
        self.lines: list[int] = doc.record_lines
        self.messages: list[Message] = []
        self.warnings: list[str] = []
        self.metadata: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.report = ImportReport(records=len(doc.records))
        self.compactions: list[RecordedCompaction] = []
        self.event_lines: dict[str, list[int]] = {}  # for the grouped warnings
        self.encrypted: list[int] = []
        self.pending_reasoning: list[str] = []
        self.call_owner: dict[str, int] = {}  # call_id -> index of its assistant message
        self.answered: set[str] = set()
        self.last_tokens: int | None = None
        self.usage = CodexUsage()
        self.model: str | None = None  # the model of the current turn (turn_context)
        self.call_from = 0  # the first message the next model call can have produced
        self.seen_conversation = False  # a user or assistant message has been imported
        # (position, cwd, origin) of each working directory the rollout names, in order.
        self.directories: list[tuple[int, str, str]] = []

    # -- bookkeeping -------------------------------------------------------------------------

    def imported(self) -> None:
        self.report.imported += 1

    def skip(self, kind: str, reason: str, line: int, group: str | None = None) -> None:
        self.report.skip(kind, reason, line)
        self.event_lines.setdefault(group or kind, []).append(line)

    # -- main loop ---------------------------------------------------------------------------

    def run(self) -> Conversation:
        records = self.records
        first = (
            payload_of(records[0]) if records and records[0].get("type") == "session_meta" else {}
        )
        skip_until = 0
        if first.get("forked_from_id") and not is_forked_subagent(first):
            self.warnings.append(
                f"forked from thread {first['forked_from_id']}: the history the fork copied from "
                "it is part of this conversation and is imported"
            )
        if first and is_forked_subagent(first):
            found = replay_end(records)
            if found is None:
                self.warnings.append(
                    "a forked subagent thread, but where its own work starts after the parent's "
                    "replayed history could not be found: the parent's history is included"
                )
            else:
                skip_until, how = found
                first_line, last_line = self.lines[1], self.lines[skip_until - 1]
                self.warnings.append(
                    f"lines {first_line}-{last_line}: skipped {skip_until - 1} record(s) of the "
                    f"parent thread's history replayed into this forked subagent thread (its own "
                    f"work starts at line {self.lines[skip_until]}, {how})"
                )
        for index, (line, record) in enumerate(zip(self.lines, records, strict=True)):
            if 0 < index < skip_until:
                self.report.skip(
                    REPLAY,
                    "a forked subagent's copy of its parent thread's history (the parent's own "
                    "rollout holds it)",
                    line,
                )
                continue
            self.record(index, line, record)
        self.finish()
        conversation = Conversation(
            messages=self.messages,
            format=NAME,
            title=title_of(self.messages),
            metadata=self.metadata,
            tools=self.tools,
            warnings=self.warnings,
            compactions=self.compactions,
            report=self.report,
            calls=self.usage.calls,
        )
        self.report.usage_notes.extend(self.usage.finish())
        if self.usage.window is not None:
            self.metadata["model_context_window"] = self.usage.window
        for position, cwd, origin in self.directories:
            conversation.note_directory(position, cwd, origin)
        return conversation

    def record(self, index: int, line: int, record: dict[str, Any]) -> None:
        kind = str(record.get("type"))
        payload = payload_of(record)
        if kind == "session_meta":
            self.session_meta(index, line, payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
                self.metadata.setdefault("model", payload["model"])
                models = self.metadata.setdefault("models", [])
                if payload["model"] not in models:
                    models.append(payload["model"])
            if isinstance(payload.get("cwd"), str):
                self.metadata.setdefault("cwd", payload["cwd"])
                where = f"`cwd` of the Codex turn_context on line {line}"
                self.directories.append((len(self.messages), payload["cwd"], where))
            self.report.skip(kind, "per-turn settings (model and cwd kept in metadata)", line)
        elif kind == "event_msg":
            self.event(line, payload, record.get("timestamp"))
        elif kind == "compacted":
            self.compacted(index, line, payload)
        elif kind == "response_item":
            self.item(line, payload)
        else:
            reason = (
                "an early rollout's state marker"
                if kind.startswith("record_type/")
                else "record type with no chat equivalent"
            )
            self.report.skip(kind, reason, line)

    def session_meta(self, index: int, line: int, payload: dict[str, Any]) -> None:
        if index > 0 or self.metadata.get("session_id"):
            if payload.get("id") and payload.get("id") != self.metadata.get("session_id"):
                self.metadata.setdefault("other_sessions", []).append(payload.get("id"))
            self.report.skip("session_meta", "a further session header (metadata only)", line)
            return
        keys = {
            "id": "session_id",
            "cwd": "cwd",
            "cli_version": "cli_version",
            "originator": "originator",
            "model_provider": "model_provider",
            "git": "git",
            "source": "source",
            "forked_from_id": "forked_from_id",
            "agent_nickname": "agent_nickname",
            "agent_role": "agent_role",
            "timestamp": "started",
        }
        for key, name in keys.items():
            if payload.get(key) not in (None, "", {}):
                self.metadata[name] = payload[key]
        if isinstance(payload.get("cwd"), str):
            where = f"`cwd` of the Codex session_meta on line {line}"
            self.directories.append((len(self.messages), payload["cwd"], where))
        for tool in payload.get("dynamic_tools") or []:
            if isinstance(tool, dict) and tool.get("name"):
                self.tools.append(
                    {
                        "type": "function",
                        "function": {
                            "name": str(tool["name"]),
                            "description": str(tool.get("description") or ""),
                            "parameters": tool.get("inputSchema")
                            or tool.get("input_schema")
                            or {"type": "object", "properties": {}},
                        },
                    }
                )
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else instructions
        if isinstance(text, str) and text.strip():
            self.messages.append({"role": "system", "content": text})
            self.imported()
        else:
            self.report.skip("session_meta", "session header (metadata only)", line)

    def event(self, line: int, payload: dict[str, Any], timestamp: Any = None) -> None:
        event = str(payload.get("type"))
        if event == "token_count":
            info = payload.get("info")
            tokens = context_tokens(info)
            if tokens is not None:
                self.last_tokens = tokens
            # The call's message: the first assistant message since the previous call.
            position = next(
                (
                    index
                    for index in range(self.call_from, len(self.messages))
                    if self.messages[index]["role"] == "assistant"
                ),
                len(self.messages),
            )
            before = len(self.usage.calls)
            self.usage.token_count(info, line, timestamp, position, self.model)
            if len(self.usage.calls) > before:
                self.call_from = len(self.messages)
        elif event == "task_started" and count(payload.get("model_context_window")):
            self.usage.window = count(payload.get("model_context_window"))
        reason = EVENT_REASONS.get(event, "UI/telemetry event with no chat equivalent")
        self.skip(f"event_msg/{event}", reason, line, group="event_msg")

    def item(self, line: int, payload: dict[str, Any]) -> None:
        item = str(payload.get("type"))
        if item == "message":
            self.message(payload)
            self.imported()
        elif item == "reasoning":
            summary = parts_text(payload.get("summary"))
            readable = join_text([summary, parts_text(payload.get("content"))])
            if payload.get("encrypted_content"):
                self.encrypted.append(line)
            if readable:
                self.pending_reasoning.append(readable)
                self.imported()
            else:
                self.report.skip(
                    "response_item/reasoning (encrypted)",
                    "encrypted reasoning: not readable, so not text",
                    line,
                )
        elif item in CALL_ITEMS:
            self.call(payload, line)
            self.imported()
        elif item in OUTPUT_ITEMS:
            if self.output(payload):
                self.imported()
            else:
                self.skip(
                    f"response_item/{item}",
                    "a tool output whose call is not in this thread",
                    line,
                )
        elif item == "compaction":
            self.skip(
                "response_item/compaction",
                "Codex's encrypted compaction summary: not readable",
                line,
            )
        else:
            self.skip(f"response_item/{item}", "a history item with no chat equivalent", line)

    def message(self, payload: dict[str, Any]) -> None:
        role = payload.get("role")
        if role in ("developer", "system"):
            text = parts_text(payload.get("content"), "\n\n")
            leading = self.messages[0] if self.messages else None
            if not self.seen_conversation and leading is not None and leading["role"] == "system":
                leading["content"] = join_text([str(leading.get("content") or ""), text])
            else:
                self.messages.append({"role": "system", "content": text})
            return
        role = "assistant" if role == "assistant" else "user"
        self.seen_conversation = True
        message: Message = {"role": role, "content": message_content(payload)}
        wrapped = ide_split(message["content"]) if role == "user" else None
        if wrapped is not None:
            self.messages.extend(wrapped)
            return
        if role == "assistant" and self.pending_reasoning:
            message["reasoning"] = join_text(self.pending_reasoning)
            self.pending_reasoning = []
        self.messages.append(message)

    def call(self, payload: dict[str, Any], line: int) -> None:
        call = tool_call_of(payload, line)
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            last.setdefault("tool_calls", []).append(call)
            if last.get("content") == "":
                last["content"] = None
        else:
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        self.seen_conversation = True
        target = self.messages[-1]
        if self.pending_reasoning:
            target["reasoning"] = join_text([target.get("reasoning", ""), *self.pending_reasoning])
            self.pending_reasoning = []
        self.call_owner[call["id"]] = len(self.messages) - 1

    def output(self, payload: dict[str, Any]) -> bool:
        call_id = str(payload.get("call_id"))
        owner = self.call_owner.get(call_id)
        if owner is None or call_id in self.answered:
            return False
        self.answered.add(call_id)
        result = tool_message(call_id, output_text(payload.get("output")))
        # Results go right after their call's turn (and its earlier results), even when another
        # item came in between in the file.
        at = owner + 1
        while at < len(self.messages) and self.messages[at]["role"] == "tool":
            at += 1
        if at == len(self.messages):
            self.messages.append(result)
            return True
        self.messages.insert(at, result)
        for index, owner_index in self.call_owner.items():
            if owner_index >= at:
                self.call_owner[index] = owner_index + 1
        for compaction in self.compactions:
            if compaction.position >= at:
                compaction.position += 1
        return True

    def compacted(self, index: int, line: int, payload: dict[str, Any]) -> None:
        summary = payload.get("message")
        summary = summary if isinstance(summary, str) and summary.strip() else None
        compaction = RecordedCompaction(
            position=len(self.messages),
            agent="codex",
            trigger=trigger_of(self.records, index),
            tokens_before=self.last_tokens,
            tokens_source="usage" if self.last_tokens is not None else None,
            summary=summary,
            line=line,
        )
        self.compactions.append(compaction)
        if summary is not None:
            # Codex hands the summary to the model as a user turn; it is not the user speaking.
            self.messages.append(mark_injected({"role": "user", "content": summary}, "compaction"))
            self.imported()  # the compaction itself is in `compactions`: no warning
        else:
            self.report.skip(
                "compacted",
                "Codex's own compaction: recorded in compactions (its replacement history "
                "repeats earlier items and its summary is encrypted)",
                line,
            )
            # No warning: the compaction is in `compactions` (its summary encrypted), and what
            # was not imported is in the report's skips.

    def finish(self) -> None:
        if self.pending_reasoning:
            self.messages.append(
                {"role": "assistant", "content": "", "reasoning": join_text(self.pending_reasoning)}
            )
        for kind, lines in self.event_lines.items():
            self.warnings.append(
                f"{line_list(lines)}: skipped {len(lines)} {kind!r} record(s) "
                "(UI events or items with no chat equivalent)"
            )
        if self.encrypted:
            self.warnings.append(
                f"{line_list(self.encrypted)}: encrypted reasoning left out "
                f"({len(self.encrypted)} item(s))"
            )
