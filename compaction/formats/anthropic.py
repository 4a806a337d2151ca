"""Anthropic Messages API conversations (`{system, messages}` with typed content blocks).

Anthropic keeps the system prompt outside the messages, puts tool calls in the assistant's content
as `tool_use` blocks, and returns results inside a *user* message as `tool_result` blocks. The
canonical form has assistant `tool_calls` and one `tool` message per result, in order.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    blocks_to_content,
    first_user_text,
    join_text,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "anthropic"
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


def _messages(doc: Document) -> list[Any] | None:
    value = doc.value
    if doc.kind == "json" and isinstance(value, dict) and isinstance(value.get("messages"), list):
        return list(value["messages"])
    if doc.kind == "json" and isinstance(value, list):
        return value
    if doc.kind == "jsonl":
        return doc.records
    return None


def sniff(doc: Document) -> tuple[bool, str]:
    messages = _messages(doc)
    value = doc.value
    if messages == [] and isinstance(value, dict) and value.get("system"):
        # What `--to anthropic` writes for a conversation of system messages only: read it back
        # (validate then says why Anthropic would reject it) rather than call it unknown.
        return True, "a top-level `system` with an empty `messages` list"
    if not messages or not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in messages
    ):
        return False, "no messages list with only user/assistant roles"
    blocks = {
        block.get("type")
        for m in messages
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict)
    }
    if blocks & set(ANTHROPIC_BLOCKS):
        found = ", ".join(sorted(str(b) for b in blocks & set(ANTHROPIC_BLOCKS)))
        return True, f"user/assistant messages with Anthropic content blocks ({found})"
    if isinstance(doc.value, dict) and "system" in doc.value:
        return True, "a top-level `system` beside user/assistant `messages`"
    return False, "no tool_use/tool_result/thinking blocks and no top-level `system`"


def system_text(system: Any) -> str:
    if isinstance(system, list):
        return join_text([str(b.get("text", "")) for b in system if isinstance(b, dict)], "\n\n")
    return as_text(system)


def load(doc: Document) -> list[Conversation]:
    raw = _messages(doc) or []
    messages: list[Message] = []
    warnings: list[str] = []
    value = doc.value if isinstance(doc.value, dict) else {}
    system = system_text(value.get("system")) if value.get("system") else ""
    if system:
        messages.append({"role": "system", "content": system})
    for index, message in enumerate(raw):
        content = message.get("content")
        if message["role"] == "assistant":
            messages.append(_assistant(content, index, warnings))
            continue
        if not isinstance(content, list):
            messages.append({"role": "user", "content": blocks_to_content(content)})
            continue
        others = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                result = blocks_to_content(block.get("content"))
                if block.get("is_error") and isinstance(result, str):
                    result = f"Error: {result}" if not result.startswith("Error") else result
                messages.append(tool_message(str(block.get("tool_use_id")), result))
            else:
                others.append(block)
        if others:
            messages.append({"role": "user", "content": blocks_to_content(others)})
    tools = [t for t in value.get("tools") or [] if isinstance(t, dict)]
    metadata = {"model": value["model"]} if isinstance(value.get("model"), str) else {}
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=first_user_text(messages),
            metadata=metadata,
            tools=tools,
            warnings=warnings,
        )
    ]


def _assistant(content: Any, index: int, warnings: list[str]) -> Message:
    if not isinstance(content, list):
        return {"role": "assistant", "content": blocks_to_content(content)}
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking", "")))
        elif kind == "redacted_thinking":
            warnings.append(f"messages[{index}]: redacted thinking left out (encrypted)")
        elif kind in ("tool_use", "server_tool_use"):
            calls.append(
                make_call(str(block.get("id")), str(block.get("name")), block.get("input"))
            )
        else:
            texts.append(as_text(block))
    message: Message = {"role": "assistant", "content": join_text(texts) or (None if calls else "")}
    if thoughts:
        message["reasoning"] = join_text(thoughts)
    if calls:
        message["tool_calls"] = calls
    return message
