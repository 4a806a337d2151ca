"""`History`: the public face of the run history — record, list, search, compare, export runs.

Pages and the CLI use only this class. The connection, migrations and locking live in
`connection.py`; turning a CompactionResult into scrubbed rows lives in `records.py`; a run's
export bundle, read and imported, in `bundles.py`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compaction.errors import HistoryError

# The bundle names stay importable from here, where the CLI and the package look for them.
from compaction.history.bundles import BUNDLE_KIND as BUNDLE_KIND
from compaction.history.bundles import BUNDLE_VERSION as BUNDLE_VERSION
from compaction.history.bundles import export_run, import_run
from compaction.history.bundles import read_bundle as read_bundle
from compaction.history.compare import Comparison, compare_runs
from compaction.history.connection import HistoryDB, HistoryNeedsUpgradeError, default_path
from compaction.history.message_store import ORPHANS_SQL, externalise, fingerprint, resolve
from compaction.history.records import (
    LABEL_CHARS,
    bounded,
    dumps,
    run_columns,
    session_record,
    summary_rows,
)
from compaction.history.rows import LIGHT_RUN_COLUMNS, RunRow, SessionRow
from compaction.history.scans import ScanStore
from compaction.history.scrub import MessageRedactor
from compaction.history.sweeps import SweepStore

#: SQLite integers are signed 64-bit: a run id or limit outside this range cannot be stored.
MAX_SQLITE_INT = 2**63 - 1

_LIGHT = ", ".join(f"runs.{c}" for c in LIGHT_RUN_COLUMNS)
_RUN_SELECT = (
    f"SELECT {_LIGHT}, sessions.title AS session_title, sessions.format AS session_format "
    "FROM runs JOIN sessions ON sessions.id = runs.session_id"
)


def _like_escape(text: str) -> str:
    """`text` as a literal LIKE pattern (used with `ESCAPE '\\'`): `%` and `_` are not wildcards."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _in_range(value: int) -> bool:
    return -MAX_SQLITE_INT - 1 <= value <= MAX_SQLITE_INT


