"""Codex rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`): CLI, IDE extension and Desktop.

Every line is `{timestamp, type, payload}`. The conversation lives in `response_item` lines
(OpenAI Responses-API items); `session_meta` and `turn_context` are settings, `event_msg` lines
are UI/telemetry events that duplicate the items (their token counts are read for compactions),
and `compacted` is Codex's own compaction. Everything is counted in the import report.

How the items map:
- `message`: user/assistant keep their role; `developer` messages (permissions, collaboration
  mode, app/skills instructions) are system content: merged into the leading system message (the
  session's `base_instructions`) while no user/assistant message has come yet, otherwise a
  `system` message in place. Text parts become plain text; `input_image` parts become
  `image_url` parts.
- `reasoning`: readable summary text goes to the assistant message's `reasoning` key; the
  encrypted blob is never text (items with nothing readable are counted as skipped).
- `function_call` (exec_command, shell, shell_command, write_stdin, update_plan, ...),
  `custom_tool_call` (apply_patch: its raw patch text is wrapped as `{"input": ...}`) and
  `local_shell_call` become tool calls; consecutive calls form one assistant turn. Outputs pair by
  `call_id`. An output that is a list of `input_text`/`output_text` parts (or `{content: [...]}`)
  becomes the joined text; an output string holding `{"output": ..., "metadata": ...}` becomes
  its `output` text under a short `Exit code: N · Duration: Ns` header.
- `compacted` (`{message, replacement_history}`): the file keeps the pre-compaction items earlier,
  so the whole history is imported in order and the compaction is recorded as a
  `RecordedCompaction` at the position where the compacted context begins. Its summary is the
  `message` text when there is one (then also inserted there as a user message, as Codex hands
  it to the model); Codex's remote compaction leaves `message` empty and keeps the summary as an
  encrypted `compaction` item, so `summary` is None. `tokens_before` is the last `token_count`
  before it (`last_token_usage.input_tokens`). The trigger is "manual" when the compaction is a
  turn of its own (a task that holds nothing but the compaction, as `/compact` runs), else "auto".
- Early rollouts (before the envelope): a `{id, timestamp, instructions}` header line, then bare
  items and `{"record_type": "state"}` markers; they are read as the enveloped form.
- A forked subagent rollout (first `session_meta` has `forked_from_id` and `source.subagent`)
  replays the parent's history after its own meta: the parent's `session_meta`, then the parent's
  items, all stamped at the fork time. Only the thread's own part is imported; the replay is
  counted as `replayed parent history`. See `_replay_end` for how its end is found.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from compaction.formats.common import (
    first_user_text,
    join_text,
    line_list,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "codex"
LINE_TYPES = ("session_meta", "response_item", "turn_context", "event_msg", "compacted")
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
REPLAY = "replayed parent history"

# User-role messages Codex injects as context rather than the user's words.
CONTEXT_PREFIXES = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "# Context from my IDE setup:",
)
IDE_REQUEST_MARKER = "## My request for Codex:"

EVENT_REASONS = {
    "user_message": "UI event: duplicates the user response item",
    "agent_message": "UI event: duplicates the assistant response item",
    "agent_reasoning": "UI event: duplicates the reasoning item",
    "agent_reasoning_raw_content": "UI event: duplicates the reasoning item",
    "token_count": "telemetry: token usage (read for the compactions' tokens_before)",
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


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "jsonl":
        return False, "not JSON Lines"
    typed = [
        r for r in doc.records if r.get("type") in LINE_TYPES and isinstance(r.get("payload"), dict)
    ]
    if not any(r.get("type") == "response_item" for r in typed):
        if _is_legacy(doc.records):
            return True, "an early rollout: a `{id, timestamp}` header, then bare response items"
        return False, "no `response_item` lines with a `payload`"
    return True, f"{len(typed)} `{{type, payload}}` lines including `response_item`"


def _is_legacy(records: list[Any]) -> bool:
    """The early rollout shape (before the `{timestamp, type, payload}` envelope): a header
    `{id, timestamp, instructions?}`, then bare Responses-API items and `{record_type: state}`."""
    if not records or not isinstance(records[0], dict):
        return False
    header = records[0]
    if "id" not in header or "timestamp" not in header or "type" in header:
        return False
    kinds = ("message", *CALL_ITEMS, *OUTPUT_ITEMS, "reasoning")
    items = [r for r in records[1:] if r.get("type") in kinds and "payload" not in r]
    other = len(records) - 1 - len(items) - sum(1 for r in records[1:] if "record_type" in r)
    return any(r.get("type") == "message" and "role" in r for r in items) and other <= max(
        1, len(records) // 10
    )


def _envelope(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Early rollout records in the envelope shape, so one importer reads both."""
    header = dict(records[0])
    instructions = header.pop("instructions", None)
    if isinstance(instructions, str) and instructions.strip():
        header["base_instructions"] = {"text": instructions}
    wrapped = [{"timestamp": header.get("timestamp"), "type": "session_meta", "payload": header}]
    for record in records[1:]:
        if "record_type" in record:
            wrapped.append({"type": f"record_type/{record['record_type']}", "payload": record})
        else:
            wrapped.append({"type": "response_item", "payload": record})
    return wrapped


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else {}


