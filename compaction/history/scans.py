"""Corpus scans in the run history: each file's rows, replaced when the file changes, and each
scan's selection and aggregates.

A mixin of `History`, like sweeps. What a scan stores is counts, sizes and names (no message
text; titles are redacted by the scan), in plain columns a person can query with SQL or
Datasette:

    SELECT agent, median FROM scan_aggregates
     WHERE scan_id = (SELECT max(id) FROM scans) AND metric = 'ratio';

`previous_scans(paths)` is what makes a scan incremental: the rows stored for each path with the
size and mtime they were read at. `save_file_scan` replaces a path's rows in one transaction, so
a scan interrupted between two files leaves every stored file whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compaction.errors import HistoryError
from compaction.history.connection import HistoryDB
from compaction.lab.corpus.records import CompactionScan, FileScan, SessionScan
from compaction.lab.corpus.stats import GroupStats

_FILE_COLUMNS = (
    "path, agent, project, size, mtime, status, error, conversations, warnings, duration_s"
)
#: SQLite's default limit on host parameters is 999 on older builds: read paths in chunks.
_CHUNK = 500


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _insert(conn: Any, table: str, row: dict[str, Any]) -> None:
    names = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(row.values()))


@dataclass
class ScanRow:
    """A stored scan: when, over what, how it went."""

    id: int
    created_at: str
    roots: list[str]
    files: int
    read: int
    reused: int
    failed: int
    stopped: bool
    where_run: str
    duration_s: float

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ScanRow:
        return cls(
            id=int(row["id"]),
            created_at=str(row["created_at"]),
            roots=json.loads(row["roots"]),
            files=int(row["files"]),
            read=int(row["read"]),
            reused=int(row["reused"]),
            failed=int(row["failed"]),
            stopped=bool(row["stopped"]),
            where_run=str(row["where_run"]),
            duration_s=float(row["duration_s"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class ScanStore:
    """The scan methods of `History` (which provides `_db` and `path`)."""

    _db: HistoryDB
    path: Path

    def _has_scans(self) -> bool:
        return "path" in self._db.columns("scan_files")

    def save_file_scan(self, scanned: FileScan) -> None:
        """Store one file's rows, replacing what was stored for its path."""
        stamp = _now()

        def write() -> None:
            conn = self._db.conn
            conn.execute("DELETE FROM scan_files WHERE path = ?", [scanned.path])
            _insert(
                conn,
                "scan_files",
                {
                    "path": scanned.path,
                    "agent": scanned.agent,
                    "project": scanned.project,
                    "size": scanned.size,
                    "mtime": scanned.mtime,
                    "status": scanned.status,
                    "error": scanned.error,
                    "conversations": len(scanned.sessions),
                    "warnings": scanned.warnings,
                    "duration_s": scanned.duration_s,
                    "scanned_at": stamp,
                },
            )
            for session in scanned.sessions:
                _insert(conn, "scan_sessions", {"path": scanned.path, **session.row()})
                for compaction in session.compactions:
                    _insert(
                        conn,
                        "scan_compactions",
                        {
                            "path": scanned.path,
                            "conversation": session.conversation,
                            **compaction.row(),
                        },
                    )

        self._db.write(write)

    def previous_scans(self, paths: Iterable[str]) -> dict[str, FileScan]:
        """What is stored for each of `paths` (those never scanned are absent)."""
        if not self._has_scans():
            return {}
        wanted = list(dict.fromkeys(paths))
        found: dict[str, FileScan] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            found.update(self._file_scans(chunk))
        return found

    def _file_scans(self, paths: Sequence[str]) -> dict[str, FileScan]:
        marks = ", ".join("?" for _ in paths)
        files = self._db.read(
            f"SELECT {_FILE_COLUMNS} FROM scan_files WHERE path IN ({marks})", list(paths)
        )
        sessions = self._db.read(
            f"SELECT * FROM scan_sessions WHERE path IN ({marks}) ORDER BY path, conversation",
            list(paths),
        )
        compactions = self._db.read(
            f"SELECT * FROM scan_compactions WHERE path IN ({marks}) "
            "ORDER BY path, conversation, number",
            list(paths),
        )
        by_session: dict[tuple[str, int], list[CompactionScan]] = {}
        for row in compactions:
            key = (row["path"], row["conversation"])
            by_session.setdefault(key, []).append(CompactionScan.from_row(row))
        by_file: dict[str, list[SessionScan]] = {}
        for row in sessions:
            key = (row["path"], row["conversation"])
            session = SessionScan.from_row(row, by_session.get(key, []))
            by_file.setdefault(row["path"], []).append(session)
        result = {}
        for row in files:
            result[row["path"]] = FileScan(
                path=row["path"],
                size=int(row["size"]),
                mtime=float(row["mtime"]),
                agent=row["agent"],
                project=row["project"] or "",
                status=row["status"],
                error=row["error"],
                sessions=by_file.get(row["path"], []),
                duration_s=float(row["duration_s"]),
                warnings=int(row["warnings"]),
            )
        return result

    def record_scan(
        self,
        roots: Sequence[str],
        paths: Sequence[str],
        counts: dict[str, int],
        stopped: bool,
        where_run: str,
        duration_s: float,
        groups: Sequence[GroupStats],
    ) -> int:
        """Store one scan: its selection (`paths`), how it went, its aggregates; its id."""
        stamp = _now()

        def write() -> int:
            conn = self._db.conn
            cursor = conn.execute(
                "INSERT INTO scans (created_at, roots, files, read, reused, failed, stopped, "
                "where_run, duration_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    stamp,
                    json.dumps(list(roots)),
                    len(paths),
                    counts.get("read", 0),
                    counts.get("reused", 0),
                    counts.get("failed", 0),
                    int(stopped),
                    where_run,
                    round(duration_s, 4),
                ],
            )
            scan_id = int(cursor.lastrowid or 0)
            conn.executemany(
                "INSERT OR IGNORE INTO scan_members (scan_id, path) VALUES (?, ?)",
                [(scan_id, path) for path in paths],
            )
            for group in groups:
                for dist in (group.distributions or {}).values():
                    _insert(
                        conn,
                        "scan_aggregates",
                        {"scan_id": scan_id, "agent": group.agent, **dist.to_dict()},
                    )
                for metric in (
                    "files",
                    "failed",
                    "sessions",
                    "sessions_compacted",
                    "compactions",
                    "auto",
                    "manual",
                    "readable",
                    "pending_lost",
                ):
                    value = getattr(group, metric)
                    _insert(
                        conn,
                        "scan_aggregates",
                        {
                            "scan_id": scan_id,
                            "agent": group.agent,
                            "metric": f"count_{metric}",
                            "n": value,
                            "total": value,
                        },
                    )
            return scan_id

        return self._db.write(write)

    def scans(self, limit: int | None = 50) -> list[ScanRow]:
        """Stored scans, newest first."""
        if not self._has_scans():
            return []
        sql = "SELECT * FROM scans ORDER BY id DESC"
        params: list[Any] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [ScanRow.from_row(row) for row in self._db.read(sql, params)]

    def scan_selection(self, scan_id: int | None = None) -> tuple[ScanRow, list[FileScan]]:
        """A stored scan (the latest by default) and the files it covered, as stored now."""
        rows = self.scans(limit=None)
        if scan_id is not None:
            rows = [row for row in rows if row.id == scan_id]
        if not rows:
            which = f"scan {scan_id}" if scan_id is not None else "scan"
            raise HistoryError(
                f"no {which} in the run history at {self.path}: run `compaction scan` first"
            )
        members = self._db.read(
            "SELECT path FROM scan_members WHERE scan_id = ? ORDER BY path", [rows[0].id]
        )
        stored = self.previous_scans(row["path"] for row in members)
        return rows[0], [stored[row["path"]] for row in members if row["path"] in stored]

    def scan_aggregates(self, scan_id: int) -> list[dict[str, Any]]:
        return self._db.read(
            "SELECT * FROM scan_aggregates WHERE scan_id = ? ORDER BY agent, metric", [scan_id]
        )