def now_iso() -> str:
    """The current UTC time in ISO 8601 (milliseconds; sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class History(SweepStore, ScanStore):
    """The run history at `path` (default: `$COMPACTION_LAB_DB` or the user data directory).

    Created and migrated on open. Raises HistoryError when the file cannot be used: unreadable or
    not a SQLite database (the message names the path), or written by a newer version of
    compaction-lab (the file is left untouched). Safe to share between threads.

    With `readonly=True` the file is opened read-only (SQLite `mode=ro`) and never changed:
    reads work, writes raise HistoryError. `History.for_reading()` picks that for an existing
    file.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, readonly: bool = False) -> None:
        self._db = HistoryDB(path, readonly=readonly)
        self.path: Path = self._db.path
        self.readonly = readonly
        # A read-only file of schema 4 has no full-text columns: read NULL for them.
        full_text = "label_full" in self._db.columns("runs")
        self._label_full = "runs.label_full" if full_text else "NULL"
        self._title_full = "sessions.title_full" if full_text else "NULL"

    @classmethod
    def for_reading(cls, path: str | os.PathLike[str] | None = None) -> History:
        """The history for listing, showing, comparing and exporting: an existing file is
        opened read-only, so reading it never writes (no WAL switch, no migration) and a
        read-only file can be read; a missing file, or one too old to read unmigrated, is
        opened (and created or migrated) as usual."""
        target = Path(path).expanduser() if path is not None else default_path()
        if target.exists():
            try:
                return cls(target, readonly=True)
            except HistoryNeedsUpgradeError:
                if not os.access(target, os.W_OK):
                    raise
        return cls(target)

    # -- writing ---------------------------------------------------------------------------

    def record(
        self,
        conversation: Any,
        result: Any,
        label: str | None = None,
        note: str | None = None,
        summarizer_info: dict[str, Any] | None = None,
        dedupe: bool = False,
    ) -> int:
        """Store one run of `conversation` (a message list or a Conversation); return its id.

        `result` is a CompactionResult; `summarizer_info` may describe the summariser (kind,
        model, endpoint) — any credential in it, in the config or in phase details is dropped.
        With `dedupe`, a run identical to one already stored (same conversation, config, focus,
        summariser and compacted messages) is not stored again: its id is returned.
        """
        return self._insert(
            conversation, result.to_dict(), label, note, summarizer_info, None, dedupe
        )

    def _insert(
        self,
        conversation: Any,
        report: dict[str, Any],
        label: str | None,
        note: str | None,
        summarizer_info: dict[str, Any] | None,
        created_at: str | None,
        dedupe: bool = False,
    ) -> int:
        redactor = MessageRedactor()  # shared: the report repeats the input's message objects
        session = session_record(conversation, redactor)
        columns = run_columns(report, summarizer_info, redactor)
        stored_report = json.loads(columns["report"])
        sections = summary_rows(stored_report.get("summary"))
        blobs = externalise(stored_report)
        columns["report"] = dumps(stored_report)
        columns["fingerprint"] = fingerprint(session.id, columns)
        tokens = int(report.get("tokens_before") or 0)
        label, label_full = bounded(label, LABEL_CHARS)

        def insert() -> int:
            if dedupe:
                same = self._db.conn.execute(
                    "SELECT id FROM runs WHERE fingerprint = ? ORDER BY id LIMIT 1",
                    [columns["fingerprint"]],
                ).fetchone()
                if same is not None:
                    return int(same[0])
            self._db.conn.executemany(
                "INSERT OR IGNORE INTO messages_store (id, message) VALUES (?, ?)",
                list(blobs.items()),
            )
            stamp = now_iso()
            self._db.conn.execute(
                "INSERT INTO sessions (id, title, title_full, format, message_count, tokens, "
                "messages, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, "
                "title_full = CASE WHEN sessions.title IS NULL THEN excluded.title_full "
                "ELSE sessions.title_full END, "
                "title = COALESCE(sessions.title, excluded.title), "
                "format = COALESCE(sessions.format, excluded.format)",
                [
                    session.id,
                    session.title,
                    session.title_full,
                    session.format,
                    len(session.messages),
                    tokens,
                    dumps(session.messages),
                    stamp,
                    stamp,
                ],
            )
            row = {
                "session_id": session.id,
                "created_at": created_at or stamp,
                **columns,
                "label": label,
                "label_full": label_full,
                "note": note,
            }
            names = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            cursor = self._db.conn.execute(
                f"INSERT INTO runs ({names}) VALUES ({marks})", list(row.values())
            )
            run_id = int(cursor.lastrowid or 0)
            self._db.conn.executemany(
                "INSERT INTO summaries (run_id, position, section, body) VALUES (?, ?, ?, ?)",
                [(run_id, *section) for section in sections],
            )
            return run_id

        return self._db.write(insert)

    def relabel(self, run_id: int, label: str | None, note: str | None = None) -> None:
        """Set a run's label (None clears it) and, when given, its note.

        A label longer than LABEL_CHARS is stored cut (for display) and in full (`label_full`).
        """
        self.run(run_id, full=False)  # raises HistoryError naming the missing id
        shown, full = bounded(label, LABEL_CHARS)

        def update() -> None:
            self._db.conn.execute(
                "UPDATE runs SET label = ?, label_full = ? WHERE id = ?", [shown, full, run_id]
            )
            if note is not None:
                self._db.conn.execute("UPDATE runs SET note = ? WHERE id = ?", [note, run_id])

        self._db.write(update)

    def delete(self, run_id: int) -> None:
        """Delete a run and its summary rows (its session stays: other runs may share it)."""
        self.run(run_id, full=False)

        def remove() -> None:
            self._db.conn.execute("DELETE FROM summaries WHERE run_id = ?", [run_id])
            self._db.conn.execute("DELETE FROM runs WHERE id = ?", [run_id])
            self._db.conn.execute(ORPHANS_SQL)  # the deleted run's phase messages go too

        self._db.write(remove)

    # -- reading ---------------------------------------------------------------------------

    def runs(
        self,
        session: str | None = None,
        limit: int | None = 100,
        search: str | None = None,
        label: str | None = None,
    ) -> list[RunRow]:
        """Runs, newest first; `session` is a session id or a unique-enough prefix of one."""
        where: list[str] = []
        params: list[Any] = []
        if session:
            where.append("runs.session_id LIKE ?")
            params.append(session.replace("%", "").replace("_", "") + "%")
        if label is not None:
            where.append(f"COALESCE({self._label_full}, runs.label) = ?")
            params.append(label)
        if search is not None:
            ids = self._search_ids(search)
            where.append(f"runs.id IN ({', '.join('?' for _ in ids) or 'NULL'})")
            params.extend(ids)
        sql = _RUN_SELECT + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY runs.id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(min(int(limit), MAX_SQLITE_INT))
        return [RunRow.from_row(row) for row in self._db.read(sql, params)]

    def search(self, text: str, limit: int | None = 100) -> list[RunRow]:
        """Runs whose summary (any section), label or note contains every word of `text`."""
        return self.runs(search=text, limit=limit)

    def _search_ids(self, text: str) -> list[int]:
        words = [w for w in text.split() if w.strip()]
        if not words:
            return []
        # Each word quoted: user text must never be parsed as FTS5 query syntax.
        match = " ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self._db.read(
            "SELECT DISTINCT summaries.run_id AS id FROM summaries_fts "
            "JOIN summaries ON summaries.id = summaries_fts.rowid "
            "WHERE summaries_fts MATCH ?",
            [match],
        )
        ids = {int(row["id"]) for row in rows}
        # Escaped: a `%` or `_` the user types is a character to find, not a wildcard.
        like = [
            f"(COALESCE({self._label_full}, runs.label, '') || ' ' || COALESCE(runs.note, '')) "
            "LIKE ? ESCAPE '\\'"
            for _ in words
        ]
        rows = self._db.read(
            f"SELECT runs.id AS id FROM runs WHERE {' AND '.join(like)}",
            [f"%{_like_escape(w)}%" for w in words],
        )
        ids.update(int(row["id"]) for row in rows)
        return sorted(ids)

    def run(self, run_id: int, full: bool = True) -> RunRow:
        """One run; with `full`, its compacted messages, report and summary sections too."""
        if not _in_range(int(run_id)):  # SQLite would raise OverflowError: no such run anyway
            raise HistoryError(f"no run {run_id} in the run history at {self.path}")
        rows = self._db.read(_RUN_SELECT + " WHERE runs.id = ?", [int(run_id)])
        if not rows:
            raise HistoryError(f"no run {run_id} in the run history at {self.path}")
        row = RunRow.from_row(rows[0])
        if full:
            heavy = self._db.read(
                f"SELECT runs.messages AS messages, runs.report AS report, "
                f"{self._label_full} AS label_full, {self._title_full} AS title_full "
                "FROM runs JOIN sessions ON sessions.id = runs.session_id WHERE runs.id = ?",
                [int(run_id)],
            )[0]
            row.label_full = heavy["label_full"]
            row.session_title_full = heavy["title_full"]
            row.messages = json.loads(heavy["messages"])
            row.report = json.loads(heavy["report"])
            resolve(row.report, self._stored_messages)
            row.report["messages"] = row.messages
            sections = self._db.read(
                "SELECT section, body FROM summaries WHERE run_id = ? ORDER BY position",
                [int(run_id)],
            )
            row.summary = {s["section"]: s["body"] for s in sections} or None
        return row

    def _stored_messages(self, ids: list[str]) -> list[tuple[str, str]]:
        marks = ", ".join("?" for _ in ids)
        rows = self._db.read(f"SELECT id, message FROM messages_store WHERE id IN ({marks})", ids)
        return [(str(row["id"]), str(row["message"])) for row in rows]

    def sessions(self) -> list[SessionRow]:
        """Every stored conversation, most recently seen first, with its number of runs."""
        rows = self._db.read(
            "SELECT id, title, format, message_count, tokens, first_seen, last_seen, "
            "(SELECT COUNT(*) FROM runs WHERE runs.session_id = sessions.id) AS run_count "
            "FROM sessions ORDER BY last_seen DESC, id"
        )
        return [SessionRow.from_row(row) for row in rows]

    def session(self, session_id: str) -> SessionRow:
        """One conversation with its messages (`session_id` may be a unique prefix)."""
        rows = self._db.read(
            f"SELECT *, {self._title_full} AS title_full, "
            "(SELECT COUNT(*) FROM runs WHERE runs.session_id = sessions.id) "
            "AS run_count FROM sessions WHERE id LIKE ? LIMIT 2",
            [session_id.replace("%", "").replace("_", "") + "%"],
        )
        if len(rows) != 1:
            problem = "no session" if not rows else "more than one session matches"
            raise HistoryError(f"{problem} {session_id!r} in the run history at {self.path}")
        return SessionRow.from_row(rows[0])

    def session_chart(self, session_id: str) -> list[dict[str, Any]]:
        """Per-run points for one session's chart: savings against the tail and summary budgets."""
        return [
            {
                "run_id": run.id,
                "created_at": run.created_at,
                "label": run.label,
                "summarizer": run.summarizer,
                "savings_pct": run.savings_pct,
                "tokens_after": run.tokens_after,
                "tail_budget_tokens": run.tail_budget_tokens,
                "summary_budget_tokens": run.summary_budget_tokens,
                "tail_token_ratio": run.config.get("tail_token_ratio"),
                "summary_ratio": run.config.get("summary_ratio"),
                "fallback_used": run.fallback_used,
            }
            for run in reversed(self.runs(session=session_id, limit=None))
        ]

    def compare(self, a: int, b: int) -> Comparison:
        """Config, figure, per-section and per-message-fate differences between two runs."""
        return compare_runs(self.run(a), self.run(b))

    # -- bundles ---------------------------------------------------------------------------

    def export(self, run_id: int) -> dict[str, Any]:
        """A self-contained JSON bundle of a run: conversation, config and result report."""
        return export_run(self, run_id)

    def import_bundle(self, bundle: Any) -> int:
        """Store a run from an `export()` bundle (a new run id; same session if already known)."""
        return import_run(self, bundle)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
