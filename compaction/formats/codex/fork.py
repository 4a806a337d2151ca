"""A forked Codex subagent rollout: where the parent's replayed history ends and the thread's
own work begins."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from compaction.formats.codex.items import is_context, message_text, payload_of

REPLAY = "replayed parent history"


def time_of(record: dict[str, Any]) -> datetime | None:
    stamp = record.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def is_forked_subagent(meta: dict[str, Any]) -> bool:
    source = meta.get("source")
    return bool(meta.get("forked_from_id")) and isinstance(source, dict) and "subagent" in source


def handed_tasks(records: list[dict[str, Any]]) -> set[str]:
    """The task texts the replayed parent handed to spawned agents (`spawn_agent` arguments)."""
    tasks = set()
    for record in records:
        payload = payload_of(record)
        if record.get("type") != "response_item" or payload.get("type") != "function_call":
            continue
        try:
            arguments = json.loads(str(payload.get("arguments") or "{}"))
        except ValueError:
            continue
        if not isinstance(arguments, dict):
            continue
        for key in ("message", "prompt", "task", "instructions"):
            if isinstance(arguments.get(key), str) and arguments[key].strip():
                tasks.add(arguments[key].strip())
    return tasks


def is_turn_start(record: dict[str, Any]) -> bool:
    """A record that opens a turn or sets up the thread's own context (kept with its turn)."""
    payload = payload_of(record)
    if record.get("type") == "turn_context":
        return True
    if record.get("type") == "event_msg":
        return payload.get("type") == "task_started"
    if record.get("type") == "response_item" and payload.get("type") == "message":
        role = payload.get("role")
        return role == "developer" or (role == "user" and is_context(message_text(payload)))
    return False


def replay_end(records: list[dict[str, Any]]) -> tuple[int, str] | None:
    """Where a forked subagent's own part begins (an index into records), and how it was found.

    The replay starts right after the thread's own `session_meta` (line 1) with the parent's
    `session_meta`. Its end is found, in order of reliability:
    1. the handed-over task: the last user message whose text is the task an earlier
       `spawn_agent` call handed over (its `message` argument; the last, since a parent that was
       itself a forked subagent replays its own handed-over task too);
    2. the first `task_started` that comes after a pause (>= 250 ms) in the fork-time stamps:
       the replay is written in one burst, the thread's own turns start later.
    Either way the boundary then moves back over the records that open that turn (task_started,
    turn_context) and the thread's own initial context just before it (developer messages,
    AGENTS.md/environment context), which Codex writes for the new thread after the replay.
    """
    anchor: int | None = None
    how = ""
    tasks: set[str] = set()
    for index in range(1, len(records)):
        record = records[index]
        payload = payload_of(record)
        tasks |= handed_tasks([record])
        if (
            record.get("type") == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            text = message_text(payload).strip()
            if text and any(text == task or text.startswith(task) for task in tasks):
                # The last one: a parent that was itself forked replays its own handed task.
                anchor, how = index, "the user message holding the task handed over"
    if anchor is None:
        for index in range(2, len(records)):
            record = records[index]
            if (
                record.get("type") != "event_msg"
                or payload_of(record).get("type") != "task_started"
            ):
                continue
            now, before = time_of(record), time_of(records[index - 1])
            if now is not None and before is not None and (now - before).total_seconds() >= 0.25:
                anchor, how = index, "the first turn started after the fork-time burst"
                break
    if anchor is None:
        return None
    start = anchor
    while start > 2 and is_turn_start(records[start - 1]):
        start -= 1
    return start, how
