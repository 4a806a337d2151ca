"""Codex's Responses-API items read as chat: message text and images, tool calls and their
outputs, and which user-role text is Codex's own context rather than the user's words."""

from __future__ import annotations

import json
from typing import Any

from compaction.formats.common import (
    first_user_text,
    join_text,
    make_call,
    mark_injected,
    split_user_words,
)
from compaction.messages import INJECTED_KEY, Message

CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")

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
#: How the IDE extension and the Desktop app open a user turn: their own context (the active
#: file, open tabs, selections, the files the user attached), then the user's words under
#: IDE_REQUEST_MARKER, all in one message.
IDE_WRAPPERS = ("# Context from my IDE setup:", "# Files mentioned by the user:")


def payload_of(record: dict[str, Any]) -> dict[str, Any]:
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else {}


def parts_text(parts: Any, separator: str = "\n") -> str:
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


def message_content(payload: dict[str, Any], separator: str = "\n") -> Any:
    """A message item's content: plain text, or text and `image_url` parts when it has images."""
    content = payload.get("content")
    if not isinstance(content, list):
        return parts_text(content, separator)
    images = [
        p for p in content if isinstance(p, dict) and p.get("type") in ("input_image", "image")
    ]
    if not images:
        return parts_text(content, separator)
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


def output_text(output: Any) -> str:
    """A tool output as the text the model read."""
    if isinstance(output, dict):
        if "content" in output:
            return output_text(output["content"])
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


def is_context(text: str) -> bool:
    return text.lstrip().startswith(CONTEXT_PREFIXES)


def message_text(payload: dict[str, Any]) -> str:
    return parts_text(payload.get("content"))


def ide_split(content: Any) -> list[Message] | None:
    """A user turn the IDE or the Desktop app wrapped (IDE_WRAPPERS) as marked context and the
    user's own request, or None for any other turn.

    The request is split off rather than the whole turn marked, so the latest request stays
    the user's words (the heading `## My request for Codex:` is the app's, so it stays with
    the context); a wrapped turn with no request under the heading is all context.
    """
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    images = [p for p in parts if isinstance(p, dict) and p.get("type") == "image_url"]
    text = "\n".join(texts)
    if not text.lstrip().startswith(IDE_WRAPPERS):
        return None
    at = text.find(IDE_REQUEST_MARKER)
    request_at = at + len(IDE_REQUEST_MARKER)
    if at < 0 or not text[request_at:].strip():
        return [mark_injected({"role": "user", "content": content}, "context")]
    return split_user_words(text, request_at, len(text), "context", images)


def title_of(messages: list[Message]) -> str | None:
    """The first real request: not AGENTS.md, environment or IDE context (but the request inside
    an IDE context message)."""
    for message in messages:
        if message["role"] != "user" or not isinstance(message.get("content"), str):
            continue
        if message.get(INJECTED_KEY):
            continue  # marked by this importer: the IDE's context, a compaction's summary
        text = str(message["content"])
        if IDE_REQUEST_MARKER in text:
            request = text.split(IDE_REQUEST_MARKER, 1)[1].strip()
            if request:
                return first_user_text([{"role": "user", "content": request}])
        if is_context(text) or text.lstrip().startswith("<"):
            continue
        return first_user_text([message])
    return None


def tool_call_of(payload: dict[str, Any], line: int) -> dict[str, Any]:
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
