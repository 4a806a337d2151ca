"""Sweeps in the run history: record a parameter sweep, list the stored ones, reopen one.

A mixin of `History` (kept in its own module so the History class file stays readable): it uses
the same connection and the same content-addressed `sessions` table as runs, so a swept
conversation stored once is shared by its runs and its sweeps. Points hold only numbers (no
message text and no lost-fact text), and summariser details pass through `scrub`, so nothing
secret reaches the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction.errors import HistoryError
from compaction.history.connection import HistoryDB
from compaction.history.records import dumps, session_record
from compaction.history.scrub import MessageRedactor, scrub

if TYPE_CHECKING:  # the sweep module pulls in the engine; only needed when a sweep is read
    from compaction.lab.sweep.run import Sweep

#: The savings target a sweep's stored recommendation uses when the caller sets none.
DEFAULT_MIN_SAVINGS_PCT = 50.0

_LIGHT = (
    "id, created_at, label, grid, session_ids, base_config, summarizer, point_count, recommendation"
)


@dataclass
class SweepRow:
    """A stored sweep; `sweep` (the points) is None in listings and filled by `History.sweep`."""

    id: int
    created_at: str
    label: str | None
    grid: dict[str, list[Any]]
    session_ids: list[str]
    base_config: dict[str, Any]
    summarizer: str
    point_count: int
    recommendation: dict[str, Any] | None
    sweep: Sweep | None = field(default=None, repr=False)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SweepRow:
        recommendation = json.loads(row["recommendation"]) if row["recommendation"] else None
        return cls(
            id=int(row["id"]),
            created_at=str(row["created_at"]),
            label=row["label"],
            grid=json.loads(row["grid"]),
            session_ids=json.loads(row["session_ids"]),
            base_config=json.loads(row["base_config"]),
            summarizer=str(row["summarizer"]),
            point_count=int(row["point_count"]),
            recommendation=recommendation,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "label": self.label,
            "grid": self.grid,
            "session_ids": self.session_ids,
            "base_config": self.base_config,
            "summarizer": self.summarizer,
            "point_count": self.point_count,
            "recommendation": self.recommendation,
            "sweep": self.sweep.to_dict() if self.sweep is not None else None,
        }


class SweepStore:
    """The sweep methods of `History` (which provides `_db` and `path`)."""

    _db: HistoryDB
    path: Path

    def record_sweep(
        self, sweep: Sweep, label: str | None = None, min_savings_pct: float | None = None
    ) -> int:
        """Store `sweep` with its conversations and its recommendation; return the sweep id.

        The recommendation is for `min_savings_pct` (default: 50%). The conversations are stored
        in `sessions` when the sweep still holds their messages (a sweep read back from JSON
        keeps the session ids it had).
        """
        target = DEFAULT_MIN_SAVINGS_PCT if min_savings_pct is None else float(min_savings_pct)
        redactor = MessageRedactor()
        sessions = [
            session_record(messages, redactor, title=meta.get("title"))
            for messages, meta in zip(sweep.messages, sweep.conversations, strict=False)
        ]
        for session, meta in zip(sessions, sweep.conversations, strict=False):
            session.format = session.format or meta.get("format")
        session_ids = [s.id for s in sessions] if sessions else list(sweep.session_ids or [])
        data = sweep.to_dict()
        details = {k: data[k] for k in ("conversations", "duration_s", "jobs", "target_tokens")}
        recommendation = sweep.recommendation(target)
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")

        def insert() -> int:
            for session, meta in zip(sessions, sweep.conversations, strict=False):
                self._db.conn.execute(
                    "INSERT INTO sessions (id, title, title_full, format, message_count, tokens, "
                    "messages, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen",
                    [
                        session.id,
                        session.title,
                        session.title_full,
                        session.format,
                        len(session.messages),
                        meta.get("tokens"),
                        dumps(session.messages),
                        stamp,
                        stamp,
                    ],
                )
            cursor = self._db.conn.execute(
                "INSERT INTO sweeps (created_at, label, grid, session_ids, base_config, "
                "summarizer, point_count, points, details, recommendation) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    stamp,
                    label,
                    dumps(data["grid"]),
                    dumps(session_ids),
                    dumps(scrub(data["base_config"])),
                    str(scrub(data["summarizer"])),
                    len(sweep.points),
                    dumps(data["points"]),
                    dumps(scrub(details)),
                    dumps(recommendation) if recommendation is not None else None,
                ],
            )
            return int(cursor.lastrowid or 0)

        sweep_id = self._db.write(insert)
        sweep.session_ids = session_ids
        return sweep_id

    def sweeps(self, limit: int | None = 100) -> list[SweepRow]:
        """Stored sweeps, newest first, without their points."""
        sql = f"SELECT {_LIGHT} FROM sweeps ORDER BY id DESC"
        params: list[Any] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [SweepRow.from_row(row) for row in self._db.read(sql, params)]

    def sweep(self, sweep_id: int) -> SweepRow:
        """One stored sweep with its points (`.sweep`), ready for the frontier and charts."""
        from compaction.lab.sweep.run import Sweep

        rows = self._db.read(
            f"SELECT {_LIGHT}, points, details FROM sweeps WHERE id = ?", [int(sweep_id)]
        )
        if not rows:
            raise HistoryError(f"no sweep {sweep_id} in the run history at {self.path}")
        row = SweepRow.from_row(rows[0])
        details = json.loads(rows[0]["details"])
        row.sweep = Sweep.from_dict(
            {
                **details,
                "grid": row.grid,
                "base_config": row.base_config,
                "summarizer": row.summarizer,
                "points": json.loads(rows[0]["points"]),
                "session_ids": row.session_ids,
            }
        )
        return row

    def delete_sweep(self, sweep_id: int) -> None:
        """Delete a stored sweep (its sessions stay: runs and other sweeps may share them)."""
        self.sweep(sweep_id)  # raises HistoryError naming the missing id

        def remove() -> None:
            self._db.conn.execute("DELETE FROM sweeps WHERE id = ?", [int(sweep_id)])

        self._db.write(remove)
