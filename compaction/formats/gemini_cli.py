"""Gemini CLI sessions: `--output-format stream-json` event lines, and the chat recordings.

Three shapes, one tool:
- stream-json streams assistant text in `delta` chunks and reports calls and results as separate
  events tied by `tool_id`.
- The JSON chat recording (`~/.gemini/tmp/*/chats/session-*.json`): one object
  `{sessionId, projectHash, startTime, lastUpdated, kind, messages:[...]}`.
- The JSONL chat recording (newer, append-only `session-*.jsonl`): a header line
  `{sessionId, projectHash, startTime, lastUpdated, kind}`, then message records
  `{id, timestamp, type, content, ...}` and update records. The recorder *upserts*: a message is
  written again in full (same `id`) whenever its tool calls, results or tokens change, so a
  rewritten id keeps its first position and its last version (earlier versions are counted as
  "superseded message version"). `{"$set": {...}}` patches the session metadata (counted as
  "metadata update"); a `$set` of `messages` replaces the *model's* context (history sync at
  session start, a compression, an aborted turn's rollback) and is not the thread: its messages
  already in the thread are ignored, a `<state_snapshot>` in it is a compression summary (below),
  and new messages before any thread message are the session's opening context and are kept.
  `{"$rewindTo": id}` drops that message and everything after it (a rewind to an id the thread
  never had is ignored and counted).

Both recordings map the same way: a `user` message's parts become its text (a part that is only a
`functionResponse` answers the previous turn's open call and becomes a tool message); a `gemini`
message becomes an assistant message, its `thoughts` (and `thought: true` parts) go to the
`reasoning` key, and its `toolCalls` (each with its result embedded as
`result:[{functionResponse:{response:{output | error}}}]`) become `tool_calls` followed by one
tool message per result. `info`, `warning` and `error` messages are CLI notices, not
conversation: counted in the report by kind.

Compression. Gemini CLI compresses the chat by replacing the model's history with a user message
holding a `<state_snapshot>` summary (and a model acknowledgement); the recording shows it as an
`info` notice ("Chat history compressed from N to M tokens") and, in the JSONL form, as a `$set`
of `messages` that starts with the snapshot. Each becomes one `RecordedCompaction(agent=
"gemini-cli")` at the point it happened, with `tokens_before` = N (else the last message's input
tokens), `summary` = the snapshot text when the file holds it (then also inserted there as a user
message, the context the model continued from), and trigger "unknown" (the file does not say
whether `/compress` or the automatic threshold ran it). A user message in the thread whose text
starts with `<state_snapshot>` is recorded the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.common import (
    as_text,
    first_user_text,
    grouped_skips,
    join_text,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "gemini-cli"
EVENT_TYPES = ("init", "message", "tool_use", "tool_result", "result", "error")
MESSAGE_TYPES = ("user", "gemini")
NOTICE_TYPES = ("info", "warning", "error")
HEADER_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind")
SNAPSHOT = "<state_snapshot>"
COMPRESSED = re.compile(r"compress", re.IGNORECASE)
TOKENS_FROM = re.compile(r"from\s+([\d,]+)\s+to\s+([\d,]+)", re.IGNORECASE)
CONTEXT_PREFIXES = ("<session_context>", SNAPSHOT, "<hook_context>")

NOTICE_REASON = "a CLI notice shown in the terminal, not conversation"
SUPERSEDED = "superseded message version"


def _is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and "sessionId" in record
        and "type" not in record
        and "$set" not in record
    )


def _is_message_record(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("id"), str)
        and isinstance(record.get("type"), str)
    )


def _is_update(record: Any) -> bool:
    return isinstance(record, dict) and ("$set" in record or "$rewindTo" in record)


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind == "json" and isinstance(doc.value, dict):
        value = doc.value
        messages = value.get("messages")
        if (
            "sessionId" in value
            and isinstance(messages, list)
            and any(isinstance(m, dict) and m.get("type") in MESSAGE_TYPES for m in messages)
        ):
            return True, "a native chat recording: `sessionId` and messages of type user/gemini"
        return False, "JSON object without `sessionId` and user/gemini messages"
    if doc.kind != "jsonl":
        return False, "neither JSON Lines nor a JSON chat recording"
    recording, reason = _sniff_recording(doc.records)
    if recording:
        return True, reason
    events = [r for r in doc.records if r.get("type") in EVENT_TYPES and "payload" not in r]
    if len(events) < len(doc.records) or not events:
        return False, (
            "lines are not all stream-json events (init/message/tool_use/...), nor a JSONL chat "
            f"recording ({reason})"
        )
    if not any(e.get("type") in ("init", "tool_use") or "role" in e for e in events):
        return False, "no init, tool_use or role-carrying message events"
    return True, f"{len(events)} stream-json events (init/message/tool_use/tool_result/result)"


def _sniff_recording(records: list[Any]) -> tuple[bool, str]:
    """The JSONL chat recording: a session header, message records and `$set` updates."""
    if not records:
        return False, "no lines"
    header = _is_header(records[0])
    messages = [r for r in records if _is_message_record(r)]
    conversation = [r for r in messages if r.get("type") in MESSAGE_TYPES]
    updates = sum(1 for r in records if _is_update(r))
    other = len(records) - len(messages) - updates - (1 if header else 0)
    if not conversation:
        return False, "no `{id, type: user|gemini, content}` message lines"
    if not header and not updates:
        return False, "message lines but no session header or `$set` update lines"
    if other > max(1, len(records) // 10):
        return False, f"{other} line(s) that are neither messages nor updates"
    return True, (
        f"a JSONL chat recording: {'a session header, ' if header else ''}{len(messages)} "
        f"message line(s) and {updates} update line(s)"
    )


def load(doc: Document) -> list[Conversation]:
    if doc.kind == "json":
        return [_load_recording(doc.value)]
    if _sniff_recording(doc.records)[0]:
        return [_load_recording_lines(doc)]
    return [_load_stream(doc)]


# -- stream-json ------------------------------------------------------------------------------


def _load_stream(doc: Document) -> Conversation:
    messages: list[Message] = []
    metadata: dict[str, Any] = {"runs": []}
    skipped: dict[str, list[int]] = {}
    report = ImportReport(records=len(doc.records))
    for line, event in zip(doc.record_lines, doc.records, strict=True):
        kind = event.get("type")
        last = messages[-1] if messages else None
        if kind == "init":
            metadata["runs"].append({k: event.get(k) for k in ("session_id", "model", "timestamp")})
            metadata.setdefault("model", event.get("model"))
            metadata.setdefault("session_id", event.get("session_id"))
            report.skip("init", "a run starts: session id and model kept in metadata", line)
        elif kind == "message":
            role = "assistant" if event.get("role") in ("assistant", "model") else "user"
            text = as_text(event.get("content"))
            if (
                event.get("delta")
                and role == "assistant"
                and last is not None
                and last["role"] == "assistant"
                and not last.get("tool_calls")
            ):
                last["content"] = (last.get("content") or "") + text
            else:
                messages.append({"role": role, "content": text})
            report.imported += 1
        elif kind == "tool_use":
            call = make_call(
                str(event.get("tool_id")), str(event.get("tool_name")), event.get("parameters")
            )
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            report.imported += 1
        elif kind == "tool_result":
            output = event.get("output")
            error = event.get("error")
            if event.get("status") == "error" and isinstance(error, dict):
                output = join_text([as_text(output), f"Error: {error.get('message', '')}"])
            messages.append(tool_message(str(event.get("tool_id")), as_text(output)))
            report.imported += 1
        elif kind == "result":
            metadata.setdefault("results", []).append(
                {"status": event.get("status"), "stats": event.get("stats")}
            )
            report.skip("result", "a run's final status and stats (kept in metadata)", line)
        else:
            skipped.setdefault(str(kind), []).append(line)
            report.skip(str(kind), "an event with no chat equivalent", line)
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        warnings=grouped_skips(skipped, "no chat equivalent"),
        report=report,
    )


# -- chat recordings --------------------------------------------------------------------------


@dataclass
class _Slot:
    """One place in the thread: a message record (by id) or a compression."""

    entry: dict[str, Any] | None = None
    where: int = 0  # the line (JSONL) or messages[] index (JSON) of the version kept
    compression: dict[str, Any] | None = None  # {line, tokens_before, summary}
    context: bool = False  # a message of the model's opening context from a `$set`


@dataclass
class _Mapper:
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

    def place(self, where: int) -> str:
        return f"line {where}" if self.where == "line" else f"messages[{where}]"

    def slot(self, slot: _Slot) -> None:
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
            summary=summary,
            line=info.get("line"),
        )
        self.compactions.append(compaction)
        if summary:
            self.messages.append({"role": "user", "content": summary})
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
                    results.append(tool_message(call_id, _response_text(response)))
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
                    summary=text,
                    line=where,
                )
            )
        display = _parts_text(entry.get("displayContent")) if entry.get("displayContent") else ""
        self.requests.append(display.strip() or text)
        content_value: Any = text
        if images:
            content_value = [{"type": "text", "text": text}, *images] if text else images
        self.messages.append({"role": "user", "content": content_value})
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
        if thoughts:
            message["reasoning"] = join_text(thoughts)
        results: list[Message] = []
        calls = []
        recorded = [c for c in entry.get("toolCalls") or [] if isinstance(c, dict)]
        for position, call in enumerate(recorded):
            call_id = str(call.get("id") or f"gemini_{where}_{position}")
            calls.append(make_call(call_id, str(call.get("name")), call.get("args")))
            result = _call_result(call)
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


def _header_metadata(value: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value[key]
        for key in (*HEADER_KEYS, "summary", "directories")
        if key in value and value[key] is not None
    }


def _load_recording(value: dict[str, Any]) -> Conversation:
    entries = value.get("messages") or []
    report = ImportReport(records=len(entries))
    mapper = _Mapper(report=report, where="messages", metadata=_header_metadata(value))
    slots = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            report.skip("not an object", "a messages[] entry that is not an object", index)
            mapper.warnings.append(f"messages[{index}]: skipped, not an object")
            continue
        if entry.get("type") in NOTICE_TYPES and COMPRESSED.search(as_text(entry.get("content"))):
            slots.append(_Slot(compression=_compression_info(entry, index)))
        slots.append(_Slot(entry=entry, where=index))
    for slot in slots:
        mapper.slot(slot)
    return _conversation(mapper, set())


def _compression_info(entry: dict[str, Any], where: int) -> dict[str, Any]:
    match = TOKENS_FROM.search(as_text(entry.get("content")))
    tokens = int(match.group(1).replace(",", "")) if match else None
    return {"line": where, "tokens_before": tokens, "summary": None}


def _snapshot_of(messages: Any) -> str | None:
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("type") == "user":
            text = _parts_text(message.get("content"))
            if text.lstrip().startswith(SNAPSHOT):
                return text
    return None


def _parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def _load_recording_lines(doc: Document) -> Conversation:
    report = ImportReport(records=len(doc.records))
    metadata: dict[str, Any] = {}
    warnings: list[str] = []
    slots: list[_Slot] = []
    by_id: dict[str, _Slot] = {}
    from_sets: set[int] = set()  # `$set` lines whose messages went into the thread

    def add(entry: dict[str, Any], line: int, context: bool = False) -> None:
        known = by_id.get(entry["id"])
        if known is not None:
            report.skip(
                SUPERSEDED,
                "the recorder wrote this message again later under the same id; the last "
                "version is kept, at the first one's place",
                known.where,
            )
            known.entry, known.where = entry, line
            return
        slot = _Slot(entry=entry, where=line, context=context)
        if entry.get("type") in NOTICE_TYPES and COMPRESSED.search(as_text(entry.get("content"))):
            slots.append(_Slot(compression=_compression_info(entry, line)))
        slots.append(slot)
        by_id[entry["id"]] = slot

    for index, (line, record) in enumerate(zip(doc.record_lines, doc.records, strict=True)):
        if index == 0 and _is_header(record):
            metadata.update(_header_metadata(record))
            seeded = [m for m in record.get("messages") or [] if _is_message_record(m)]
            for entry in seeded:
                add(entry, line)
            if not seeded:
                report.skip("session header", "session id, project and times (metadata)", line)
            continue
        if isinstance(record.get("$set"), dict):
            if _apply_set(record["$set"], line, metadata, slots, add, report):
                from_sets.add(line)
        elif "$rewindTo" in record:
            target = str(record.get("$rewindTo"))
            position = next(
                (i for i, s in enumerate(slots) if s.entry and s.entry.get("id") == target), None
            )
            if position is None:
                report.skip("rewind", "a `$rewindTo` an id the thread does not hold", line)
                warnings.append(f"line {line}: `$rewindTo` {target!r}, an unknown id: ignored")
                continue
            dropped = slots[position:]
            del slots[position:]
            for slot in dropped:
                if slot.entry is not None:
                    by_id.pop(str(slot.entry.get("id")), None)
                    report.skip("rewound message", "dropped by a later `$rewindTo`", slot.where)
                elif slot.compression is not None and slot.compression["line"] in from_sets:
                    from_sets.discard(slot.compression["line"])
                    report.skip(
                        "rewound message",
                        "dropped by a later `$rewindTo`",
                        slot.compression["line"],
                    )
            report.skip("rewind", "a `$rewindTo`: the messages from that id on are dropped", line)
            warnings.append(
                f"line {line}: rewound to {target!r}: {len(dropped)} message(s) dropped"
            )
        elif _is_message_record(record):
            add(record, line)
        else:
            report.skip("unrecognised line", "neither a message nor an update", line)
            warnings.append(f"line {line}: skipped a line that is neither a message nor an update")
    mapper = _Mapper(report=report, where="line", metadata=metadata, warnings=warnings)
    for slot in slots:
        mapper.slot(slot)
    return _conversation(mapper, from_sets)


def _apply_set(
    update: dict[str, Any],
    line: int,
    metadata: dict[str, Any],
    slots: list[_Slot],
    add: Any,
    report: ImportReport,
) -> bool:
    """A `$set` line: metadata keys patch the metadata; `messages` is the model's context.

    True when the line gave the thread something (a compression summary, opening context)."""
    for key, value in update.items():
        if key != "messages":
            metadata[key] = value
    context = update.get("messages")
    if not isinstance(context, list):
        report.skip("metadata update", "a `$set` of session metadata (applied)", line)
        return False
    known = {str(s.entry.get("id")) for s in slots if s.entry is not None}
    snapshot = _snapshot_of(context)
    if snapshot is not None:
        pending = next(
            (
                s
                for s in reversed(slots)
                if s.compression is not None and s.compression.get("summary") is None
            ),
            None,
        )
        if pending is not None and pending.compression is not None:
            pending.compression["summary"] = snapshot
        else:
            slots.append(
                _Slot(compression={"line": line, "tokens_before": None, "summary": snapshot})
            )
        return True
    opening = not any(s.entry is not None and not s.context for s in slots)
    fresh = [m for m in context if _is_message_record(m) and str(m["id"]) not in known]
    if opening and fresh:
        for entry in fresh:
            add(entry, line, context=True)
        return True
    report.skip(
        "context sync",
        "a `$set` of the model's context (history sync or rollback); the thread is kept as "
        "recorded",
        line,
    )
    return False


def _conversation(mapper: _Mapper, from_sets: set[int]) -> Conversation:
    # Each source line counts once, however many messages it gave.
    report = mapper.report
    report.imported = len(mapper.imported | from_sets)
    return Conversation(
        messages=mapper.messages,
        format=NAME,
        title=_title(mapper.requests),
        metadata=mapper.metadata,
        warnings=mapper.warnings,
        compactions=mapper.compactions,
        report=report,
    )


def _title(requests: list[str]) -> str | None:
    """The first request the user typed (`displayContent` when the recording has it)."""
    real = [
        {"role": "user", "content": text}
        for text in requests
        if text.strip() and not text.lstrip().startswith(CONTEXT_PREFIXES)
    ]
    return first_user_text(real)


def _response_text(response: dict[str, Any]) -> str:
    payload = response.get("response")
    if isinstance(payload, dict):
        if "output" in payload:
            return as_text(payload["output"])
        if "error" in payload:
            return f"Error: {as_text(payload['error'])}"
        return as_text(payload)
    return as_text(payload)


def _call_result(call: dict[str, Any]) -> str | None:
    """The text of an embedded result; None when the call has none (it stays unanswered)."""
    results = call.get("result")
    if not isinstance(results, list) or not results:
        return None
    texts = []
    for item in results:
        response = item.get("functionResponse") if isinstance(item, dict) else None
        if isinstance(response, dict):
            texts.append(_response_text(response))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        else:
            texts.append(as_text(item))
    return "\n".join(texts)
