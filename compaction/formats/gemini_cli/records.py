"""What Gemini CLI's records look like: the constants, the shape tests, and reading a
record's parts, a function response and a tool call's result as text."""

from __future__ import annotations

import re
from typing import Any

from compaction.formats.common import as_text, first_user_text

NAME = "gemini-cli"
EVENT_TYPES = ("init", "message", "tool_use", "tool_result", "result", "error")
MESSAGE_TYPES = ("user", "gemini")
NOTICE_TYPES = ("info", "warning", "error")
HEADER_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind")
SNAPSHOT = "<state_snapshot>"
COMPRESSED = re.compile(r"compress", re.IGNORECASE)
TOKENS_FROM = re.compile(r"from\s+([\d,]+)\s+to\s+([\d,]+)", re.IGNORECASE)
CONTEXT_PREFIXES = ("<session_context>", SNAPSHOT, "<hook_context>")
#: What Gemini CLI sends as a user turn when its next-speaker check decides the model should go
#: on speaking: the harness's nudge, not the user's words.
CONTINUE = "System: Please continue."

NOTICE_REASON = "a CLI notice shown in the terminal, not conversation"
SUPERSEDED = "superseded message version"


def is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and "sessionId" in record
        and "type" not in record
        and "$set" not in record
    )


def is_message_record(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("id"), str)
        and isinstance(record.get("type"), str)
    )


def is_update(record: Any) -> bool:
    return isinstance(record, dict) and ("$set" in record or "$rewindTo" in record)


def sniff_recording(records: list[Any]) -> tuple[bool, str]:
    """The JSONL chat recording: a session header, message records and `$set` updates."""
    if not records:
        return False, "no lines"
    header = is_header(records[0])
    messages = [r for r in records if is_message_record(r)]
    conversation = [r for r in messages if r.get("type") in MESSAGE_TYPES]
    updates = sum(1 for r in records if is_update(r))
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


def parts_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts)


def title_of(requests: list[str]) -> str | None:
    """The first request the user typed (`displayContent` when the recording has it)."""
    real = [
        {"role": "user", "content": text}
        for text in requests
        if text.strip() and not text.lstrip().startswith(CONTEXT_PREFIXES)
    ]
    return first_user_text(real)


def response_text(response: dict[str, Any]) -> str:
    payload = response.get("response")
    if isinstance(payload, dict):
        if "output" in payload:
            return as_text(payload["output"])
        if "error" in payload:
            return f"Error: {as_text(payload['error'])}"
        return as_text(payload)
    return as_text(payload)


def call_result(call: dict[str, Any]) -> str | None:
    """The text of an embedded result; None when the call has none (it stays unanswered)."""
    results = call.get("result")
    if not isinstance(results, list) or not results:
        return None
    texts = []
    for item in results:
        response = item.get("functionResponse") if isinstance(item, dict) else None
        if isinstance(response, dict):
            texts.append(response_text(response))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        else:
            texts.append(as_text(item))
    return "\n".join(texts)
