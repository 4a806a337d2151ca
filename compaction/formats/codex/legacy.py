"""Early Codex rollouts (before the `{timestamp, type, payload}` envelope), read as the
enveloped form so one importer reads both."""

from __future__ import annotations

from typing import Any

from compaction.formats.codex.items import CALL_ITEMS, OUTPUT_ITEMS


def is_legacy(records: list[Any]) -> bool:
    """The early rollout shape (before the `{timestamp, type, payload}` envelope): a header
    `{id, timestamp, instructions?}`, then bare Responses-API items and `{record_type: state}`."""
    if not records or not isinstance(records[0], dict):
        return False
    header = records[0]
    if "id" not in header or "timestamp" not in header or "type" in header:
        return False
    kinds = ("message", *CALL_ITEMS, *OUTPUT_ITEMS, "reasoning")
    items = [r for r in records[1:] if r.get("type") in kinds and "payload" not in r]
    other = len(records) - 1 - len(items) - sum(1 for r in records[1:] if "record_type" in r)
    return any(r.get("type") == "message" and "role" in r for r in items) and other <= max(
        1, len(records) // 10
    )


def envelope(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Early rollout records in the envelope shape, so one importer reads both."""
    header = dict(records[0])
    instructions = header.pop("instructions", None)
    if isinstance(instructions, str) and instructions.strip():
        header["base_instructions"] = {"text": instructions}
    wrapped = [{"timestamp": header.get("timestamp"), "type": "session_meta", "payload": header}]
    for record in records[1:]:
        if "record_type" in record:
            wrapped.append({"type": f"record_type/{record['record_type']}", "payload": record})
        else:
            wrapped.append({"type": "response_item", "payload": record})
    return wrapped
