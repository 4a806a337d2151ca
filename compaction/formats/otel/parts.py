"""Canonical (OpenAI chat) messages to and from the GenAI semantic conventions' message form.

The conventions record a model call's messages (`gen_ai.input.messages`,
`gen_ai.output.messages`, `gen_ai.system_instructions`) as a list of `{role, parts}` where each
part is typed: `text` (content), `tool_call` (id, name, arguments as an object),
`tool_call_response` (id, result — older instrumentations wrote `response`), `reasoning`
(content), `uri` / `blob` (an image or file by address or inline, with its modality). A tool
message carries its result as a part; our canonical form has one message per result.
"""

from __future__ import annotations

import json
from typing import Any

from compaction.messages import Message


def to_semconv_messages(
    messages: list[Message] | tuple[Message, ...] | Any,
) -> list[dict[str, Any]]:
    return [to_semconv(message) for message in messages]


def to_semconv(message: Message) -> dict[str, Any]:
    role = str(message.get("role", "user"))
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append(
            {
                "type": "tool_call_response",
                "id": message.get("tool_call_id"),
                "result": _text(message.get("content")),
            }
        )
        return {"role": role, "parts": parts}
    reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "content": reasoning})
    parts.extend(_content_parts(message.get("content")))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": _arguments_object(arguments),
            }
        )
    out: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(message.get("name"), str):
        out["name"] = message["name"]
    return out


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [content]:
        if not isinstance(part, dict):
            parts.append({"type": "text", "content": str(part)})
        elif part.get("type") == "text":
            parts.append({"type": "text", "content": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            if url.startswith("data:") and ";base64," in url:
                mime, _, data = url[5:].partition(";base64,")
                parts.append(
                    {"type": "blob", "modality": "image", "mime_type": mime, "content": data}
                )
            else:
                parts.append({"type": "uri", "modality": "image", "uri": url})
        else:
            parts.append({"type": str(part.get("type", "unknown")), **_without(part, "type")})
    return parts


def _without(part: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k != key}


def _arguments_object(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value)
    return json.dumps(value, ensure_ascii=False)


def from_semconv(message: dict[str, Any]) -> list[Message]:
    """The canonical messages of one conventions message (a tool message with several results
    becomes one message per result)."""
    role = str(message.get("role") or "user")
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
    if role == "tool" or any(p.get("type") == "tool_call_response" for p in parts):
        return [
            {
                "role": "tool",
                "tool_call_id": str(part.get("id") or ""),
                "content": _text(part.get("result", part.get("response"))),
            }
            for part in parts
            if part.get("type") == "tool_call_response"
        ]
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            texts.append({"type": "text", "text": str(part.get("content", ""))})
        elif kind == "reasoning":
            reasoning.append(str(part.get("content", "")))
        elif kind == "tool_call":
            arguments = part.get("arguments")
            calls.append(
                {
                    "id": str(part.get("id") or ""),
                    "type": "function",
                    "function": {
                        "name": str(part.get("name") or ""),
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments if arguments is not None else {}),
                    },
                }
            )
        elif kind == "uri":
            texts.append({"type": "image_url", "image_url": {"url": str(part.get("uri", ""))}})
        elif kind == "blob":
            mime = str(part.get("mime_type") or "application/octet-stream")
            url = f"data:{mime};base64,{part.get('content', '')}"
            texts.append({"type": "image_url", "image_url": {"url": url}})
    content: Any
    if all(p["type"] == "text" for p in texts):
        content = "\n".join(p["text"] for p in texts) if texts else None
    else:
        content = texts
    out: Message = {"role": role if role in ("system", "user", "assistant") else "user"}
    # No text is "" whoever wrote the span (some write no part, some an empty one, some null).
    out["content"] = content if content is not None else ""
    if calls:
        out["tool_calls"] = calls
    if reasoning:
        out["reasoning"] = "\n".join(reasoning)
    if isinstance(message.get("name"), str):
        out["name"] = message["name"]
    return [out]


def from_semconv_messages(messages: Any) -> list[Message]:
    """Canonical messages of a `gen_ai.*.messages` value (a list, or its JSON string)."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            return []
    if not isinstance(messages, list):
        return []
    out: list[Message] = []
    for message in messages:
        if isinstance(message, dict):
            out.extend(from_semconv(message))
    return out
