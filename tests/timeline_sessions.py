"""Hand-written agent sessions with known facts, shared by the timeline and evaluation tests.

The session is a coding agent fixing a login bug: a user turn every few tool groups, file writes
(known paths), a failing test run (a known error line), commands, and identifiers (an issue number,
a URL, a version). Sizes are chosen so a small window (see `small_config`) compacts several times.
"""

from __future__ import annotations

import json
from typing import Any

from compaction.config import CompactionConfig

FIRST_PATH = "src/auth/login_handler.py"
ERROR_LINE = "sqlite3.IntegrityError: UNIQUE constraint failed: users.email"
CONSTRAINT = "Never edit the migrations folder."
ISSUE = "#4182"


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def group(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, name, arguments)]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def filler(label: str, lines: int = 40) -> str:
    return "\n".join(
        f"{label} line {n}: value = compute({n}) # detail {n * 7}" for n in range(lines)
    )


def coding_session(rounds: int = 8) -> list[dict[str, Any]]:
    """A session of `rounds` user requests, each followed by a few tool groups."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. Use the tools."},
        {
            "role": "user",
            "content": f"Fix the login bug from issue {ISSUE}. {CONSTRAINT} "
            "See https://example.com/bugs/4182 for the report.",
        },
        {"role": "assistant", "content": "I will reproduce the failure first."},
    ]
    messages += group(
        "w0",
        "write_file",
        {"path": FIRST_PATH, "content": "def login(user):\n    return check(user)\n"},
        "Wrote 2 lines.",
    )
    messages += group(
        "t0",
        "terminal",
        {"command": "pytest tests/test_login.py -x"},
        filler("pytest") + f"\nE   {ERROR_LINE}\nFAILED tests/test_login.py::test_signup\n"
        '"exit_code": 1',
    )
    messages.append({"role": "assistant", "content": "The signup test fails on a duplicate email."})
    for round_number in range(1, rounds):
        messages.append(
            {
                "role": "user",
                "content": f"Continue with step {round_number}: check module m{round_number}.",
            }
        )
        messages += group(
            f"r{round_number}",
            "read_file",
            {"path": f"src/module_{round_number}.py"},
            filler(f"module{round_number}"),
        )
        messages += group(
            f"s{round_number}",
            "terminal",
            {"command": f"grep -rn handler src/module_{round_number}.py"},
            filler(f"grep{round_number}", 25),
        )
        messages.append(
            {"role": "assistant", "content": f"Module m{round_number} looks fine; moving on."}
        )
    messages.append({"role": "user", "content": "Now update the changelog for version v2.4.1."})
    return messages


def small_config(**overrides: Any) -> CompactionConfig:
    """A small window so the hand-written session crosses the threshold several times."""
    settings: dict[str, Any] = {
        "context_length": 8_000,
        "threshold_ratio": 0.5,
        "summary_min_tokens": 300,
        "summary_max_tokens": 800,
        "counter": "rough",
    }
    settings.update(overrides)
    return CompactionConfig(**settings)


def over_window_session() -> list[dict[str, Any]]:
    """coding_session(3), then a latest request larger than small_config()'s 8,000-token window
    (the user pasted a whole log): the request is never cut, so no compaction can bring the
    context under the window (issue 21: the one case that cannot fit)."""
    return [
        *coding_session(3),
        {"role": "user", "content": "What is wrong in this log?\n" + filler("log", 1_200)},
        {"role": "assistant", "content": "Looking at it now."},
    ]


def huge_output_session() -> list[dict[str, Any]]:
    """coding_session(3), then a tool output larger than small_config()'s 8,000-token window in
    the protected tail: Fit cuts it so every compaction leaves the context inside the window."""
    return [
        *coding_session(3),
        {"role": "user", "content": "Dump the whole log."},
        *group("big", "terminal", {"command": "cat app.log"}, filler("log", 1_200)),
    ]
