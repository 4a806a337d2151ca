"""Where OpenCode keeps its sessions on disk, read into the shape `opencode export` writes.

Two layouts, both under OpenCode's data folder (`$XDG_DATA_HOME/opencode`, by default
`~/.local/share/opencode`):
- up to 1.1: JSON files, `storage/session/<projectID>/<sessionID>.json` (the session's info),
  `storage/message/<sessionID>/<messageID>.json` (a message's info) and
  `storage/part/<messageID>/<partID>.json` (one part each). Ids grow with time, so sorting
  them gives the order OpenCode shows.
- from 1.2: one SQLite file, `opencode.db`: tables `session` (id, project_id, parent_id, slug,
  directory, title, version, time_created, time_updated, …), `message` (id, session_id,
  time_created, data = the message info as JSON, without id and sessionID) and `part` (id,
  message_id, session_id, data = the part as JSON, without its ids). It is opened read-only.

Either way a session becomes `{info, messages: [{info, parts}]}`, which the export importer
reads. A session whose `parent_id` is set is a subagent's (OpenCode's task tool): listed with
its parent, never on its own.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compaction.errors import FormatError

DB_NAME = "opencode.db"
SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class StoredSession:
    """One session found on disk: where it is, and what its info says."""

    id: str
    title: str | None
    directory: str | None
    updated: float  # seconds since the epoch
    address: str  # what load_conversations opens: the info file, or `<db>#<session id>`


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def storage_of(path: Path) -> Path | None:
    """The `storage` folder `path` is, holds, or lies in (a session, message or part file)."""
    for candidate in (path, path / "storage", *path.parents):
        if (candidate / "session").is_dir() and (candidate / "message").is_dir():
            return candidate
    return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read OpenCode's file: {exc}", source=str(path)) from exc


def storage_sessions(storage: Path) -> list[StoredSession]:
    found = []
    for path in storage.glob("session/*/*.json"):
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict) or info.get("parentID"):
            continue
        time = info.get("time") if isinstance(info.get("time"), dict) else {}
        assert isinstance(time, dict)
        updated = time.get("updated") or time.get("created")
        found.append(
            StoredSession(
                id=str(info.get("id") or path.stem),
                title=info.get("title") if isinstance(info.get("title"), str) else None,
                directory=info.get("directory") if isinstance(info.get("directory"), str) else None,
                updated=updated / 1000
                if isinstance(updated, int | float)
                else path.stat().st_mtime,
                address=str(path),
            )
        )
    return sorted(found, key=lambda s: (-s.updated, s.id))


def storage_session(storage: Path, session_id: str) -> dict[str, Any]:
    """One session of a JSON-files storage, in the export's shape."""
    infos = sorted(storage.glob(f"session/*/{session_id}.json"))
    if not infos:
        raise FormatError(
            f"no session {session_id!r} in OpenCode's storage (looked for "
            f"session/*/{session_id}.json)",
            source=str(storage),
        )
    messages = []
    for path in sorted((storage / "message" / session_id).glob("*.json"), key=lambda p: p.stem):
        info = _read_json(path)
        if not isinstance(info, dict):
            continue
        message_id = str(info.get("id") or path.stem)
        parts = [
            _read_json(part)
            for part in sorted((storage / "part" / message_id).glob("*.json"), key=lambda p: p.stem)
        ]
        messages.append({"info": info, "parts": [p for p in parts if isinstance(p, dict)]})
    return {"info": _read_json(infos[0]), "messages": messages}


# -- the SQLite database (OpenCode 1.2 on) -----------------------------------------------------


def _connect(db: Path) -> sqlite3.Connection:
    """Read-only: the file OpenCode is writing is never changed. A database in WAL mode whose
    folder cannot be written is read as it was last checkpointed (`immutable`)."""
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        connection.execute("select count(*) from sqlite_master").fetchone()
        return connection
    except sqlite3.Error:
        try:
            return sqlite3.connect(f"file:{db}?immutable=1", uri=True)
        except sqlite3.Error as exc:
            raise FormatError(f"cannot open OpenCode's database: {exc}", source=str(db)) from exc


def db_sessions(db: Path) -> list[StoredSession]:
    connection = _connect(db)
    try:
        rows = connection.execute(
            "select id, title, directory, time_updated from session where parent_id is null "
            "order by time_updated desc, id"
        ).fetchall()
    except sqlite3.Error as exc:
        raise FormatError(
            f"not an OpenCode database this tool can read (no session table as OpenCode 1.2+ "
            f"writes it: {exc})",
            source=str(db),
        ) from exc
    finally:
        connection.close()
    return [
        StoredSession(
            id=str(row[0]),
            title=row[1],
            directory=row[2],
            updated=(row[3] or 0) / 1000,
            address=f"{db}#{row[0]}",
        )
        for row in rows
    ]


def db_session(db: Path, session_id: str) -> dict[str, Any]:
    """One session of the database, in the export's shape."""
    connection = _connect(db)
    try:
        columns = [c[1] for c in connection.execute("pragma table_info(session)").fetchall()]
        row = connection.execute("select * from session where id = ?", (session_id,)).fetchone()
        if row is None:
            raise FormatError(f"no session {session_id!r} in OpenCode's database", source=str(db))
        session = dict(zip(columns, row, strict=True))
        messages = []
        for message_id, data in connection.execute(
            "select id, data from message where session_id = ? order by time_created, id",
            (session_id,),
        ).fetchall():
            info = {**_decoded(data, db), "id": message_id, "sessionID": session_id}
            parts = [
                {
                    **_decoded(part, db),
                    "id": part_id,
                    "sessionID": session_id,
                    "messageID": message_id,
                }
                for part_id, part in connection.execute(
                    "select id, data from part where message_id = ? order by id", (message_id,)
                ).fetchall()
            ]
            messages.append({"info": info, "parts": parts})
    except sqlite3.Error as exc:
        raise FormatError(f"cannot read OpenCode's database: {exc}", source=str(db)) from exc
    finally:
        connection.close()
    info = {
        "id": session["id"],
        "slug": session.get("slug"),
        "projectID": session.get("project_id"),
        "directory": session.get("directory"),
        "title": session.get("title"),
        "version": session.get("version"),
        "time": {"created": session.get("time_created"), "updated": session.get("time_updated")},
    }
    return {"info": {k: v for k, v in info.items() if v is not None}, "messages": messages}


def _decoded(data: Any, db: Path) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"a message or part whose data is not JSON: {exc}", str(db)) from exc
    return value if isinstance(value, dict) else {}
