"""Source files of "tasklog", the small Flask + SQLite project the coding samples work on.

The files are written for these samples (a plausible little task tracker); the stories read,
search and patch them, so keeping them in one place keeps every read of a file identical.
"""

from __future__ import annotations

PYPROJECT = """[project]
name = "tasklog"
version = "0.9.2"
description = "A small team task tracker: Flask + SQLite"
requires-python = ">=3.11"
dependencies = [
    "flask>=3.0",
    "argon2-cffi>=23.1",
    "python-dateutil>=2.9",
]

[project.optional-dependencies]
test = ["pytest>=8.2", "pytest-cov>=5.0", "freezegun>=1.5"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
log_level = "INFO"

[tool.coverage.run]
source = ["tasklog"]
branch = true"""

DB_PY = '''"""Connection handling and the migration runner."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

log = logging.getLogger("tasklog.db")

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def connect(path: str | Path = ":memory:") -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), detect_types=sqlite3.PARSE_DECLTYPES)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def applied_migrations(conn: sqlite3.Connection) -> set[str]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    return {row["name"] for row in conn.execute("SELECT name FROM schema_migrations")}


def migrate(conn: sqlite3.Connection, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply every migration in `directory` that has not been applied yet, in name order."""
    done = applied_migrations(conn)
    applied = []
    for script in sorted(directory.glob("*.sql")):
        if script.name in done:
            continue
        log.info("applying migration %s", script.name)
        with conn:
            conn.executescript(script.read_text(encoding="utf-8"))
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (script.name,))
        applied.append(script.name)
    return applied'''

USERS_PY = '''"""User accounts: sign-up, login by username or email, password hashing."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone

from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError

log = logging.getLogger("tasklog.users")

_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)


class DuplicateEmail(ValueError):
    """Raised when an account with the same e-mail address already exists."""


class InvalidCredentials(Exception):
    pass


@dataclass(frozen=True)
class User:
    id: int
    username: str
    email: str
    created_at: str
    is_admin: bool = False


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def hash_password(password: str) -> str:
    if len(password) < 8:
        raise ValueError("password must be at least 8 characters")
    return _hasher.hash(password)


def normalize_email(email: str) -> str:
    # Added on the email-login branch: logins compare addresses case-insensitively.
    return email.strip().lower()


def _row_to_user(row: sqlite3.Row) -> User:
    return User(
        id=row["id"],
        username=row["username"],
        email=row["email"],
        created_at=row["created_at"],
        is_admin=bool(row["is_admin"]),
    )


def create_user(conn: sqlite3.Connection, username: str, email: str, password: str) -> User:
    email = normalize_email(email)
    log.debug("creating user %s <%s>", username, email)
    cur = conn.execute(
        "INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
        (username, email, hash_password(password), now_iso()),
    )
    conn.commit()
    return get_user(conn, cur.lastrowid)


def get_user(conn: sqlite3.Connection, user_id: int | None) -> User:
    row = conn.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
    if row is None:
        raise LookupError(f"no user with id {user_id}")
    return _row_to_user(row)


def find_by_login(conn: sqlite3.Connection, login: str) -> User | None:
    """Look a user up by username, or by e-mail address when `login` contains an @."""
    if "@" in login:
        row = conn.execute(
            "SELECT * FROM users WHERE email = ?", (normalize_email(login),)
        ).fetchone()
    else:
        row = conn.execute("SELECT * FROM users WHERE username = ?", (login,)).fetchone()
    return _row_to_user(row) if row is not None else None


def authenticate(conn: sqlite3.Connection, login: str, password: str) -> User:
    user = find_by_login(conn, login)
    if user is None:
        raise InvalidCredentials(login)
    (stored,) = conn.execute(
        "SELECT password_hash FROM users WHERE id = ?", (user.id,)
    ).fetchone()
    try:
        _hasher.verify(stored, password)
    except VerifyMismatchError:
        log.info("failed login for %s", login)
        raise InvalidCredentials(login) from None
    if _hasher.check_needs_rehash(stored):
        conn.execute(
            "UPDATE users SET password_hash = ? WHERE id = ?", (_hasher.hash(password), user.id)
        )
        conn.commit()
    return user


def list_users(conn: sqlite3.Connection, *, admins_only: bool = False) -> list[User]:
    query = "SELECT * FROM users"
    if admins_only:
        query += " WHERE is_admin = 1"
    return [_row_to_user(row) for row in conn.execute(query + " ORDER BY username")]


def set_admin(conn: sqlite3.Connection, user_id: int, is_admin: bool = True) -> None:
    conn.execute("UPDATE users SET is_admin = ? WHERE id = ?", (int(is_admin), user_id))
    conn.commit()


def delete_user(conn: sqlite3.Connection, user_id: int) -> None:
    with conn:
        conn.execute("DELETE FROM task_assignees WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM users WHERE id = ?", (user_id,))'''

