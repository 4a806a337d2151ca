"""Gemini CLI sessions: `--output-format stream-json` event lines, and native chat recordings.

Two shapes, one tool: stream-json streams assistant text in `delta` chunks and reports calls and
results as separate events tied by `tool_id`; the native recording (`~/.gemini/tmp/*/chats/*.json`)
embeds each call's result inside the assistant ("gemini") message that made it. Both become an
assistant message with `tool_calls` followed by its tool messages.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    blocks_to_content,
    first_user_text,
    grouped_skips,
    join_text,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "gemini-cli"
EVENT_TYPES = ("init", "message", "tool_use", "tool_result", "result", "error")


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind == "json" and isinstance(doc.value, dict):
        value = doc.value
        messages = value.get("messages")
        if (
            "sessionId" in value
            and isinstance(messages, list)
            and any(isinstance(m, dict) and m.get("type") in ("user", "gemini") for m in messages)
        ):
            return True, "a native chat recording: `sessionId` and messages of type user/gemini"
        return False, "JSON object without `sessionId` and user/gemini messages"
    if doc.kind != "jsonl":
        return False, "neither JSON Lines nor a JSON chat recording"
    events = [r for r in doc.records if r.get("type") in EVENT_TYPES and "payload" not in r]
    if len(events) < len(doc.records) or not events:
        return False, "lines are not all stream-json events (init/message/tool_use/...)"
    if not any(e.get("type") in ("init", "tool_use") or "role" in e for e in events):
        return False, "no init, tool_use or role-carrying message events"
    return True, f"{len(events)} stream-json events (init/message/tool_use/tool_result/result)"


def load(doc: Document) -> list[Conversation]:
    if doc.kind == "json":
        return [_load_recording(doc.value)]
    return [_load_stream(doc)]


def _load_stream(doc: Document) -> Conversation:
    messages: list[Message] = []
    metadata: dict[str, Any] = {"runs": []}
    skipped: dict[str, list[int]] = {}
    for line, event in zip(doc.record_lines, doc.records, strict=True):
        kind = event.get("type")
        last = messages[-1] if messages else None
        if kind == "init":
            metadata["runs"].append({k: event.get(k) for k in ("session_id", "model", "timestamp")})
            metadata.setdefault("model", event.get("model"))
            metadata.setdefault("session_id", event.get("session_id"))
        elif kind == "message":
            role = "assistant" if event.get("role") in ("assistant", "model") else "user"
            text = as_text(event.get("content"))
            if (
                event.get("delta")
                and role == "assistant"
                and last is not None
                and last["role"] == "assistant"
                and not last.get("tool_calls")
            ):
                last["content"] = (last.get("content") or "") + text
            else:
                messages.append({"role": role, "content": text})
        elif kind == "tool_use":
            call = make_call(
                str(event.get("tool_id")), str(event.get("tool_name")), event.get("parameters")
            )
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "tool_result":
            output = event.get("output")
            error = event.get("error")
            if event.get("status") == "error" and isinstance(error, dict):
                output = join_text([as_text(output), f"Error: {error.get('message', '')}"])
            messages.append(tool_message(str(event.get("tool_id")), as_text(output)))
        elif kind == "result":
            metadata.setdefault("results", []).append(
                {"status": event.get("status"), "stats": event.get("stats")}
            )
        else:
            skipped.setdefault(str(kind), []).append(line)
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        warnings=grouped_skips(skipped, "no chat equivalent"),
    )


def _load_recording(value: dict[str, Any]) -> Conversation:
    messages: list[Message] = []
    warnings: list[str] = []
    metadata: dict[str, Any] = {
        key: value[key]
        for key in ("sessionId", "projectHash", "startTime", "lastUpdated")
        if key in value
    }
    for index, entry in enumerate(value.get("messages") or []):
        if not isinstance(entry, dict):
            warnings.append(f"messages[{index}]: skipped, not an object")
            continue
        kind = entry.get("type")
        content = blocks_to_content(entry.get("content"))
        if kind == "user":
            messages.append({"role": "user", "content": content})
            continue
        if kind != "gemini":
            warnings.append(f"messages[{index}]: skipped a {kind!r} entry (not conversation)")
            continue
        if isinstance(entry.get("model"), str):
            metadata.setdefault("model", entry["model"])
        message: Message = {"role": "assistant", "content": content}
        thoughts = [
            join_text([str(t.get("subject", "")), str(t.get("description", ""))], ": ")
            for t in entry.get("thoughts") or []
            if isinstance(t, dict)
        ]
        if thoughts:
            message["reasoning"] = join_text(thoughts)
        results: list[Message] = []
        calls = []
        for position, call in enumerate(entry.get("toolCalls") or []):
            if not isinstance(call, dict):
                continue
            call_id = str(call.get("id") or f"gemini_{index}_{position}")
            calls.append(make_call(call_id, str(call.get("name")), call.get("args")))
            result = _call_result(call)
            if result is not None:
                results.append(tool_message(call_id, result))
        if calls:
            message["tool_calls"] = calls
            message["content"] = content or None
        messages.append(message)
        messages.extend(results)
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        warnings=warnings,
    )


def _call_result(call: dict[str, Any]) -> str | None:
    """The text of an embedded result; None when the call has none (it stays unanswered)."""
    results = call.get("result")
    if not isinstance(results, list) or not results:
        return None
    texts = []
    for item in results:
        response = item.get("functionResponse") if isinstance(item, dict) else None
        payload = response.get("response") if isinstance(response, dict) else None
        if isinstance(payload, dict):
            if "output" in payload:
                texts.append(as_text(payload["output"]))
            elif "error" in payload:
                texts.append(f"Error: {as_text(payload['error'])}")
            else:
                texts.append(as_text(payload))
        else:
            texts.append(as_text(item))
    return "\n".join(texts)
