"""Minimal Claude Code session records for tests that need a session file on disk (the
"On this machine" listing, following a live session): one user or assistant turn per record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LIVE_PROJECT = "/home/me/live-project"


def record(
    kind: str, uuid: str, parent: str | None, text: str, cwd: str = LIVE_PROJECT
) -> dict[str, Any]:
    """A user (string content) or assistant (one text block) record of session `live`."""
    message: dict[str, Any] = {"role": kind, "content": text}
    if kind == "assistant":
        message = {"role": kind, "id": f"m-{uuid}", "content": [{"type": "text", "text": text}]}
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "live",
        "cwd": cwd,
        "message": message,
    }


def write_live_session(folder: Path) -> Path:
    """`live.jsonl` in `folder`: a request and the agent's first answer."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "live.jsonl"
    records = [
        record("user", "a", None, "start the live task"),
        record("assistant", "b", "a", "working on it"),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def append(path: Path, item: dict[str, Any]) -> None:
    """The agent writes one more record (as it does: one JSON line appended)."""
    with path.open("a") as handle:
        handle.write(json.dumps(item) + "\n")