TASKS_PY = '''"""Tasks: create, assign, complete, and the "due soon" view."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from dateutil import parser as dateparser

STATUSES = ("open", "in_progress", "done")


@dataclass(frozen=True)
class Task:
    id: int
    title: str
    status: str
    due: datetime | None
    owner_id: int


def _parse_due(value: str | None) -> datetime | None:
    if not value:
        return None
    return dateparser.isoparse(value)


def _row_to_task(row: sqlite3.Row) -> Task:
    return Task(
        id=row["id"],
        title=row["title"],
        status=row["status"],
        due=_parse_due(row["due"]),
        owner_id=row["owner_id"],
    )


def create_task(
    conn: sqlite3.Connection, owner_id: int, title: str, due: datetime | None = None
) -> Task:
    if not title.strip():
        raise ValueError("a task needs a title")
    cur = conn.execute(
        "INSERT INTO tasks (title, status, due, owner_id) VALUES (?, 'open', ?, ?)",
        (title.strip(), due.isoformat() if due else None, owner_id),
    )
    conn.commit()
    return get_task(conn, cur.lastrowid)


def get_task(conn: sqlite3.Connection, task_id: int | None) -> Task:
    row = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        raise LookupError(f"no task with id {task_id}")
    return _row_to_task(row)


def set_status(conn: sqlite3.Connection, task_id: int, status: str) -> Task:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; expected one of {STATUSES}")
    conn.execute("UPDATE tasks SET status = ? WHERE id = ?", (status, task_id))
    conn.commit()
    return get_task(conn, task_id)


def assign(conn: sqlite3.Connection, task_id: int, user_id: int) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO task_assignees (task_id, user_id) VALUES (?, ?)", (task_id, user_id)
    )
    conn.commit()


def due_soon(conn: sqlite3.Connection, days: int = 3, now: datetime | None = None) -> list[Task]:
    """Open tasks due within `days` days, soonest first."""
    now = now or datetime.now()
    horizon = now + timedelta(days=days)
    rows = conn.execute("SELECT * FROM tasks WHERE status != 'done' AND due IS NOT NULL")
    tasks = [_row_to_task(row) for row in rows]
    soon = [task for task in tasks if task.due is not None and task.due <= horizon]
    return sorted(soon, key=lambda task: task.due or now)'''

MIGRATION_1 = """-- 0001_init.sql: initial schema (applied in production 2024-03-02)
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    is_admin      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE tasks (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    title    TEXT    NOT NULL,
    status   TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done')),
    due      TEXT,
    owner_id INTEGER NOT NULL REFERENCES users (id)
);

CREATE TABLE task_assignees (
    task_id INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (task_id, user_id)
);"""

MIGRATION_2 = """-- 0002_add_email.sql: e-mail login (applied in production 2024-05-14)
ALTER TABLE users ADD COLUMN email TEXT;
UPDATE users SET email = username || '@legacy.tasklog.local' WHERE email IS NULL;
CREATE UNIQUE INDEX idx_users_email ON users (email);"""

CONFTEST = """import pytest

from tasklog import db as tasklog_db
from tasklog import users


@pytest.fixture(scope="session")
def db():
    # Shared for speed: running the migrations for every test made the suite take 40 s.
    conn = tasklog_db.connect()
    tasklog_db.migrate(conn)
    yield conn
    conn.close()


@pytest.fixture
def alice(db):
    return users.create_user(db, "alice", "alice@example.com", "correct horse")


@pytest.fixture
def bob(db):
    return users.create_user(db, "bob", "bob@example.com", "battery staple")"""

CONFTEST_FIXED = """import pytest

from tasklog import db as tasklog_db
from tasklog import users


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory):
    # Run the migrations once, then copy the file per test: isolation without the 40 s cost.
    path = tmp_path_factory.mktemp("db") / "template.sqlite3"
    conn = tasklog_db.connect(path)
    tasklog_db.migrate(conn)
    conn.close()
    return path


@pytest.fixture
def db(migrated_template, tmp_path):
    target = tmp_path / "test.sqlite3"
    target.write_bytes(migrated_template.read_bytes())
    conn = tasklog_db.connect(target)
    yield conn
    conn.close()


@pytest.fixture
def alice(db):
    return users.create_user(db, "alice", "alice@example.com", "correct horse")


@pytest.fixture
def bob(db):
    return users.create_user(db, "bob", "bob@example.com", "battery staple")"""

TEST_USERS = """import pytest

from tasklog import users


def test_create_user_returns_user(db):
    user = users.create_user(db, "carol", "carol@example.com", "long enough")
    assert user.username == "carol"
    assert user.email == "carol@example.com"
    assert not user.is_admin


def test_short_password_rejected(db):
    with pytest.raises(ValueError, match="at least 8"):
        users.create_user(db, "dave", "dave@example.com", "short")


def test_duplicate_email_rejected(db, alice):
    with pytest.raises(users.DuplicateEmail):
        users.create_user(db, "alice2", "alice@example.com", "another password")


def test_login_with_email_is_case_insensitive(db):
    alice = users.create_user(db, "alice", "Alice@Example.com", "s3cret-pass")
    assert users.authenticate(db, "ALICE@example.COM", "s3cret-pass") == alice


def test_login_with_username(db, bob):
    assert users.authenticate(db, "bob", "battery staple") == bob


def test_wrong_password(db, bob):
    with pytest.raises(users.InvalidCredentials):
        users.authenticate(db, "bob", "wrong")


def test_list_admins(db, alice, bob):
    users.set_admin(db, bob.id)
    assert [u.username for u in users.list_users(db, admins_only=True)] == ["bob"]"""

TEST_TASKS = """from datetime import datetime, timedelta, timezone

from freezegun import freeze_time

from tasklog import tasks


@freeze_time("2024-06-03 09:00:00")
def test_due_soon_orders_by_due_date(db, alice):
    now = datetime.now(timezone.utc)
    later = tasks.create_task(db, alice.id, "write report", now + timedelta(days=2))
    sooner = tasks.create_task(db, alice.id, "book room", now + timedelta(hours=5))
    tasks.create_task(db, alice.id, "plan offsite", now + timedelta(days=30))
    assert [t.id for t in tasks.due_soon(db)] == [sooner.id, later.id]


def test_done_tasks_not_due(db, alice):
    task = tasks.create_task(db, alice.id, "ship it", datetime.now(timezone.utc))
    tasks.set_status(db, task.id, "done")
    assert tasks.due_soon(db) == []"""

REPORTS_PY = '''"""Weekly reports and sprint burndown, exported as CSV for the Monday meeting."""

from __future__ import annotations

import csv
import io
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, timedelta

REPORT_COLUMNS = ("week", "owner", "opened", "closed", "overdue", "open_at_end")


@dataclass(frozen=True)
class WeekRow:
    week: str
    owner: str
    opened: int
    closed: int
    overdue: int
    open_at_end: int


def iso_week(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def week_bounds(week: str) -> tuple[date, date]:
    """Monday and Sunday of an ISO week written as 2024-W22."""
    year_text, week_text = week.split("-W")
    monday = date.fromisocalendar(int(year_text), int(week_text), 1)
    return monday, monday + timedelta(days=6)


def weekly_rows(conn: sqlite3.Connection, week: str | None = None) -> list[WeekRow]:
    # Reports are per calendar day in the office's timezone; a naive date is what we want here.
    today = datetime.now().date()
    week = week or iso_week(today)
    monday, sunday = week_bounds(week)
    rows = conn.execute(
        """
        SELECT u.username AS owner,
               SUM(t.created_on BETWEEN :monday AND :sunday)              AS opened,
               SUM(t.status = 'done' AND t.done_on BETWEEN :monday AND :sunday) AS closed,
               SUM(t.status != 'done' AND date(t.due) < :sunday)         AS overdue,
               SUM(t.status != 'done')                                   AS open_at_end
          FROM tasks t JOIN users u ON u.id = t.owner_id
         GROUP BY u.username
         ORDER BY u.username
        """,
        {"monday": monday.isoformat(), "sunday": sunday.isoformat()},
    )
    return [
        WeekRow(week, row["owner"], row["opened"] or 0, row["closed"] or 0,
                row["overdue"] or 0, row["open_at_end"] or 0)
        for row in rows
    ]


def weekly_csv(conn: sqlite3.Connection, week: str | None = None) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\\n")
    writer.writerow(REPORT_COLUMNS)
    for row in weekly_rows(conn, week):
        writer.writerow([row.week, row.owner, row.opened, row.closed, row.overdue, row.open_at_end])
    return buffer.getvalue()


def burndown(conn: sqlite3.Connection, start: date, days: int = 14) -> list[tuple[str, int]]:
    """Open task count at the end of each day of a sprint."""
    points = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM tasks WHERE created_on <= ? AND (done_on IS NULL OR done_on > ?)",
            (day.isoformat(), day.isoformat()),
        ).fetchone()
        points.append((day.isoformat(), count))
    return points'''

PIP_LIST = """Package              Version
-------------------- -----------
argon2-cffi          23.1.0
argon2-cffi-bindings 21.2.0
blinker              1.8.2
cffi                 1.16.0
click                8.1.7
coverage             7.5.3
Flask                3.0.3
freezegun            1.5.1
iniconfig            2.0.0
itsdangerous         2.2.0
Jinja2               3.1.4
MarkupSafe           2.1.5
mypy                 1.10.0
mypy-extensions      1.0.0
packaging            24.0
pip                  24.0
pluggy               1.5.0
pycparser            2.22
pytest               8.2.2
pytest-cov           5.0.0
python-dateutil      2.9.0.post0
ruff                 0.4.8
six                  1.16.0
tasklog              0.9.2       /home/maya/src/tasklog
typing_extensions    4.12.1
Werkzeug             3.0.3"""
