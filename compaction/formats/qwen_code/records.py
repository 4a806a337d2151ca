"""What Qwen Code's chat records look like: constants, shape tests, Gemini parts read as text,
and the provider's usage (an `api_response` telemetry event, or `usageMetadata`) as a ModelCall."""

from __future__ import annotations

from typing import Any

from compaction.formats.common import as_text
from compaction.formats.conversation import ModelCall

NAME = "qwen-code"
RECORD_TYPES = ("user", "assistant", "tool_result", "system")
#: Gemini CLI's (and so Qwen Code's) @-file expansion: the user's words, then this part, then
#: the files' contents, which the harness sent and the user did not type.
REFERENCED = "--- Content from referenced files ---"
#: Providers whose output token count already includes the thinking tokens (Qwen Code's own
#: uiTelemetry adds `thoughts_token_count` to the total for every other auth type).
THOUGHTS_IN_OUTPUT = ("openai", "qwen-oauth")

SKIP_REASONS = {
    "system/ui_telemetry": "telemetry of a tool call or a failed model call (usage kept in calls)",
    "system/slash_command": "a slash command typed in the terminal (not sent to the model)",
    "system/at_command": "an @-file read (the files' text is in the user's message)",
    "system/custom_title": "the session's title (kept as the title)",
}


def is_recording(records: list[Any]) -> tuple[bool, str]:
    """Claude-Code-like records (uuid, parentUuid, type) whose `message` holds Gemini `parts`."""
    typed = [r for r in records if isinstance(r, dict) and r.get("type") in RECORD_TYPES]
    chat = [r for r in typed if r.get("type") in ("user", "assistant", "tool_result")]
    if not chat:
        return False, "no records of type user/assistant/tool_result"
    with_parts = [
        r
        for r in chat
        if "uuid" in r
        and isinstance(r.get("message"), dict)
        and isinstance(r["message"].get("parts"), list)
    ]
    if not with_parts:
        return False, "no user/assistant record keeps its text in `message.parts`"
    if len(typed) < len(records) - max(1, len(records) // 10):
        return False, "many lines are not Qwen Code records (user/assistant/tool_result/system)"
    return True, (
        f"{len(with_parts)} Claude-Code-like records (uuid, parentUuid, type) whose `message` "
        "holds Gemini-style `parts`"
    )


def record_kind(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    subtype = record.get("subtype")
    return f"{kind}/{subtype}" if isinstance(subtype, str) and subtype else kind


def parts_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def content_parts_text(content: Any) -> str:
    """The text of a Gemini `Content` ({role, parts}) of a compressed history."""
    parts = content.get("parts") if isinstance(content, dict) else None
    texts = [p.get("text") for p in parts or [] if isinstance(p, dict)]
    return "\n".join(text for text in texts if isinstance(text, str))


def image_of(part: dict[str, Any]) -> dict[str, Any] | None:
    data = part.get("inlineData")
    if not isinstance(data, dict):
        return None
    url = f"data:{data.get('mimeType', 'image/png')};base64,{data.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def response_text(response: dict[str, Any]) -> str:
    """A functionResponse's result as text: `output`, or `Error: …` for an `error`."""
    payload = response.get("response")
    if isinstance(payload, dict):
        if "output" in payload:
            return as_text(payload["output"])
        if "error" in payload:
            return f"Error: {as_text(payload['error'])}"
        if "content" in payload:
            return as_text(payload["content"])
    return as_text(payload)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def telemetry_call(event: dict[str, Any], position: int, line: int, when: Any) -> ModelCall:
    """An `api_response` UI telemetry event as a ModelCall.

    `input_token_count` is Gemini's `promptTokenCount`, the whole prompt (cached part included,
    also when Qwen Code converts an OpenAI-compatible usage); the thinking tokens are part of the
    output for the auth types that report them so, and are added to it for the others.
    """
    output = _count(event.get("output_token_count"))
    thoughts = _count(event.get("thoughts_token_count")) or None
    if output is not None and thoughts and event.get("auth_type") not in THOUGHTS_IN_OUTPUT:
        output += thoughts
    cached = _count(event.get("cached_content_token_count"))
    timestamp = event.get("event.timestamp") or when
    return ModelCall(
        position=position,
        input_tokens=_count(event.get("input_token_count")),
        cache_read_tokens=cached,
        output_tokens=output,
        reasoning_tokens=thoughts,
        model=event["model"] if isinstance(event.get("model"), str) else None,
        timestamp=timestamp if isinstance(timestamp, str) else None,
        line=line,
        call_id=event["response_id"] if isinstance(event.get("response_id"), str) else None,
    )


def usage_call(record: dict[str, Any], position: int, line: int) -> ModelCall | None:
    """An assistant record's `usageMetadata` as a ModelCall (None when it has none).

    Gemini reports thinking apart from `candidatesTokenCount`; an OpenAI-compatible provider
    converted by Qwen Code counts it inside: the total says which.
    """
    usage = record.get("usageMetadata")
    if not isinstance(usage, dict):
        return None
    prompt = _count(usage.get("promptTokenCount"))
    output = _count(usage.get("candidatesTokenCount"))
    thoughts = _count(usage.get("thoughtsTokenCount")) or None
    total = _count(usage.get("totalTokenCount"))
    if (
        output is not None
        and thoughts
        and prompt is not None
        and total == prompt + output + thoughts
    ):
        output += thoughts
    timestamp = record.get("timestamp")
    return ModelCall(
        position=position,
        input_tokens=prompt,
        cache_read_tokens=_count(usage.get("cachedContentTokenCount")),
        output_tokens=output,
        reasoning_tokens=thoughts,
        model=record["model"] if isinstance(record.get("model"), str) else None,
        timestamp=timestamp if isinstance(timestamp, str) else None,
        line=line,
    )
