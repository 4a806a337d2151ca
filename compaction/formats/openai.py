"""OpenAI chat-completions messages: the canonical format, in the shapes files actually take.

A JSON list of messages, `{"messages": [...], "tools": [...]}`, JSONL with one message per line,
and collections of conversations: a list of `{"messages": [...]}` objects, JSONL of those, or a
list of runs whose `traj` is a message list (τ-bench). Messages are copied with only the standard
keys (plus `reasoning`), so provider extras never ride along into compaction or exports.
"""

from __future__ import annotations

import reprlib
from typing import Any

from compaction.formats.common import first_user_text, normalise_call
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document, json_kind
from compaction.messages import ROLES, Message

NAME = "openai"
KEPT_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id", "reasoning")
LIST_KEYS = ("messages", "traj")


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ROLES


def _messages_of(value: Any) -> list[Any] | None:
    """The message list held by one conversation-shaped object, or None."""
    if isinstance(value, dict):
        for key in LIST_KEYS:
            inner = value.get(key)
            if isinstance(inner, list) and inner and all(_is_message(m) for m in inner):
                return inner
    return None


def _shape(doc: Document) -> str | None:
    value = doc.value
    if doc.kind == "json":
        if isinstance(value, list) and value and all(_is_message(m) for m in value):
            return "list"
        if _messages_of(value) is not None:
            return "object"
        if isinstance(value, list) and value and all(_messages_of(v) is not None for v in value):
            return "collection"
        return None
    if doc.kind == "jsonl" and doc.records:
        if all(_is_message(r) for r in doc.records):
            return "lines"
        if all(_messages_of(r) is not None for r in doc.records):
            return "collection-lines"
    return None


def _message_problem(value: Any) -> str | None:
    """Why `value` is not an OpenAI message, or None when it is one."""
    if not isinstance(value, dict):
        return f"expected a message object, got {json_kind(value)}"
    if "role" not in value:
        return 'missing "role"'
    role = value["role"]
    if not isinstance(role, str):
        return f"role must be a string, got {reprlib.repr(role)}"
    if role not in ROLES:
        return f"unknown role {role!r}"
    return None


def _meant_as_messages(items: list[Any]) -> bool:
    # Most entries are objects with a role: a message list with a few broken entries, not some
    # other format's records.
    with_role = sum(1 for item in items if isinstance(item, dict) and "role" in item)
    return bool(items) and with_role * 2 > len(items)


def diagnose(doc: Document) -> tuple[str, int | None] | None:
    """(what is wrong, JSONL line) for content clearly meant as OpenAI messages that is not.

    Detection would otherwise answer a list with one message lacking its role by listing every
    format tried; naming the message is what lets the user fix the file.
    """
    hint = (
        " (read as a list of OpenAI chat messages: each must be an object whose role is one of "
        f"{', '.join(ROLES)})"
    )
    if doc.kind == "jsonl":
        if _meant_as_messages(doc.records):
            for line, record in zip(doc.record_lines, doc.records, strict=True):
                problem = _message_problem(record)
                if problem is not None:
                    return f"{problem}{hint}", line
        return None
    value = doc.value
    items = value.get("messages") if isinstance(value, dict) else value
    if doc.kind != "json" or not isinstance(items, list) or not _meant_as_messages(items):
        return None
    for index, item in enumerate(items):
        problem = _message_problem(item)
        if problem is not None:
            return f"message {index}: {problem}{hint}", None
    return None


def sniff(doc: Document) -> tuple[bool, str]:
    shape = _shape(doc)
    reasons = {
        "list": "a JSON list of role/content messages",
        "object": "a JSON object whose `messages` are role/content messages",
        "collection": "a JSON list of conversations (`messages` or `traj` message lists)",
        "lines": "JSON Lines, one role/content message per line",
        "collection-lines": "JSON Lines, one conversation with `messages` per line",
    }
    if shape is None:
        diagnosis = diagnose(doc)
        if diagnosis is not None:
            problem, line = diagnosis
            return False, problem if line is None else f"line {line}: {problem}"
        return False, "no list of messages with OpenAI roles (system/user/assistant/tool)"
    return True, reasons[shape]


def clean_messages(raw: list[Any], where: str) -> tuple[list[Message], list[str]]:
    """Copies of `raw` with the standard keys only; dropped extras are reported once per key."""
    messages: list[Message] = []
    dropped: dict[str, list[int]] = {}
    for index, message in enumerate(raw):
        if not isinstance(message, dict):
            # Left for validation to reject with its index; a guess would hide the problem.
            messages.append(message)
            continue
        copy: Message = {key: message[key] for key in KEPT_KEYS if key in message}
        reasoning = message.get("reasoning_content")
        if "reasoning" not in copy and isinstance(reasoning, str) and reasoning:
            copy["reasoning"] = reasoning
        if isinstance(copy.get("tool_calls"), list):
            copy["tool_calls"] = [
                normalise_call(call, f"call_{index}_{position}")
                for position, call in enumerate(copy["tool_calls"])
            ]
            if not copy["tool_calls"]:
                del copy["tool_calls"]
        elif copy.get("tool_calls") is None:
            copy.pop("tool_calls", None)
        if "content" not in copy:
            copy["content"] = None if copy.get("tool_calls") else ""
        messages.append(copy)
        for key in message:
            if (
                key not in KEPT_KEYS
                and key != "reasoning_content"
                and message[key] not in (None, "")
            ):
                dropped.setdefault(key, []).append(index)
    warnings = [
        f"{where}[{indices[0]}]{' and others' if len(indices) > 1 else ''}: dropped "
        f"non-standard key {key!r} from {len(indices)} message(s)"
        for key, indices in dropped.items()
        if key not in ("timestamp", "finish_reason", "agent", "message_type")
    ]
    return messages, warnings


def load(doc: Document) -> list[Conversation]:
    shape = _shape(doc)
    if shape == "list":
        return [_conversation(doc.value, "messages", {})]
    if shape == "object":
        return [_conversation_of(doc.value, "$")]
    if shape == "collection":
        return [_conversation_of(item, f"[{i}]") for i, item in enumerate(doc.value)]
    if shape == "lines":
        return [_conversation(doc.records, "line", {}, doc.record_lines)]
    return [
        _conversation_of(record, f"line {line}")
        for line, record in zip(doc.record_lines, doc.records, strict=True)
    ]


def _conversation_of(value: dict[str, Any], where: str) -> Conversation:
    raw = _messages_of(value) or []
    metadata = {
        key: item
        for key, item in value.items()
        if key not in (*LIST_KEYS, "tools", "info") and isinstance(item, str | int | float | bool)
    }
    conversation = _conversation(raw, f"{where}.messages", metadata)
    tools = value.get("tools")
    if isinstance(tools, list):
        conversation.tools = [t for t in tools if isinstance(t, dict)]
    if "task_id" in value:
        conversation.title = f"task {value['task_id']}" + (
            f", trial {value['trial']}" if "trial" in value else ""
        )
    elif isinstance(value.get("title"), str):
        conversation.title = value["title"]
    return conversation


def _conversation(
    raw: list[Any], where: str, metadata: dict[str, Any], lines: list[int] | None = None
) -> Conversation:
    messages, warnings = clean_messages(raw, where)
    if lines is not None:
        # JSONL: name source lines, not list positions.
        warnings = [w.replace("line[", "line index [") for w in warnings]
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        warnings=warnings,
    )
