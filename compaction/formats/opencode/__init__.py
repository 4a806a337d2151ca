"""OpenCode sessions: `opencode export` JSON (1.2.x, 1.17.x), and OpenCode's own storage.

`opencode export <sessionID>` writes `{info, messages: [{info, parts}], todos?}`: the session's
info (`id` "ses_…", `slug`, `projectID`, `directory`, `title`, `version`, `time`), then each
message's info (`role` user | assistant; an assistant's `modelID`, `providerID`, `path.cwd`,
`tokens`, `cost`, `finish`, `error`, `summary`) and its parts (`text`, `reasoning`, `tool` with
`state {status, input, output | error}`, `step-start`, `step-finish` with `tokens` and `cost`,
`file`, `patch`, `compaction`, `subtask`, `agent`, `retry`, `snapshot`). mapper.py turns a
session into messages the way OpenCode sends them to the model; docs/formats.md has the fields.

- Calls: each `step-finish` part is one model call (`tokens {input, output, reasoning,
  cache {read, write}}`, `cost` in USD), at the assistant message of its step.
- Compaction: `/compact` (or the automatic overflow check) adds a user message with a
  `compaction` part (`auto` says which) and an assistant message of agent "compaction" with
  `summary: true`, whose text is the summary the session goes on from. It is listed in
  `compactions` (position: the summary; tokens before: the last call's prompt and output).
- Storage: a session info file `storage/session/<project>/<ses>.json` (or a message or part file
  of the same storage) opens its session from the files beside it; storage.py reads those and
  `opencode.db`; folders.py opens a storage folder, the data folder or the database.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from compaction.errors import FormatError
from compaction.formats.conversation import Conversation
from compaction.formats.opencode.mapper import NAME as NAME
from compaction.formats.opencode.mapper import session_conversation
from compaction.formats.opencode.storage import storage_of, storage_session
from compaction.formats.source import Document

_ID = re.compile(r'"((?:prt|msg)_[A-Za-z0-9]+)"')


def _is_export(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    info = value.get("info")
    return (
        isinstance(info, dict)
        and str(info.get("id", "")).startswith("ses_")
        and all(
            isinstance(m, dict)
            and isinstance(m.get("info"), dict)
            and isinstance(m.get("parts"), list)
            for m in value["messages"]
        )
    )


def _stored_kind(value: Any) -> str | None:
    """ "session", "message" or "part" for one of OpenCode's storage files, else None."""
    if not isinstance(value, dict) or "messages" in value:
        return None
    ident = str(value.get("id", ""))
    if ident.startswith("ses_") and ("projectID" in value or "directory" in value):
        return "session"
    if ident.startswith("msg_") and str(value.get("sessionID", "")).startswith("ses_"):
        return "message"
    if ident.startswith("prt_") and str(value.get("messageID", "")).startswith("msg_"):
        return "part"
    return None


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "json":
        return False, "not a JSON document"
    if _is_export(doc.value):
        count = len(doc.value["messages"])
        return (
            True,
            f"an OpenCode session export: `info` (ses_…) and {count} {{info, parts}} messages",
        )
    kind = _stored_kind(doc.value)
    if kind is not None:
        return True, f"an OpenCode storage {kind} file (ses_/msg_/prt_ ids)"
    return False, "no OpenCode session (`info.id` ses_… beside `messages` of {info, parts})"


def load(doc: Document) -> list[Conversation]:
    value = doc.value
    if _is_export(value):
        return [session_conversation(value, _lines(doc.text))]
    return [_from_storage(doc)]


def _from_storage(doc: Document) -> Conversation:
    """A session, message or part file of OpenCode's storage: its session, read from the files
    beside it."""
    value = doc.value
    kind = _stored_kind(value)
    session_id = str(value["id"] if kind == "session" else value["sessionID"]) if kind else ""
    if kind == "part":
        session_id = str(value.get("sessionID", ""))
    storage = storage_of(Path(doc.name)) if doc.name else None
    if storage is None or not session_id:
        raise FormatError(
            f"an OpenCode storage {kind} file, but not inside OpenCode's storage folder (with "
            "session/, message/ and part/ beside it), so its session cannot be read; open the "
            "storage folder, or export the session with `opencode export <sessionID>`",
            source=doc.name,
        )
    conversation = session_conversation(storage_session(storage, session_id), {})
    conversation.warnings.insert(0, f"read session {session_id} from OpenCode's storage {storage}")
    return conversation


def _lines(text: str) -> dict[str, int]:
    """The line where each part and message id first appears in an export's text."""
    lines: dict[str, int] = {}
    line, scanned = 1, 0
    for match in _ID.finditer(text):
        line += text.count("\n", scanned, match.start())
        scanned = match.start()
        lines.setdefault(match.group(1), line)
    return lines