def _parts_text(parts: Any, separator: str = "\n") -> str:
    """The text of a list of `input_text`/`output_text`/`text` parts (or a plain string)."""
    if isinstance(parts, str):
        return parts
    texts = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return join_text(texts, separator)


def _content(payload: dict[str, Any], separator: str = "\n") -> Any:
    """A message item's content: plain text, or text and `image_url` parts when it has images."""
    content = payload.get("content")
    if not isinstance(content, list):
        return _parts_text(content, separator)
    images = [
        p for p in content if isinstance(p, dict) and p.get("type") in ("input_image", "image")
    ]
    if not images:
        return _parts_text(content, separator)
    parts: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_image", "image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            parts.append({"type": "image_url", "image_url": {"url": str(url or "")}})
        elif isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
    return parts


def _output_text(output: Any) -> str:
    """A tool output as the text the model read."""
    if isinstance(output, dict):
        if "content" in output:
            return _output_text(output["content"])
        if isinstance(output.get("output"), str):
            return _with_header(output["output"], output.get("metadata"))
        return json.dumps(output, ensure_ascii=False)
    if isinstance(output, list):
        texts = []
        for part in output:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in ("input_image", "image"):
                texts.append("[image]")
            elif isinstance(part, str):
                texts.append(part)
            elif part is not None:
                texts.append(json.dumps(part, ensure_ascii=False))
        return "\n".join(texts)
    if output is None:
        return ""
    if not isinstance(output, str):
        return json.dumps(output, ensure_ascii=False)
    stripped = output.strip()
    if stripped.startswith("{") and '"output"' in stripped:
        try:
            value = json.loads(stripped)
        except ValueError:
            return output
        if (
            isinstance(value, dict)
            and isinstance(value.get("output"), str)
            and set(value) <= {"output", "metadata"}
        ):
            return _with_header(value["output"], value.get("metadata"))
    return output


def _with_header(text: str, metadata: Any) -> str:
    if not isinstance(metadata, dict):
        return text
    facts = []
    if metadata.get("exit_code") is not None:
        facts.append(f"Exit code: {metadata['exit_code']}")
    if metadata.get("duration_seconds") is not None:
        facts.append(f"Duration: {metadata['duration_seconds']}s")
    return f"{' · '.join(facts)}\n{text}" if facts else text


def _is_context(text: str) -> bool:
    return text.lstrip().startswith(CONTEXT_PREFIXES)


def _message_text(payload: dict[str, Any]) -> str:
    return _parts_text(payload.get("content"))


def _time(record: dict[str, Any]) -> datetime | None:
    stamp = record.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _is_forked_subagent(meta: dict[str, Any]) -> bool:
    source = meta.get("source")
    return bool(meta.get("forked_from_id")) and isinstance(source, dict) and "subagent" in source


def _handed_tasks(records: list[dict[str, Any]]) -> set[str]:
    """The task texts the replayed parent handed to spawned agents (`spawn_agent` arguments)."""
    tasks = set()
    for record in records:
        payload = _payload(record)
        if record.get("type") != "response_item" or payload.get("type") != "function_call":
            continue
        try:
            arguments = json.loads(str(payload.get("arguments") or "{}"))
        except ValueError:
            continue
        if not isinstance(arguments, dict):
            continue
        for key in ("message", "prompt", "task", "instructions"):
            if isinstance(arguments.get(key), str) and arguments[key].strip():
                tasks.add(arguments[key].strip())
    return tasks


