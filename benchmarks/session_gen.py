"""A deterministic generator of coding-agent sessions for benchmarks.

`generate_session(n_messages, seed=0)` returns an OpenAI-format conversation that looks like a
coding agent at work: a system prompt, a user turn about every 20 messages, assistant tool calls
(terminal, read_file, write_file, patch, search_files) with realistic outputs of 2–20 KB for about
a third of them, identical re-reads (dedupe), failing commands with tracebacks. At 5,000 messages
it is about one million gpt-4o tokens. Same arguments, same session, byte for byte.
"""

from __future__ import annotations

import json
import random
from typing import Any

_MODULES = [
    "auth",
    "billing",
    "api",
    "models",
    "db",
    "cache",
    "jobs",
    "webhooks",
    "users",
    "search",
]
_WORDS = (
    "def return self if else for in import from class with as try except raise None True False "
    "value result config request response session user token query items data path file error "
    "count index name status payload handler client server cache key timeout retry logger"
).split()
_ERRORS = [
    "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "KeyError: 'stripe_signature'",
    "AssertionError: assert 401 == 200",
    "ModuleNotFoundError: No module named 'redis'",
]


def _code_lines(rng: random.Random, count: int) -> list[str]:
    lines = []
    for number in range(count):
        indent = "    " * rng.randint(0, 3)
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12)))
        lines.append(f"{indent}{words}  # line {number}")
    return lines


def _sized_text(rng: random.Random, target_chars: int) -> str:
    lines: list[str] = []
    size = 0
    while size < target_chars:
        line = _code_lines(rng, 1)[0]
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _output_size(rng: random.Random) -> int:
    # About a third of outputs are large (2-20 KB); the rest are short, as in real sessions.
    if rng.random() < 0.14:
        return rng.randint(2_000, 20_000)
    return rng.randint(60, 900)


def generate_session(n_messages: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are a coding agent. Use the tools to read, edit and test the code.",
        },
        {
            "role": "user",
            "content": "The test suite of our payments service fails. Fix it; never modify the "
            "migrations and always run pytest -x before you say it is done.",
        },
    ]
    files = [f"src/{m}/{rng.choice(['core', 'views', 'utils'])}.py" for m in _MODULES]
    reread_cache: dict[str, str] = {}
    call_number = 0
    next_user_turn = 20
    while len(messages) < n_messages:
        if len(messages) >= next_user_turn:
            next_user_turn += 20
            module = rng.choice(_MODULES)
            messages.append(
                {
                    "role": "user",
                    "content": f"Now look at the {module} module: the tests in "
                    f"tests/test_{module}.py still fail. Prefer small patches.",
                }
            )
            continue
        kind = rng.choice(["terminal", "read_file", "read_file", "patch", "search_files", "write"])
        path = rng.choice(files)
        call_number += 1
        call_id = f"call_{call_number:06d}"
        if kind == "terminal":
            arguments = {"command": f"pytest -x tests/test_{rng.choice(_MODULES)}.py -q"}
            body = _sized_text(rng, _output_size(rng))
            if rng.random() < 0.3:
                error = rng.choice(_ERRORS)
                body += f'\nTraceback (most recent call last):\n  File "{path}", line 12\n{error}'
                body += '\nFAILED\n"exit_code": 1'
            else:
                body += '\n"exit_code": 0'
        elif kind == "read_file":
            arguments = {"path": path}
            if path not in reread_cache or rng.random() < 0.2:
                reread_cache[path] = _sized_text(rng, _output_size(rng))
            body = reread_cache[path]  # re-reads of an unchanged file are identical: dedupe
        elif kind == "write":
            content = _sized_text(rng, rng.randint(600, 3_000))
            arguments = {"path": path, "content": content}
            body = f"Wrote {len(content)} bytes to {path}"
            kind = "write_file"
        elif kind == "patch":
            arguments = {"path": path, "old": _sized_text(rng, 120), "new": _sized_text(rng, 160)}
            body = _sized_text(rng, rng.randint(100, 700))
        else:
            arguments = {"pattern": rng.choice(_WORDS), "path": "src/"}
            body = _sized_text(rng, _output_size(rng))
        thought = f"Next I will use {kind} on {path} to check the {rng.choice(_WORDS)} handling."
        messages.append(
            {
                "role": "assistant",
                "content": thought,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": kind, "arguments": json.dumps(arguments)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": body})
    messages = messages[:n_messages]
    if messages[-1].get("tool_calls"):
        messages.pop()  # never end on a call whose result was cut off
    return messages
