"""OpenHands evaluation output JSONL: one benchmark instance per line, an event stream each.

Events are actions and observations, not messages. Every event produced by one LLM response
repeats that response (`tool_call_metadata.model_response`), so the assistant message is rebuilt
once per distinct response id, and each observation that answers one of its calls becomes the tool
message for that call. System prompt and tool schemas sit in the first `system` action.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    grouped_skips,
    mark_injected,
    normalise_call,
    report_of,
    tool_message,
)
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "openhands"
# Workspace recall is OpenHands bookkeeping; its content never reaches the model as a turn.
SKIPPED_EVENTS = ("recall", "agent_state_changed", "change_agent_state", "null")
#: How the evaluation harness's stand-in user answers when the agent asks for input (OpenHands'
#: `fake_user_response_fn`): sent with source "user", but the harness's words.
FAKE_USER_REPLY = "Please continue working on the task on whatever approach you think is suitable"


def _is_instance(value: Any) -> bool:
    history = value.get("history") if isinstance(value, dict) else None
    return (
        isinstance(history, list)
        and bool(history)
        and all(isinstance(e, dict) and ("action" in e or "observation" in e) for e in history)
    )


def sniff(doc: Document) -> tuple[bool, str]:
    objects = doc.objects()
    if objects and all(_is_instance(o) for o in objects):
        return True, f"{len(objects)} instance(s) whose `history` is an action/observation stream"
    return False, "no `history` of action/observation events"


def load(doc: Document) -> list[Conversation]:
    objects = doc.objects()
    lines = doc.record_lines if doc.kind == "jsonl" else [1] * len(objects)
    return [_instance(o, line) for o, line in zip(objects, lines, strict=True)]


def _instance(value: dict[str, Any], line: int) -> Conversation:
    messages: list[Message] = []
    tools: list[dict[str, Any]] = []
    skipped: dict[str, list[int]] = {}
    responses: dict[str, int] = {}  # model_response.id -> index of its assistant message
    where = f"line {line} event"
    for event in value["history"]:
        event_id = event.get("id")
        metadata = event.get("tool_call_metadata")
        kind = event.get("action") or event.get("observation")
        if isinstance(metadata, dict) and isinstance(metadata.get("model_response"), dict):
            response = metadata["model_response"]
            response_id = str(response.get("id"))
            if "action" in event:
                if response_id not in responses:
                    messages.append(_assistant(response, response_id))
                    responses[response_id] = len(messages) - 1
            else:
                content = event.get("content")
                content = as_text(content if content is not None else event.get("message"))
                messages.append(tool_message(str(metadata.get("tool_call_id")), content))
            continue
        if "action" in event:
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            assert isinstance(args, dict)
            if kind == "system":
                tools = [t for t in args.get("tools") or [] if isinstance(t, dict)]
                messages.append({"role": "system", "content": as_text(args.get("content"))})
            elif kind == "message":
                role = "user" if event.get("source") == "user" else "assistant"
                text = as_text(args.get("content", event.get("message")))
                message: Message = {"role": role, "content": text}
                if role == "user" and text.lstrip().startswith(FAKE_USER_REPLY):
                    mark_injected(message, "continuation")
                messages.append(message)
            else:
                skipped.setdefault(f"action {kind}", []).append(_number(event_id))
        elif kind == "error":
            # An error the environment reports back to the agent without a call to answer: a
            # user turn, but the environment's output, not the user speaking.
            error: Message = {"role": "user", "content": as_text(event.get("content"))}
            messages.append(mark_injected(error, "tool-result"))
        else:
            skipped.setdefault(f"observation {kind}", []).append(_number(event_id))
    meta = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    llm = meta.get("llm_config") if isinstance(meta.get("llm_config"), dict) else {}
    assert isinstance(llm, dict)
    info: dict[str, Any] = {"instance_id": value.get("instance_id")}
    for key in ("agent_class", "dataset", "max_iterations", "git_commit"):
        if key in meta:
            info[key] = meta[key]
    if "model" in llm:
        info["model"] = llm["model"]
    warnings = [
        w.replace("line", f"{where}", 1).replace("lines", f"{where}s", 1)
        for w in grouped_skips(skipped, "OpenHands bookkeeping, not sent to the model")
    ]
    return Conversation(
        messages=messages,
        format=NAME,
        title=str(value.get("instance_id") or "") or None,
        metadata=info,
        tools=tools,
        warnings=warnings,
        # Event ids stand in for lines: one instance is one JSONL line.
        report=report_of(
            len(value["history"]), skipped, "OpenHands bookkeeping, not sent to the model"
        ),
    )


def _number(event_id: Any) -> int:
    try:
        return int(event_id)
    except (TypeError, ValueError):
        return -1


def _assistant(response: dict[str, Any], response_id: str) -> Message:
    choices = response.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    raw = choice.get("message") if isinstance(choice, dict) else None
    raw = raw if isinstance(raw, dict) else {}
    calls = [
        normalise_call(call, f"{response_id}_{position}")
        for position, call in enumerate(raw.get("tool_calls") or [])
    ]
    message: Message = {"role": "assistant", "content": raw.get("content")}
    if message["content"] is None and not calls:
        message["content"] = ""
    reasoning = raw.get("reasoning_content") or raw.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        message["reasoning"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return message
