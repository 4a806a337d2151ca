"""Small builders for hand-made OpenAI-format conversations used by the engine unit tests.

Why a module: every phase test needs the same few shapes (a user turn, an assistant turn with
calls, a tool result), and writing the dicts by hand each time hides what a test is about.
"""

from __future__ import annotations

import json
from typing import Any

from compaction.messages import Message


def system(text: str = "You are a coding agent.") -> Message:
    return {"role": "system", "content": text}


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str | None = None) -> Message:
    return {"role": "assistant", "content": text}


def call(call_id: str, name: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def calls(*tool_calls: dict[str, Any], text: str | None = None) -> Message:
    return {"role": "assistant", "content": text, "tool_calls": list(tool_calls)}


def tool(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def big(label: str, chars: int = 1_000) -> str:
    """Distinct, multi-line text of about `chars` characters (distinct per label: no dedupe)."""
    line = f"{label}: lorem ipsum dolor sit amet consectetur adipiscing elit\n"
    return (line * (chars // len(line) + 1))[:chars]


def coding_session(turns: int = 6, output_chars: int = 1_500) -> list[Message]:
    """System + opening exchange, then `turns` rounds of user ask / tool call / result / reply."""
    messages: list[Message] = [
        system(),
        user("Please fix the failing tests in the repo."),
        assistant("I'll start by looking around."),
    ]
    for turn in range(turns):
        call_id = f"call_{turn}"
        messages.append(user(f"Step {turn}: run the tests for module {turn}."))
        messages.append(calls(call(call_id, "terminal", {"command": f"pytest tests/m{turn}"})))
        messages.append(tool(call_id, big(f"output of turn {turn}", output_chars)))
        messages.append(assistant(f"Turn {turn} done; the tests in m{turn} pass now."))
    return messages
