"""Phase messages stored once (content-addressed), and the fingerprint of an identical run.

A run's report holds every phase's message list, and the phases repeat almost every message of
the conversation: six copies per run, and again for every run of the same conversation (6 MB a
save at 5,000 messages). Stored here, each distinct message is one row of `messages_store`
keyed by the sha256 of its canonical JSON, and a phase keeps only the list of ids
(`message_ids` in place of `messages`). `History.run` puts the messages back, so readers of a
report never see the difference.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

from compaction.history.records import canonical_json

IDS_FIELD = "message_ids"
#: SQLite's default limit on bound parameters is 999 in older builds: fetch in chunks below it.
FETCH_CHUNK = 500
#: Messages no run refers to any more (after a delete), removed so a deleted run's text goes.
ORPHANS_SQL = (
    "DELETE FROM messages_store WHERE id NOT IN ("
    "SELECT ids.value FROM runs, json_each(runs.report, '$.phases') AS phase, "
    f"json_each(phase.value, '$.{IDS_FIELD}') AS ids)"
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def externalise(report: dict[str, Any]) -> dict[str, str]:
    """Move each phase's `messages` out of `report` (in place) as `message_ids`; return the
    messages to store, id -> JSON. The same message object is hashed once."""
    blobs: dict[str, str] = {}
    seen: dict[int, str] = {}
    for phase in report.get("phases") or []:
        if not isinstance(phase, dict) or not isinstance(phase.get("messages"), list):
            continue
        ids = []
        for message in phase.pop("messages"):
            known = seen.get(id(message))
            if known is None:
                text = canonical_json(message)
                known = _digest(text)
                seen[id(message)] = known
                blobs.setdefault(known, text)
            ids.append(known)
        phase[IDS_FIELD] = ids
    return blobs


def needed_ids(report: dict[str, Any]) -> set[str]:
    return {
        message_id
        for phase in report.get("phases") or []
        if isinstance(phase, dict)
        for message_id in phase.get(IDS_FIELD) or []
    }


def resolve(
    report: dict[str, Any], fetch: Callable[[list[str]], Iterable[tuple[str, str]]]
) -> None:
    """Put the phases' messages back into `report` (in place); `fetch(ids)` yields (id, JSON)."""
    wanted = sorted(needed_ids(report))
    if not wanted:
        return
    found: dict[str, Any] = {}
    for start in range(0, len(wanted), FETCH_CHUNK):
        for message_id, text in fetch(wanted[start : start + FETCH_CHUNK]):
            found[message_id] = json.loads(text)
    for phase in report.get("phases") or []:
        if isinstance(phase, dict) and IDS_FIELD in phase:
            ids = phase.pop(IDS_FIELD) or []
            # A message missing from the store (a hand-edited file) reads as an empty one,
            # rather than failing the whole run.
            phase["messages"] = [found.get(i, {"role": "user", "content": ""}) for i in ids]


def fingerprint(session_id: str, columns: dict[str, Any]) -> str:
    """What makes two runs identical: the conversation, the config, the focus, the summariser
    and the compacted messages it produced (an LLM's second, different summary is a new run)."""
    parts = [
        session_id,
        str(columns.get("config")),
        str(columns.get("focus")),
        str(columns.get("summarizer_info")),
        str(columns.get("messages")),
    ]
    return _digest("\x1f".join(parts))
