"""The history's SQLite connection: open, refuse newer schemas, migrate, and transact safely.

One `HistoryDB` holds one connection (opened with `check_same_thread=False`, because Streamlit
serves each browser session from its own thread) and serialises its use with a lock. Every write
is a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so two writers never both
read and then both try to upgrade (which SQLite answers with an immediate "database is locked"
that the busy timeout cannot wait out). Lock errors that still escape are retried with a bounded
backoff, so several app sessions and CLI processes writing at once lose nothing.

Opened with `readonly=True`, the file is opened through SQLite's `mode=ro` URI: nothing is
written, not even the switch to WAL or a pending migration, so a read-only file (or one on
read-only media) can be listed; a write then fails with a HistoryError saying why. Migrations
that reads can do without (`READ_OPTIONAL`) may be pending on such a file.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from sqlite_utils import Database

from compaction.errors import HistoryError
from compaction.history.schema import KNOWN_MIGRATIONS, MIGRATION_SET, build_migrations

#: The environment variable naming the history file (tests point it at a temporary path).
ENV_VAR = "COMPACTION_LAB_DB"

_T = TypeVar("_T")
_ATTEMPTS = 8

#: Migrations a read-only open may find missing: the reading code falls back without them.
READ_OPTIONAL = frozenset({"m005_full_text", "m006_dedupe_and_message_store", "m007_corpus_scans"})


class HistoryReadOnlyError(HistoryError):
    """A write was attempted on a history opened read-only, or the file cannot be written."""


class HistoryNeedsUpgradeError(HistoryError):
    """A read-only open found a schema too old to read without migrating it first."""


def default_path() -> Path:
    """`$COMPACTION_LAB_DB`, else `history.db` in the platform's user data directory."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("compaction-lab")) / "history.db"


def _is_lock_error(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class HistoryDB:
    """An open, migrated history file at `path` (default: `default_path()`).

    Raises HistoryError when the file cannot be used: unreadable or not a SQLite database (the
    message names the path), or written by a newer version of compaction-lab (left untouched).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, readonly: bool = False) -> None:
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.readonly = readonly
        self._lock = threading.RLock()
        self.conn = self._connect_readonly() if readonly else self._connect()
        try:
            self.db = Database(self.conn)
            self._check_version()
            if readonly:
                self._check_readable()
                self.conn.execute("PRAGMA query_only = ON")
            else:
                self._retrying(self._prepare)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if "readonly" in str(exc).lower() or "read-only" in str(exc).lower():
                raise HistoryReadOnlyError(
                    f"the run history at {self.path} is read-only ({exc}): it can be listed, "
                    "shown, compared and exported, not changed"
                ) from exc
            raise HistoryError(f"cannot use the run history at {self.path}: {exc}") from exc
        except BaseException:
            self.conn.close()
            raise

    # -- opening ---------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(f"cannot open the run history at {self.path}: {exc}") from exc

    def _connect_readonly(self) -> sqlite3.Connection:
        if not self.path.exists():
            raise HistoryError(f"no run history at {self.path}")
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as exc:
                if "readonly" not in str(exc).lower() and "unable to open" not in str(exc):
                    raise
                # A WAL file in a directory this process cannot write: SQLite cannot create
                # the -shm index it needs even to read. Nobody here can change the file, so
                # read it as immutable (a leftover -wal file, if any, is not read).
                conn.close()
                conn = sqlite3.connect(
                    uri + "&immutable=1", uri=True, check_same_thread=False, timeout=30
                )
            return conn
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot open the run history at {self.path}: {exc}") from exc

    def _check_readable(self) -> None:
        missing = [
            name
            for name in KNOWN_MIGRATIONS
            if name not in self._applied() and name not in READ_OPTIONAL
        ]
        if missing:
            raise HistoryNeedsUpgradeError(
                f"the run history at {self.path} was written by an older version of "
                f"compaction-lab and must be upgraded (migrations {', '.join(missing)}) before "
                "it can be read; open it once where it is writable"
            )

    def columns(self, table: str) -> set[str]:
        """The column names of `table` (what an older, read-only file may lack)."""
        rows = self.conn.execute(f"PRAGMA table_info({table})").fetchall()
        return {str(row[1]) for row in rows}

    def _applied(self) -> list[str]:
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
        ).fetchone()
        if not exists:
            return []
        rows = self.conn.execute(
            "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid",
            [MIGRATION_SET],
        ).fetchall()
        return [str(row[0]) for row in rows]

    def _check_version(self) -> None:
        # Read-only on purpose: a file from a newer version must be left exactly as it was.
        unknown = [name for name in self._applied() if name not in KNOWN_MIGRATIONS]
        user_version = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if unknown or user_version > len(KNOWN_MIGRATIONS):
            found = f"migrations {', '.join(unknown)}" if unknown else f"version {user_version}"
            raise HistoryError(
                f"the run history at {self.path} was written by a newer version of "
                f"compaction-lab (schema {found}; this version knows {len(KNOWN_MIGRATIONS)}); "
                f"upgrade compaction-lab, or set {ENV_VAR} to use another file"
            )

    def _prepare(self) -> None:
        self.conn.execute("PRAGMA foreign_keys = ON")
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.conn.execute("PRAGMA journal_mode = WAL")
        if len(self._applied()) == len(KNOWN_MIGRATIONS):
            return
        # Take the write lock before looking at what is pending, so two processes opening a
        # new file at once do not both create the tables.
        with self._transaction():
            self._check_version()
            build_migrations().apply(self.db)
            self.conn.execute(f"PRAGMA user_version = {len(KNOWN_MIGRATIONS)}")

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _retrying(self, operation: Callable[[], _T]) -> _T:
        delay = 0.05
        with self._lock:
            for attempt in range(_ATTEMPTS):
                try:
                    return operation()
                except sqlite3.OperationalError as exc:
                    if not _is_lock_error(exc) or attempt == _ATTEMPTS - 1:
                        raise
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")  # the loop returns or raises

    def write(self, operation: Callable[[], _T]) -> _T:
        if self.readonly:
            raise HistoryReadOnlyError(
                f"the run history at {self.path} is open read-only: nothing was changed"
            )

        def attempt() -> _T:
            with self._transaction():
                return operation()

        try:
            return self._retrying(attempt)
        except sqlite3.Error as exc:
            if "readonly" in str(exc).lower():
                raise HistoryReadOnlyError(
                    f"cannot write to the run history at {self.path}: the file is read-only ({exc})"
                ) from exc
            raise HistoryError(f"cannot write to the run history at {self.path}: {exc}") from exc

    def read(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        def query() -> list[dict[str, Any]]:
            cursor = self.conn.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

        try:
            return self._retrying(query)
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot read the run history at {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self.conn.close()
