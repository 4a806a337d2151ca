"""Writing canonical messages for a provider API: OpenAI chat or Anthropic Messages.

A compacted conversation is only useful if it can be sent on. OpenAI output keeps only the keys
the API accepts; Anthropic output follows Anthropic's rules: the system prompt is a separate
field, tool results travel as `tool_result` blocks in a *user* message, tool arguments are parsed
objects (`input`), and consecutive messages of one role are merged (the API requires alternation).
Reasoning is left out of both: neither API accepts it back without provider signatures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction.messages import (
    Message,
    call_arguments,
    call_name,
    content_text,
    loads_json,
    tool_calls,
)

EXPORT_FORMATS = ("openai", "anthropic")
OPENAI_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def dump_conversation(
    messages: Sequence[Message], format: str = "openai", system: str | None = None
) -> dict[str, Any]:
    """`{"messages": [...]}` for OpenAI, `{"system": ..., "messages": [...]}` for Anthropic.

    `system`, when given, is put first (OpenAI) or into the system field (Anthropic) ahead of any
    system messages in `messages`. The input is never modified.
    """
    if format == "openai":
        return {"messages": to_openai(messages, system)}
    if format == "anthropic":
        return to_anthropic(messages, system)
    raise ValueError(f"unknown export format {format!r}; choose one of {', '.join(EXPORT_FORMATS)}")


def to_openai(messages: Sequence[Message], system: str | None = None) -> list[Message]:
    result: list[Message] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        copy = {key: message[key] for key in OPENAI_KEYS if key in message}
        if copy.get("role") == "assistant" and "tool_calls" in copy:
            calls = [
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {"name": call_name(call), "arguments": call_arguments(call)},
                }
                for call in tool_calls(message)
            ]
            if calls:
                copy["tool_calls"] = calls
            else:
                del copy["tool_calls"]
        result.append(copy)
    return result


def _arguments_object(call: dict[str, Any]) -> dict[str, Any]:
    """Anthropic needs `input` to be an object; text that is not one is kept under `_raw`."""
    text = call_arguments(call)
    if not text:
        return {}
    try:
        value = loads_json(text)
    except (ValueError, RecursionError):
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    """Canonical content as Anthropic blocks (text, and images from `image_url` parts)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, dict) and part.get("type") == "image_url":
            blocks.append(_image_block(part))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
    return blocks


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    image = part.get("image_url")
    url = str(image.get("url", "") if isinstance(image, dict) else image or "")
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _tool_result_content(content: Any) -> Any:
    if isinstance(content, list):
        return _content_blocks(content)
    return content_text({"content": content})


def to_anthropic(messages: Sequence[Message], system: str | None = None) -> dict[str, Any]:
    systems = [system] if system else []
    turns: list[dict[str, Any]] = []
    leading = True
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer") and leading:
            systems.append(content_text(message))
            continue
        leading = False
        if role in ("system", "developer"):
            # Anthropic has no mid-conversation system turn: keep the text, in place, as user text.
            note = {"type": "text", "text": f"[{role}] {content_text(message)}"}
            _append(turns, "user", [note])
        elif role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id")),
                "content": _tool_result_content(message.get("content")),
            }
            _append(turns, "user", [block])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = _content_blocks(message.get("content"))
            for call in tool_calls(message):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": str(call.get("id")),
                        "name": call_name(call),
                        "input": _arguments_object(call),
                    }
                )
            _append(turns, "assistant", blocks)
        else:
            _append(turns, "user", _content_blocks(message.get("content")))
    system_text = "\n\n".join(text for text in systems if text)
    result: dict[str, Any] = {"system": system_text} if system_text else {}
    result["messages"] = turns
    return result


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Add blocks as a turn of `role`, merging with the previous turn of the same role.

    Within a merged user turn, tool results go first: Anthropic requires the results of the
    previous assistant turn to lead the next user message.
    """
    if turns and turns[-1]["role"] == role:
        merged = turns[-1]["content"] + blocks
        if role == "user":
            results = [b for b in merged if b.get("type") == "tool_result"]
            merged = results + [b for b in merged if b.get("type") != "tool_result"]
        turns[-1]["content"] = merged
    else:
        turns.append({"role": role, "content": list(blocks)})
