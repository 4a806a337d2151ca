"""The passes over call ids (input/call_ids.py) give what their plain definitions give.

Pairing keeps the latest calls and the ids answered since as lists, and works out which calls
still wait only when a result without an id asks; Renaming keeps one waiting id without a queue.
Both are held here to the definitions their docstrings state, written the plain way (lists,
`remove` and `pop(0)`), on thousands of random conversations: ids reused within and across
assistant messages, results in any order, with and without ids, some answering nothing.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from compaction.errors import InvalidConversationError
from compaction.input.checks import validate_messages

Message = dict[str, Any]


def by_definition(messages: list[Message]) -> tuple[list[Message], list[str]] | str:
    """(messages, repairs) as the two passes define them, or the error's message: at each index
    pairing first, then renaming reading the message as pairing left it."""
    out = [dict(message) for message in messages]
    paired: list[str] = []
    renamed: list[str] = []
    pending: list[str] | None = None  # the latest calls' ids still awaiting a result
    used: set[str] = set()
    waiting: dict[str, list[str]] = {}
    for index, message in enumerate(out):
        role = message["role"]
        # Pairing.
        if role == "assistant":
            pending = [str(call["id"]) for call in message.get("tool_calls", [])] or None
        elif role != "tool":
            pending = None
        else:
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id:
                if pending is not None and call_id in pending:
                    pending.remove(call_id)
            else:
                if not pending:
                    return "tool message has no tool_call_id and no preceding call it could answer"
                guessed = pending.pop(0)
                message["tool_call_id"] = guessed
                paired.append(
                    f"message {index}: tool message had no tool_call_id; paired by position "
                    f"with call {guessed!r}"
                )
        # Renaming.
        if role == "tool":
            written = str(message.get("tool_call_id"))
            if waiting.get(written):
                actual = waiting[written].pop(0)
                message["tool_call_id"] = actual
            continue
        calls = message.get("tool_calls", [])
        renamed_calls = []
        for position, call in enumerate(calls):
            call_id = str(call["id"])
            fresh = call_id
            suffix = 2
            while fresh in used:
                fresh = f"{call_id}_{suffix}"
                suffix += 1
            if fresh != call_id:
                renamed.append(
                    f"message {index}: tool_calls[{position}] reused the id {call_id!r} of an "
                    f"earlier call; renamed {fresh!r} (with the result that answers it)"
                )
            used.add(fresh)
            waiting.setdefault(call_id, []).append(fresh)
            renamed_calls.append({**call, "id": fresh})
        if calls:
            message["tool_calls"] = renamed_calls
    return out, [*paired, *renamed]


def random_conversation(rng: random.Random) -> list[Message]:
    ids = [f"c{n}" for n in range(rng.randint(1, 6))]  # few ids: reuse is common
    messages: list[Message] = [{"role": "user", "content": "go"}]
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        if kind < 0.15:
            messages.append({"role": "user", "content": "more"})
            continue
        made = [rng.choice(ids) for _ in range(rng.randint(0, 4))]
        assistant: Message = {"role": "assistant", "content": "ok"}
        if made:
            assistant["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}
                for call_id in made
            ]
        messages.append(assistant)
        answers = list(made) + [rng.choice(ids) for _ in range(rng.randint(0, 1))]
        rng.shuffle(answers)
        for call_id in answers[: rng.randint(0, len(answers))]:
            result: Message = {"role": "tool", "content": "out"}
            if rng.random() < 0.7:
                result["tool_call_id"] = call_id
            messages.append(result)
    return messages


def test_the_passes_give_what_their_definitions_give() -> None:
    rng = random.Random(34)
    errors = repaired = 0
    for _ in range(3_000):
        messages = random_conversation(rng)
        expected = by_definition(messages)
        try:
            got: tuple[list[Message], list[str]] | str = validate_messages(messages)
        except InvalidConversationError as exc:
            got = exc.args[0] if exc.args else str(exc)
        if isinstance(expected, str):
            errors += 1
            assert isinstance(got, str) and expected in got, (messages, got)
            continue
        assert not isinstance(got, str), (messages, got)
        checked, repairs = got
        assert repairs == expected[1], messages
        assert checked == expected[0], messages
        repaired += bool(repairs)
    # The generator reaches every branch: errors, repairs and clean conversations.
    assert errors > 100 and repaired > 300


def test_one_waiting_id_and_a_queue_of_them_answer_first_in_first_out() -> None:
    call = {"type": "function", "function": {"name": "t", "arguments": "{}"}}
    messages: list[Message] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "a"}]},
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "a"}]},
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "a"}]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "a", "content": "2"},
        {"role": "tool", "tool_call_id": "a", "content": "3"},
        {"role": "tool", "tool_call_id": "a", "content": "4"},  # answers nothing: kept as is
    ]
    checked, _ = validate_messages(messages)
    assert [m["tool_call_id"] for m in checked[4:]] == ["a", "a_2", "a_3", "a"]
    assert deque(m["tool_calls"][0]["id"] for m in checked[1:4]) == deque(["a", "a_2", "a_3"])
