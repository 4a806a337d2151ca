"""A Gemini CLI chat recording's thread (slots in order) turned into messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compaction.formats.common import as_text, join_text, make_call, mark_injected, tool_message
from compaction.formats.conversation import ImportReport, ModelCall, RecordedCompaction
from compaction.formats.gemini_cli.records import (
    CONTINUE,
    NAME,
    NOTICE_REASON,
    NOTICE_TYPES,
    SNAPSHOT,
    call_result,
    parts_text,
    response_text,
)
from compaction.formats.usage.gemini_cli import call_of
from compaction.messages import Message


def _source(own: Any, usage: int | None) -> str | None:
    """Where a compression's tokens-before comes from: Gemini CLI's own figure, else the last
    recorded call's input (see RecordedCompaction.tokens_source)."""
    if own is not None:
        return "agent"
    return "usage" if usage is not None else None


@dataclass
class Slot:
    """One place in the thread: a message record (by id) or a compression."""

    entry: dict[str, Any] | None = None
    where: int = 0  # the line (JSONL) or messages[] index (JSON) of the version kept
    compression: dict[str, Any] | None = None  # {line, tokens_before, summary}
    context: bool = False  # a message of the model's opening context from a `$set`


@dataclass
class Mapper:
    """Turns a recording's thread (slots in order) into messages, counting every record."""

    report: ImportReport
    where: str  # "line" or "messages"
    messages: list[Message] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    open_calls: set[str] = field(default_factory=set)
    last_input_tokens: int | None = None
    imported: set[int] = field(default_factory=set)  # lines (or indexes) that gave messages
    requests: list[str] = field(default_factory=list)  # what the user typed, for the title
    calls: list[ModelCall] = field(default_factory=list)  # the provider's usage per response

    def place(self, where: int) -> str:
        return f"line {where}" if self.where == "line" else f"messages[{where}]"

    def slot(self, slot: Slot) -> None:
        if slot.compression is not None:
            self.compression(slot.compression)
            return
        entry = slot.entry
        assert entry is not None
        kind = entry.get("type")
        if kind == "user":
            if self.user(entry, slot.where):
                self.imported.add(slot.where)
        elif kind == "gemini":
            self.gemini(entry, slot.where)
            self.imported.add(slot.where)
        elif kind in NOTICE_TYPES:
            self.report.skip(str(kind), NOTICE_REASON, slot.where)
            self.warnings.append(
                f"{self.place(slot.where)}: skipped a {kind!r} entry (not conversation)"
            )
        else:
            self.report.skip(str(kind), "a record type with no chat equivalent", slot.where)
            self.warnings.append(
                f"{self.place(slot.where)}: skipped a {kind!r} entry (not conversation)"
            )

    def compression(self, info: dict[str, Any]) -> None:
        summary = info.get("summary")
        tokens = info.get("tokens_before")
        compaction = RecordedCompaction(
            position=len(self.messages),
            agent=NAME,
            trigger="unknown",
            tokens_before=tokens if tokens is not None else self.last_input_tokens,
            tokens_source=_source(tokens, self.last_input_tokens),
            summary=summary,
            line=info.get("line"),
        )
        self.compactions.append(compaction)
        if summary:
            self.messages.append(mark_injected({"role": "user", "content": summary}, "compaction"))
            self.open_calls = set()
        state = "its summary is imported as a user message" if summary else "no summary recorded"
        self.warnings.append(
            f"{self.place(int(info.get('line') or 0))}: Gemini CLI compressed the chat here "
            f"({state})"
        )

    def user(self, entry: dict[str, Any], where: int) -> bool:
        content = entry.get("content")
        parts = content if isinstance(content, list) else [content]
        texts: list[str] = []
        images: list[dict[str, Any]] = []
        results: list[Message] = []
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"]
                call_id = str(response.get("id"))
                if call_id in self.open_calls:
                    self.open_calls.discard(call_id)
                    results.append(tool_message(call_id, response_text(response)))
                else:
                    self.warnings.append(
                        f"{self.place(where)}: a function response for {call_id!r}, which no "
                        "open call asked for, left out"
                    )
            elif isinstance(part, dict) and isinstance(part.get("inlineData"), dict):
                data = part["inlineData"]
                url = f"data:{data.get('mimeType', 'image/png')};base64,{data.get('data', '')}"
                images.append({"type": "image_url", "image_url": {"url": url}})
            elif part is not None:
                texts.append(as_text(part))
        self.messages.extend(results)
        text = "\n".join(texts)
        if not text and not images:
            if not results:
                self.report.skip("user (empty)", "a user record with no content", where)
                return False
            return True
        if text.lstrip().startswith(SNAPSHOT):
            self.compactions.append(
                RecordedCompaction(
                    position=len(self.messages),
                    agent=NAME,
                    trigger="unknown",
                    tokens_before=self.last_input_tokens,
                    tokens_source=_source(None, self.last_input_tokens),
                    summary=text,
                    line=where,
                )
            )
        display = parts_text(entry.get("displayContent")) if entry.get("displayContent") else ""
        self.requests.append(display.strip() or text)
        content_value: Any = text
        if images:
            content_value = [{"type": "text", "text": text}, *images] if text else images
        message: Message = {"role": "user", "content": content_value}
        if text.strip() == CONTINUE:
            mark_injected(message, "continuation")
        self.messages.append(message)
        self.open_calls = set()
        return True

    def gemini(self, entry: dict[str, Any], where: int) -> None:
        if isinstance(entry.get("model"), str):
            self.metadata.setdefault("model", entry["model"])
            models = self.metadata.setdefault("models", [])
            if entry["model"] not in models:
                models.append(entry["model"])
        tokens = entry.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            self.last_input_tokens = tokens["input"]
        content = entry.get("content")
        thoughts = [
            join_text([str(t.get("subject", "")), str(t.get("description", ""))], ": ")
            for t in entry.get("thoughts") or []
            if isinstance(t, dict)
        ]
        part_calls: list[dict[str, Any]] = []
        if isinstance(content, list):
            texts = []
            for part in content:
                if isinstance(part, dict) and part.get("thought") and "text" in part:
                    thoughts.append(str(part["text"]))
                elif isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
                    part_calls.append(part["functionCall"])
                elif isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, str):
                    texts.append(part)
            text: Any = "\n".join(texts)
        else:
            text = as_text(content)
        message: Message = {"role": "assistant", "content": text}
        usage = call_of(entry, len(self.messages), where if self.where == "line" else None)
        if usage is not None:
            self.calls.append(usage)
        if thoughts:
            message["reasoning"] = join_text(thoughts)
        results: list[Message] = []
        calls = []
        recorded = [c for c in entry.get("toolCalls") or [] if isinstance(c, dict)]
        for position, call in enumerate(recorded):
            call_id = str(call.get("id") or f"gemini_{where}_{position}")
            calls.append(make_call(call_id, str(call.get("name")), call.get("args")))
            result = call_result(call)
            if result is not None:
                results.append(tool_message(call_id, result))
        if not recorded:
            for position, call in enumerate(part_calls):
                call_id = str(call.get("id") or f"gemini_{where}_{position}")
                calls.append(make_call(call_id, str(call.get("name")), call.get("args")))
        if calls:
            message["tool_calls"] = calls
            message["content"] = text or None
        self.messages.append(message)
        self.messages.extend(results)
        answered = {str(r["tool_call_id"]) for r in results}
        self.open_calls = {c["id"] for c in calls} - answered
