"""A Qwen Code chat recording's records, on the branch that leads to the last one, as messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compaction.formats.claude_chain import Chain, select_branch
from compaction.formats.common import (
    as_text,
    first_user_text,
    join_text,
    line_list,
    make_call,
    mark_injected,
    tool_message,
)
from compaction.formats.conversation import (
    Conversation,
    ImportReport,
    ModelCall,
    RecordedCompaction,
)
from compaction.formats.qwen_code.records import (
    NAME,
    REFERENCED,
    SKIP_REASONS,
    content_parts_text,
    image_of,
    parts_of,
    record_kind,
    response_text,
    telemetry_call,
    usage_call,
)
from compaction.formats.source import Document
from compaction.messages import Message


@dataclass
class Mapper:
    report: ImportReport
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    usages: list[ModelCall] = field(default_factory=list)  # from assistant usageMetadata
    open_calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    pending: int | None = None  # an assistant message no telemetry event has claimed yet
    pending_input: int | None = None
    compress_typed: bool = False  # a `/compress` since the last user message
    title: str | None = None
    unmatched: list[int] = field(default_factory=list)
    unanswered: list[int] = field(default_factory=list)  # lines where open calls were closed

    def add(self, line: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "user":
            self.user(line, record)
        elif kind == "assistant":
            self.assistant(line, record)
        elif kind == "tool_result":
            self.tool_result(line, record)
        elif kind == "system":
            self.system(line, record)
            return
        else:
            self.report.skip(record_kind(record), "a record type with no chat equivalent", line)
            return
        self.report.imported += 1

    def user(self, line: int, record: dict[str, Any]) -> None:
        texts: list[str] = []
        referenced: list[str] = []
        images: list[dict[str, Any]] = []
        for part in parts_of(record):
            if isinstance(part.get("functionResponse"), dict):
                self.result(line, part["functionResponse"])
            elif isinstance(part.get("text"), str):
                text = part["text"]
                if referenced or text.strip() == REFERENCED:
                    referenced.append(text)
                else:
                    texts.append(text)
            elif (image := image_of(part)) is not None:
                images.append(image)
            else:
                texts.append(as_text(part))
        words = "".join(texts).strip()
        if not words and not images and not referenced:
            self.report.skip("user (empty)", "a user record with no text", line)
            self.report.imported -= 1
            return
        self.close_calls(line)
        content: Any = words
        if images:
            content = [{"type": "text", "text": words}, *images] if words else images
        self.messages.append({"role": "user", "content": content})
        if referenced:
            # The files an @-mention read: sent by the harness beside the user's words.
            text = "".join(referenced).strip()
            self.messages.append(mark_injected({"role": "user", "content": text}, "context"))
        self.compress_typed = False

    def assistant(self, line: int, record: dict[str, Any]) -> None:
        self.close_calls(line)
        model = record.get("model")
        if isinstance(model, str):
            self.metadata.setdefault("model", model)
            models = self.metadata.setdefault("models", [])
            if model not in models:
                models.append(model)
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[dict[str, Any]] = []
        for position, part in enumerate(parts_of(record)):
            call = part.get("functionCall")
            if isinstance(call, dict):
                call_id = str(call.get("id") or f"qwen_{line}_{position}")
                calls.append(make_call(call_id, str(call.get("name")), call.get("args")))
                self.open_calls[call_id] = str(call.get("name"))
            elif isinstance(part.get("text"), str):
                (thoughts if part.get("thought") else texts).append(part["text"])
        message: Message = {"role": "assistant", "content": join_text(texts, "") or None}
        if thoughts:
            message["reasoning"] = join_text(thoughts)
        if calls:
            message["tool_calls"] = calls
        elif message["content"] is None:
            message["content"] = ""
        self.messages.append(message)
        position = len(self.messages) - 1
        usage = usage_call(record, position, line)
        if usage is not None:
            self.usages.append(usage)
        self.pending, self.pending_input = position, usage.input_tokens if usage else None

    def tool_result(self, line: int, record: dict[str, Any]) -> None:
        answered = False
        for part in parts_of(record):
            if isinstance(part.get("functionResponse"), dict):
                answered = self.result(line, part["functionResponse"], record) or answered
        if not answered:
            self.report.imported -= 1

    def result(
        self, line: int, response: dict[str, Any], record: dict[str, Any] | None = None
    ) -> bool:
        call_id = str(response.get("id") or "")
        outcome = record.get("toolCallResult") if record is not None else None
        if not call_id and isinstance(outcome, dict):
            call_id = str(outcome.get("callId") or "")
        if call_id not in self.open_calls:
            self.unmatched.append(line)
            self.report.skip("tool_result (unmatched)", "answers no open call", line)
            return False
        del self.open_calls[call_id]
        self.messages.append(tool_message(call_id, response_text(response)))
        return True

    def system(self, line: int, record: dict[str, Any]) -> None:
        kind = record_kind(record)
        payload = record.get("systemPayload")
        payload = payload if isinstance(payload, dict) else {}
        if kind == "system/ui_telemetry":
            event = payload.get("uiEvent")
            if isinstance(event, dict) and str(event.get("event.name", "")).endswith(
                "api_response"
            ):
                self.telemetry(line, event, record.get("timestamp"))
                self.report.skip(
                    "system/ui_telemetry (api_response)",
                    "a model call's usage (kept in calls)",
                    line,
                )
                return
        elif kind == "system/chat_compression":
            self.compression(line, payload)
            return
        elif kind == "system/slash_command":
            command = str(payload.get("rawCommand") or "").strip()
            if payload.get("phase") == "invocation" and command.split()[:1] == ["/compress"]:
                self.compress_typed = True
        elif kind == "system/custom_title" and isinstance(payload.get("customTitle"), str):
            self.title = payload["customTitle"]
        reason = SKIP_REASONS.get(kind, "session bookkeeping, not conversation")
        self.report.skip(kind, reason, line)

    def close_calls(self, line: int) -> None:
        """Answer the calls a cancelled turn left open before the conversation goes on, so that
        it stays one a provider accepts (said in a warning)."""
        for call_id in self.open_calls:
            self.messages.append(tool_message(call_id, "(no result recorded for this call)"))
        if self.open_calls:
            self.unanswered.append(line)
        self.open_calls = {}

    def telemetry(self, line: int, event: dict[str, Any], when: Any) -> None:
        call = telemetry_call(event, len(self.messages), line, when)
        if self.pending is not None and self.pending_input in (None, call.input_tokens):
            # The call that produced the assistant message recorded just before it.
            call = ModelCall(**{**call.to_dict(), "position": self.pending})
            self.pending = None
        self.calls.append(call)

    def compression(self, line: int, payload: dict[str, Any]) -> None:
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        assert isinstance(info, dict)
        history = payload.get("compressedHistory")
        summary = content_parts_text(history[0]) if isinstance(history, list) and history else ""
        tokens = info.get("originalTokenCount")
        self.close_calls(line)
        self.compactions.append(
            RecordedCompaction(
                position=len(self.messages),
                agent=NAME,
                trigger="manual" if self.compress_typed else "unknown",
                tokens_before=tokens if isinstance(tokens, int) else None,
                summary=summary or None,
                line=line,
            )
        )
        if summary:
            # The context the model went on from: the summary, as the harness sent it.
            self.messages.append(mark_injected({"role": "user", "content": summary}, "compaction"))
        self.report.skip(
            "system/chat_compression",
            "a compaction (listed in compactions; its summary is imported as a user message)",
            line,
        )
        self.warnings.append(
            f"line {line}: Qwen Code compressed the chat here"
            + (f" at {tokens:,} tokens" if isinstance(tokens, int) else "")
            + ("; its summary is imported as a user message" if summary else "")
        )


def load_recording(doc: Document) -> Conversation:
    numbered = list(zip(doc.record_lines, doc.records, strict=True))
    report = ImportReport(records=len(numbered))
    mapper = Mapper(report=report)
    chained = [(line, r) for line, r in numbered if isinstance(r.get("uuid"), str)]
    chain = Chain(chained)
    select_branch(chain, sidechain_file=False)
    for line, record in numbered:
        for key in ("sessionId", "cwd", "version", "gitBranch"):
            if key in record and key not in mapper.metadata:
                mapper.metadata[key] = record[key]
        if not isinstance(record.get("uuid"), str):
            report.skip(record_kind(record), "a record outside the chain (no uuid)", line)
        elif record.get("isSidechain"):
            report.skip("sidechain", "a subagent's record", line)
        elif record["uuid"] not in chain.kept:
            report.skip("off-branch", "on a branch that does not lead to the last record", line)
        else:
            mapper.add(line, record)
    if chain.broken:
        mapper.warnings.append(
            f"the chain of parentUuid links breaks at {len(chain.broken)} record(s) whose parent "
            "is not in the file; only the part after the break is imported"
        )
    if mapper.unanswered:
        mapper.warnings.append(
            f"{line_list(mapper.unanswered)}: the conversation went on while tool calls had no "
            'result (a cancelled turn); they are answered "(no result recorded for this call)"'
        )
    if mapper.unmatched:
        mapper.warnings.append(
            f"{line_list(mapper.unmatched)}: a function response that answers no open call "
            "was left out"
        )
    # Telemetry names every model call; without it, the assistant records' own usage does.
    calls = mapper.calls or mapper.usages
    return Conversation(
        messages=mapper.messages,
        format=NAME,
        title=mapper.title or first_user_text(mapper.messages),
        metadata=mapper.metadata,
        warnings=mapper.warnings,
        compactions=mapper.compactions,
        report=report,
        calls=calls,
    )
