"""Codex's own compactions: how big the context was before, and what triggered them."""

from __future__ import annotations

from typing import Any

from compaction.formats.codex.items import payload_of


def context_tokens(info: Any) -> int | None:
    """The context size a `token_count` reports: the last request's input tokens.

    Never `total_token_usage`: that is the running sum over the session, not a context (read as
    one, it put a compaction at "10,701,960 tokens before" in a 258,400-token window)."""
    if not isinstance(info, dict):
        return None
    usage = info.get("last_token_usage")
    value = usage.get("input_tokens") if isinstance(usage, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def trigger_of(records: list[dict[str, Any]], index: int) -> str:
    """ "manual" when the compaction is a turn of its own (`/compact`), else "auto"."""
    for back in range(index - 1, -1, -1):
        record = records[back]
        if record.get("type") == "response_item":
            return "auto"  # the compaction happened inside a working turn
        if record.get("type") == "event_msg" and payload_of(record).get("type") == "task_started":
            break
    else:
        return "auto"
    for record in records[index + 1 :]:
        if record.get("type") == "response_item":
            return "auto"
        if record.get("type") == "event_msg" and payload_of(record).get("type") in (
            "task_complete",
            "turn_aborted",
        ):
            return "manual"
    return "auto"
