"""SWE-agent trajectories (`.traj`): the `history` message list, function-calling or text-action.

`history` is nearly OpenAI format, but tool rows name their calls in a `tool_call_ids` *list*,
and entries carry SWE-agent bookkeeping (`agent`, `message_type`, `thought`, `action`). Old
text-action runs have no tool calls at all: the command is inside the assistant's text and the
output arrives as a user message, so they import as plain user/assistant turns.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    first_user_text,
    mark_injected,
    normalise_call,
    tool_message,
)
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "swe-agent"


def sniff(doc: Document) -> tuple[bool, str]:
    value = doc.value
    if doc.kind != "json" or not isinstance(value, dict):
        return False, "not a single JSON object"
    history = value.get("history")
    if not isinstance(history, list) or not ("trajectory" in value or "info" in value):
        return False, "no `history` list beside `trajectory`/`info`"
    if not all(isinstance(m, dict) and "role" in m for m in history):
        return False, "`history` entries lack `role`"
    return True, "a JSON object with `trajectory`/`info` and a role-tagged `history`"


def load(doc: Document) -> list[Conversation]:
    value: dict[str, Any] = doc.value
    messages: list[Message] = []
    warnings: list[str] = []
    demo_indices: set[int] = set()
    worked = False  # the agent has taken a turn of its own (not a demonstration's)
    for index, entry in enumerate(value["history"]):
        role = entry.get("role")
        if entry.get("is_demo") in (True, "True", "true"):
            demo_indices.add(len(messages))
        content = entry.get("content")
        content = (
            content if isinstance(content, str | list) or content is None else as_text(content)
        )
        if role == "tool":
            ids = entry.get("tool_call_ids") or (
                [entry["tool_call_id"]] if entry.get("tool_call_id") else []
            )
            if not ids:
                messages.append({"role": "tool", "content": content if content is not None else ""})
                continue
            messages.append(tool_message(str(ids[0]), content if content is not None else ""))
            for extra in ids[1:]:
                # One observation answering several calls: the output is on the first one.
                note = f"(output reported together with call {ids[0]})"
                messages.append(tool_message(str(extra), note))
                warnings.append(f"history[{index}]: one observation answers {len(ids)} calls")
            continue
        message: Message = {"role": role, "content": content}
        if role == "user" and len(messages) in demo_indices:
            mark_injected(message, "context")  # a demonstration, not this task's request
        elif role == "user" and worked:
            # After the agent's first turn every user turn is the environment's observation
            # (text-action runs send command output this way): a tool result, not the user.
            mark_injected(message, "tool-result")
        if role == "assistant" and entry.get("is_demo") not in (True, "True", "true"):
            worked = True
        calls = entry.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            message["tool_calls"] = [
                normalise_call(call, f"call_{index}_{position}")
                for position, call in enumerate(calls)
            ]
        messages.append(message)
    info = value.get("info") if isinstance(value.get("info"), dict) else {}
    assert isinstance(info, dict)
    metadata: dict[str, Any] = {
        key: info[key] for key in ("exit_status", "model_stats") if key in info
    }
    environment = value.get("environment")
    if isinstance(environment, str):
        metadata["environment"] = environment
    style = "function-calling" if any(m.get("tool_calls") for m in messages) else "text-action"
    metadata["style"] = style
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=_title([m for i, m in enumerate(messages) if i not in demo_indices]),
            metadata=metadata,
            warnings=warnings,
        )
    ]


def _title(messages: list[Message]) -> str | None:
    # The first user message is the issue wrapper or the demonstration: title it by the issue.
    for message in messages:
        text = message.get("content")
        if message["role"] == "user" and isinstance(text, str) and "ISSUE:" in text:
            line = text.split("ISSUE:", 1)[1].strip().splitlines()
            if line:
                return line[0][:80]
    return first_user_text(messages)
