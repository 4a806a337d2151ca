"""Sources that are not one conversation file: task folders, storage folders, databases, ids.

Some agents keep a session in several files, or in a database: a Cline task is a folder, an
OpenCode session is spread over its storage folder (or a row set of `opencode.db`). A user points
at what they have, so each of these opens the session:
- a Cline, Roo Code or Kilo Code task folder (it holds `api_conversation_history.json`);
- OpenCode's storage folder, its data folder, or its `opencode.db` (the newest session, and a
  warning says how many there are and how to open another);
- `<path>/opencode.db#ses_…` (one session of the database, the form local discovery lists);
- an OpenCode session id, `ses_…`, looked up in this machine's OpenCode data folder.
Anything else is left to `source.read_source` (a directory that is none of these is an error
saying what a folder must hold).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from compaction.errors import FormatError
from compaction.formats.opencode.storage import (
    DB_NAME,
    StoredSession,
    db_session,
    db_sessions,
    is_sqlite,
    storage_of,
    storage_sessions,
)
from compaction.formats.source import Document, read_source

SESSION_ID = re.compile(r"^ses_[A-Za-z0-9]+$")
CLINE_HISTORY = "api_conversation_history.json"


def open_location(source: Any) -> Document | None:
    """A Document for a folder, a database, a `db#session` address or a session id; None for
    anything that is an ordinary file or content."""
    if isinstance(source, os.PathLike):
        text = os.fspath(source)
    elif isinstance(source, str) and "\n" not in source and len(source) < 4096:
        text = source.strip()
        if text.startswith(("{", "[")):
            return None
    else:
        return None
    if not isinstance(text, str):
        return None
    path = Path(text).expanduser()
    if "#" in text and not path.exists():
        base, _, session = text.rpartition("#")
        db = Path(base).expanduser()
        if db.is_file() and is_sqlite(db) and SESSION_ID.match(session):
            return _db_document(db, session)
    if path.is_dir():
        return _folder(path)
    if path.is_file() and is_sqlite(path):
        return _newest(path, _sessions_of_db(path), f"OpenCode's database {path}")
    if SESSION_ID.match(text) and not path.exists():
        return _by_id(text)
    return None


def _folder(path: Path) -> Document:
    if (path / CLINE_HISTORY).is_file():
        return read_source(path / CLINE_HISTORY)
    storage = storage_of(path)
    db = path / DB_NAME
    if storage is not None or (db.is_file() and is_sqlite(db)):
        sessions = storage_sessions(storage) if storage is not None else []
        if db.is_file() and is_sqlite(db):
            sessions = sorted([*sessions, *_sessions_of_db(db)], key=lambda s: (-s.updated, s.id))
        return _newest(path, sessions, f"OpenCode's data in {path}")
    raise FormatError(
        "is a directory, and neither a Cline/Roo/Kilo task folder (with "
        f"{CLINE_HISTORY}) nor OpenCode's storage or data folder (with storage/ or "
        f"{DB_NAME}); open a session file instead",
        source=str(path),
    )


def _sessions_of_db(db: Path) -> list[StoredSession]:
    return db_sessions(db)


def _newest(where: Path, sessions: list[StoredSession], what: str) -> Document:
    if not sessions:
        raise FormatError(f"{what} holds no session", source=str(where))
    newest = sessions[0]
    document = _open(newest)
    if len(sessions) > 1:
        document.warnings.append(
            f"{what} holds {len(sessions)} sessions; opened the newest, {newest.id} "
            f"({newest.title or 'untitled'}). Open another by its id (ses_…) or its address "
            "as `compaction sessions --agent opencode` lists it"
        )
    return document


def _open(session: StoredSession) -> Document:
    if "#" in session.address and not Path(session.address).exists():
        base, _, ident = session.address.rpartition("#")
        return _db_document(Path(base), ident)
    return read_source(session.address)


def _db_document(db: Path, session_id: str) -> Document:
    return Document(
        text="", kind="json", name=f"{db}#{session_id}", value=db_session(db, session_id)
    )


def _by_id(session_id: str) -> Document:
    from compaction.formats.local_sessions import opencode_data

    data = opencode_data()
    storage = storage_of(data) if data.is_dir() else None
    for session in storage_sessions(storage) if storage is not None else []:
        if session.id == session_id:
            return _open(session)
    db = data / DB_NAME
    if db.is_file() and is_sqlite(db):
        return _db_document(db, session_id)
    raise FormatError(
        f"no OpenCode session {session_id} on this machine (looked in {data}; set "
        "COMPACTION_LAB_OPENCODE_DIR to OpenCode's data folder if it is elsewhere)",
        source=session_id,
    )
