"""Copilot CLI events read as chat pieces: which event types carry no conversation, the
compaction triggers, and tool arguments, results, images and the title."""

from __future__ import annotations

import json
from typing import Any

from compaction.formats.common import as_text, join_text
from compaction.formats.titles import readable_title

NAME = "copilot-cli"

# Event types seen in Copilot CLI logs (and the SDK's session-events schema) that carry no
# conversation, with the reason each is left out.
NOT_CONVERSATION = {
    "assistant.turn_start": "turn marker, not conversation",
    "assistant.turn_end": "turn marker, not conversation",
    "assistant.intent": "UI intent label, not conversation",
    "assistant.usage": "token usage metrics",
    "assistant.message_delta": "streaming chunk; assistant.message holds the whole text",
    "assistant.reasoning_delta": "streaming chunk; assistant.reasoning holds the whole text",
    "assistant.streaming_delta": "streaming progress",
    "tool.execution_partial_result": "streaming output; tool.execution_complete holds the result",
    "tool.execution_progress": "progress message shown in the UI",
    "session.model_change": "model switch (recorded in metadata)",
    "session.mode_changed": "UI mode switch (interactive/plan/autopilot)",
    "session.info": "UI notice, not sent to the model",
    "session.warning": "UI notice, not sent to the model",
    "session.idle": "idle marker",
    "session.usage_info": "context usage metrics",
    "session.task_complete": "repeats the task_complete tool call's summary",
    "session.shutdown": "session metrics (recorded in metadata)",
    "session.resume": "resume marker",
    "session.context_changed": "working-directory change (recorded in metadata)",
    "session.title_changed": "session title (recorded in metadata)",
    "session.compaction_start": "compaction marker; session.compaction_complete holds the result",
    "session.snapshot_rewind": "rewind marker",
    "session.handoff": "handoff marker",
    "abort": "the user aborted the turn",
    "subagent.started": "sub-agent lifecycle marker",
    "subagent.completed": "sub-agent lifecycle marker",
    "subagent.failed": "sub-agent lifecycle marker",
    "subagent.selected": "sub-agent lifecycle marker",
    "subagent.deselected": "sub-agent lifecycle marker",
    "hook.start": "hook lifecycle marker",
    "hook.end": "hook lifecycle marker",
    "skill.invoked": "skill load marker; the model gets the skill as a user.message",
    "pending_messages.modified": "UI queue marker",
}
PREFIXES = ("session.", "user.", "assistant.", "tool.", "system.", "subagent.", "hook.")
TRIGGERS = {
    "threshold": "auto",
    "context_limit_retry": "auto",
    "memory_pressure": "auto",
    "model_switch": "auto",
    "manual": "manual",
}


def is_event(record: Any) -> bool:
    kind = record.get("type") if isinstance(record, dict) else None
    return (
        isinstance(kind, str)
        and (kind.startswith(PREFIXES) or kind == "abort")
        and isinstance(record.get("data"), dict)
        and "id" in record
    )


def title_of(text: str, limit: int = 80) -> str | None:
    """What the user typed, on one line, shortened, without its Markdown (titles.py)."""
    return readable_title(text, limit)


def arguments_of(value: Any) -> Any:
    """Tool arguments as a JSON-ready value; raw text (custom tools) becomes `{"input": text}`."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError:
            return {"input": value}
    return value


def result_text(data: dict[str, Any]) -> str:
    result = data.get("result")
    text = ""
    if isinstance(result, dict):
        if isinstance(result.get("content"), str):
            text = result["content"]
        elif isinstance(result.get("contents"), list):
            text = join_text(
                [
                    as_text(part.get("text", part)) if isinstance(part, dict) else as_text(part)
                    for part in result["contents"]
                ],
                "\n",
            )
        else:
            text = as_text(result.get("detailedContent"))
    elif result is not None:
        text = as_text(result)
    if data.get("success") is False:
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        text = join_text(
            [text, f"Error: {as_text(message)}" if message else "Error: tool failed"], "\n"
        )
    return text


def image_parts(attachments: Any) -> list[dict[str, Any]]:
    parts = []
    for attachment in attachments if isinstance(attachments, list) else []:
        if (
            isinstance(attachment, dict)
            and attachment.get("type") == "blob"
            and str(attachment.get("mimeType", "")).startswith("image/")
            and isinstance(attachment.get("data"), str)
        ):
            url = f"data:{attachment['mimeType']};base64,{attachment['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts
