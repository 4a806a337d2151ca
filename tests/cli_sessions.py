"""A small coding session for the CLI tests: one terminal call per turn, each with a long
output (150 lines), so compaction has old tool outputs to prune and a middle to summarise."""

from __future__ import annotations

from typing import Any


def session(turns: int = 8) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the failing tests."},
        {"role": "assistant", "content": "Looking."},
    ]
    for turn in range(turns):
        call_id = f"call_{turn}"
        messages += [
            {"role": "user", "content": f"Step {turn}: run module {turn}."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "terminal", "arguments": '{"command": "pytest"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": f"turn {turn} line\n" * 150},
            {"role": "assistant", "content": f"Turn {turn} passes."},
        ]
    return messages