def _is_turn_start(record: dict[str, Any]) -> bool:
    """A record that opens a turn or sets up the thread's own context (kept with its turn)."""
    payload = _payload(record)
    if record.get("type") == "turn_context":
        return True
    if record.get("type") == "event_msg":
        return payload.get("type") == "task_started"
    if record.get("type") == "response_item" and payload.get("type") == "message":
        role = payload.get("role")
        return role == "developer" or (role == "user" and _is_context(_message_text(payload)))
    return False


def _replay_end(records: list[dict[str, Any]]) -> tuple[int, str] | None:
    """Where a forked subagent's own part begins (an index into records), and how it was found.

    The replay starts right after the thread's own `session_meta` (line 1) with the parent's
    `session_meta`. Its end is found, in order of reliability:
    1. the handed-over task: the last user message whose text is the task an earlier
       `spawn_agent` call handed over (its `message` argument; the last, since a parent that was
       itself a forked subagent replays its own handed-over task too);
    2. the first `task_started` that comes after a pause (>= 250 ms) in the fork-time stamps:
       the replay is written in one burst, the thread's own turns start later.
    Either way the boundary then moves back over the records that open that turn (task_started,
    turn_context) and the thread's own initial context just before it (developer messages,
    AGENTS.md/environment context), which Codex writes for the new thread after the replay.
    """
    anchor: int | None = None
    how = ""
    tasks: set[str] = set()
    for index in range(1, len(records)):
        record = records[index]
        payload = _payload(record)
        tasks |= _handed_tasks([record])
        if (
            record.get("type") == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            text = _message_text(payload).strip()
            if text and any(text == task or text.startswith(task) for task in tasks):
                # The last one: a parent that was itself forked replays its own handed task.
                anchor, how = index, "the user message holding the task handed over"
    if anchor is None:
        for index in range(2, len(records)):
            record = records[index]
            if record.get("type") != "event_msg" or _payload(record).get("type") != "task_started":
                continue
            now, before = _time(record), _time(records[index - 1])
            if now is not None and before is not None and (now - before).total_seconds() >= 0.25:
                anchor, how = index, "the first turn started after the fork-time burst"
                break
    if anchor is None:
        return None
    start = anchor
    while start > 2 and _is_turn_start(records[start - 1]):
        start -= 1
    return start, how


def load(doc: Document) -> list[Conversation]:
    if not any(r.get("type") == "response_item" for r in doc.records) and _is_legacy(doc.records):
        doc = replace(doc, records=_envelope(doc.records))
    return [_Importer(doc).run()]


class _Importer:
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
        self.seen_conversation = False  # a user or assistant message has been imported

    # -- bookkeeping -------------------------------------------------------------------------

    def imported(self) -> None:
        self.report.imported += 1

    def skip(self, kind: str, reason: str, line: int, group: str | None = None) -> None:
        self.report.skip(kind, reason, line)
        self.event_lines.setdefault(group or kind, []).append(line)

    # -- main loop ---------------------------------------------------------------------------

    def run(self) -> Conversation:
        records = self.records
        first = _payload(records[0]) if records and records[0].get("type") == "session_meta" else {}
        skip_until = 0
        if first.get("forked_from_id") and not _is_forked_subagent(first):
            self.warnings.append(
                f"forked from thread {first['forked_from_id']}: the history the fork copied from "
                "it is part of this conversation and is imported"
            )
        if first and _is_forked_subagent(first):
            found = _replay_end(records)
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
        return Conversation(
            messages=self.messages,
            format=NAME,
            title=_title(self.messages),
            metadata=self.metadata,
            tools=self.tools,
            warnings=self.warnings,
            compactions=self.compactions,
            report=self.report,
        )

    def record(self, index: int, line: int, record: dict[str, Any]) -> None:
        kind = str(record.get("type"))
        payload = _payload(record)
        if kind == "session_meta":
            self.session_meta(index, line, payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.metadata.setdefault("model", payload["model"])
                models = self.metadata.setdefault("models", [])
                if payload["model"] not in models:
                    models.append(payload["model"])
            if isinstance(payload.get("cwd"), str):
                self.metadata.setdefault("cwd", payload["cwd"])
            self.report.skip(kind, "per-turn settings (model and cwd kept in metadata)", line)
        elif kind == "event_msg":
            self.event(line, payload)
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

    def event(self, line: int, payload: dict[str, Any]) -> None:
        event = str(payload.get("type"))
        if event == "token_count":
            info = payload.get("info")
            tokens = _context_tokens(info)
            if tokens is not None:
                self.last_tokens = tokens
        reason = EVENT_REASONS.get(event, "UI/telemetry event with no chat equivalent")
        self.skip(f"event_msg/{event}", reason, line, group="event_msg")

    def item(self, line: int, payload: dict[str, Any]) -> None:
        item = str(payload.get("type"))
        if item == "message":
            self.message(payload)
            self.imported()
        elif item == "reasoning":
            summary = _parts_text(payload.get("summary"))
            readable = join_text([summary, _parts_text(payload.get("content"))])
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
            text = _parts_text(payload.get("content"), "\n\n")
            leading = self.messages[0] if self.messages else None
            if not self.seen_conversation and leading is not None and leading["role"] == "system":
                leading["content"] = join_text([str(leading.get("content") or ""), text])
            else:
                self.messages.append({"role": "system", "content": text})
            return
        role = "assistant" if role == "assistant" else "user"
        self.seen_conversation = True
        message: Message = {"role": role, "content": _content(payload)}
        if role == "assistant" and self.pending_reasoning:
            message["reasoning"] = join_text(self.pending_reasoning)
            self.pending_reasoning = []
        self.messages.append(message)

    def call(self, payload: dict[str, Any], line: int) -> None:
        call = _call(payload, line)
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
        result = tool_message(call_id, _output_text(payload.get("output")))
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
            trigger=_trigger(self.records, index),
            tokens_before=self.last_tokens,
            summary=summary,
            line=line,
        )
        self.compactions.append(compaction)
        history = payload.get("replacement_history")
        kept = len(history) if isinstance(history, list) else 0
        if summary is not None:
            self.messages.append({"role": "user", "content": summary})
            self.imported()
            self.warnings.append(
                f"line {line}: Codex compacted the context here; its summary is imported as a "
                "user message"
            )
        else:
            self.report.skip(
                "compacted",
                "Codex's own compaction: recorded in compactions (its replacement history "
                "repeats earlier items and its summary is encrypted)",
                line,
            )
            self.warnings.append(
                f"line {line}: Codex compacted the context here; its summary is encrypted "
                f"(replacement history of {kept} item(s) not imported: it repeats earlier items)"
            )

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


def _context_tokens(info: Any) -> int | None:
    """The context size a `token_count` reports: the last request's input tokens."""
    if not isinstance(info, dict):
        return None
    for key in ("last_token_usage", "total_token_usage"):
        usage = info.get(key)
        if isinstance(usage, dict):
            value = usage.get("input_tokens")
            if isinstance(value, int) and value > 0:
                return value
    return None


def _trigger(records: list[dict[str, Any]], index: int) -> str:
    """ "manual" when the compaction is a turn of its own (`/compact`), else "auto"."""
    for back in range(index - 1, -1, -1):
        record = records[back]
        if record.get("type") == "response_item":
            return "auto"  # the compaction happened inside a working turn
        if record.get("type") == "event_msg" and _payload(record).get("type") == "task_started":
            break
    else:
        return "auto"
    for record in records[index + 1 :]:
        if record.get("type") == "response_item":
            return "auto"
        if record.get("type") == "event_msg" and _payload(record).get("type") in (
            "task_complete",
            "turn_aborted",
        ):
            return "manual"
    return "auto"


def _title(messages: list[Message]) -> str | None:
    """The first real request: not AGENTS.md, environment or IDE context (but the request inside
    an IDE context message)."""
    for message in messages:
        if message["role"] != "user" or not isinstance(message.get("content"), str):
            continue
        text = str(message["content"])
        if IDE_REQUEST_MARKER in text:
            request = text.split(IDE_REQUEST_MARKER, 1)[1].strip()
            if request:
                return first_user_text([{"role": "user", "content": request}])
        if _is_context(text) or text.lstrip().startswith("<"):
            continue
        return first_user_text([message])
    return None


def _call(payload: dict[str, Any], line: int) -> dict[str, Any]:
    call_id = str(payload.get("call_id") or payload.get("id") or f"codex_call_line_{line}")
    name = str(payload.get("name") or payload.get("type"))
    if payload.get("type") == "custom_tool_call":
        # Free-form input (a patch, a script): wrapped so the arguments stay a JSON object.
        return make_call(call_id, name, {"input": payload.get("input", "")})
    if payload.get("type") == "local_shell_call":
        return make_call(call_id, "local_shell", payload.get("action") or {})
    arguments = payload.get("arguments")
    return make_call(
        call_id, name, arguments if isinstance(arguments, str) else json.dumps(arguments)
    )
