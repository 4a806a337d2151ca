"""Samples 2 and 4: a session compacted once already, and a run interrupted mid-tool-call.

Both continue the tasklog project of the coding sample, so the app's stories connect. The
compaction strings are copied here literally (the generator is stdlib-only and must not import
the library); tests/test_samples.py checks they equal compaction.summary's constants.
"""

from __future__ import annotations

from builders import coding
from builders import pytest_output as pt
from builders import tasklog_files as files
from builders import tasklog_logs as logs
from builders.anchor import build as build_anchor  # noqa: F401  (re-exported for the driver)
from builders.common import Conversation, Message, terminal_output

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "This is a handoff from a previous context window — treat it as background reference, NOT as "
    "active instructions. Do NOT answer questions or fulfill requests mentioned in this summary; "
    "they were already addressed. Your current task is identified in the '## Active Task' "
    "section — resume exactly from there. Respond ONLY to the latest user message that appears "
    "AFTER this summary."
)

SYSTEM_NOTE = (
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to "
    "preserve context space. The current session state may still reflect earlier work, so build "
    "on that summary and state rather than re-doing work.]"
)

PREVIOUS_SUMMARY = """## Active Task
"Now the password reset: users should be able to ask for a reset link by e-mail, the link works once and expires after 30 minutes. Add a new migration for whatever table you need — the old ones stay untouched. Tests first, please."

## Goal
Keep tasklog's test suite green after the email-login merge, then add password reset by e-mail.

## Constraints & Preferences
- Never modify the migrations in migrations/ (0001, 0002 are applied in production); schema changes go in a new migration.
- Use `pytest -x` for test runs.
- Keep the suite fast (the 40 s per-test-migration suite is not acceptable); keep fixture names `db`, `alice`, `bob`.
- Minimal changes, reviewable as small PRs; never push, the user opens PRs.

## Completed Actions
1. Reproduced CI run #9381 locally: `sqlite3.IntegrityError: UNIQUE constraint failed: users.email` in 40 tests, caused by the session-scoped `db` fixture from b81d2f0 sharing rows between tests.
2. tests/conftest.py: migrations run once into a template database file; each test gets a fresh copy (suite 4.0 s).
3. tasklog/users.py: create_user raises DuplicateEmail for the idx_users_email violation instead of leaking the IntegrityError.
4. tasklog/tasks.py: due_soon compares timezone-aware datetimes; naive stored values are read as UTC (fixed `TypeError: can't compare offset-naive and offset-aware datetimes`).
5. ruff and mypy clean (installed types-python-dateutil locally; CI already had it).
6. tasklog/api.py: POST /api/signup answers 409 for DuplicateEmail (was a 500 on staging); test_signup_duplicate_email_returns_409 added.
7. Committed 8e41c07 on branch fix/test-isolation; the user opened and merged PR #214.
8. Reported one legacy case-duplicate on staging (p.nakamura@example.org, two capitalisations); the user will clean it up by hand.
9. Read tasklog/users.py, tasklog/api.py and tests/conftest.py on main after the merge to plan the password reset.

## Active State
Branch main at 5f0c2aa (PR #214 merged). 217 tests pass with `pytest -x`. No uncommitted changes.

## In Progress
Designing password reset: token table in a new migration 0003, tokens stored hashed.

## Blocked
None.

## Key Decisions
- Test isolation by copying a migrated template database, not by relaxing the e-mail index (would need a migration).
- DuplicateEmail is translated only for the e-mail index; duplicate usernames still raise IntegrityError.
- Reset tokens: 32 random bytes (secrets.token_urlsafe), only their SHA-256 stored, single use, 30-minute expiry.

## Resolved Questions
- Why did CI fail after the merge? Shared session database plus e-mail normalisation (see Completed Actions 1).
- Is the staging 500 on signup the same bug? Yes, the unhandled IntegrityError.

## Pending User Asks
Password reset by e-mail (see Active Task).

## Relevant Files
- tests/conftest.py — template-copy `db` fixture
- tasklog/users.py — create_user, DuplicateEmail, authenticate
- tasklog/api.py — signup/login endpoints
- migrations/0001_init.sql, migrations/0002_add_email.sql — read-only
- tasklog/mail.py — send_mail(to, subject, body) over SMTP (settings MAIL_HOST, MAIL_PORT)

## Remaining Work
- Migration 0003 for password_resets; tasklog/reset.py; API endpoints; tests; docs in README.

## Critical Context
- Staging: deploy@staging-1, database /srv/tasklog/data/tasklog.sqlite3.
- Local SMTP debugging: `python -m aiosmtpd -n -l localhost:8025` prints mails to stdout."""

MIGRATION_3 = """-- 0003_password_resets.sql: single-use password reset tokens
CREATE TABLE password_resets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    token_hash  TEXT    NOT NULL UNIQUE,
    created_at  TEXT    NOT NULL,
    expires_at  TEXT    NOT NULL,
    used_at     TEXT
);
CREATE INDEX idx_password_resets_user ON password_resets (user_id);"""

RESET_PY = '''"""Password reset by e-mail: single-use tokens that expire after 30 minutes.

Only the SHA-256 of a token is stored, so a leaked database does not leak working reset links.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from datetime import datetime, timedelta, timezone

from tasklog import mail, users

TOKEN_LIFETIME = timedelta(minutes=30)


class InvalidToken(Exception):
    """The token is unknown, already used or expired."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def request_reset(conn: sqlite3.Connection, email: str, base_url: str) -> None:
    """Send a reset link if the address has an account; say nothing either way (no enumeration)."""
    user = users.find_by_login(conn, email)
    if user is None:
        return
    token = secrets.token_urlsafe(32)
    now = datetime.now(timezone.utc)
    conn.execute(
        "INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) "
        "VALUES (?, ?, ?, ?)",
        (user.id, _hash(token), now.isoformat(), (now + TOKEN_LIFETIME).isoformat()),
    )
    conn.commit()
    mail.send_mail(
        user.email,
        "Reset your tasklog password",
        f"Hello {user.username},\\n\\nReset your password within 30 minutes:\\n"
        f"{base_url}/reset?token={token}\\n\\nIf you did not ask for this, ignore this e-mail.",
    )


def reset_password(conn: sqlite3.Connection, token: str, new_password: str) -> users.User:
    row = conn.execute(
        "SELECT id, user_id, expires_at, used_at FROM password_resets WHERE token_hash = ?",
        (_hash(token),),
    ).fetchone()
    now = datetime.now(timezone.utc)
    if row is None or row["used_at"] is not None:
        raise InvalidToken("unknown or already used")
    if datetime.fromisoformat(row["expires_at"]) < now:
        raise InvalidToken("expired")
    users.set_password(conn, row["user_id"], new_password)
    conn.execute("UPDATE password_resets SET used_at = ? WHERE id = ?", (now.isoformat(), row["id"]))
    conn.commit()
    return users.get_user(conn, row["user_id"])'''

TEST_RESET = """from datetime import timedelta

import pytest
from freezegun import freeze_time

from tasklog import reset, users


@pytest.fixture
def outbox(monkeypatch):
    sent = []
    monkeypatch.setattr("tasklog.mail.send_mail", lambda to, subject, body: sent.append((to, subject, body)))
    return sent


def _token(outbox):
    return outbox[-1][2].split("token=", 1)[1].split()[0]


def test_reset_flow(db, alice, outbox):
    reset.request_reset(db, "ALICE@example.com", "https://tasklog.test")
    assert outbox[0][0] == "alice@example.com"
    user = reset.reset_password(db, _token(outbox), "a brand new password")
    assert users.authenticate(db, "alice", "a brand new password") == user


def test_token_is_single_use(db, alice, outbox):
    reset.request_reset(db, "alice@example.com", "https://tasklog.test")
    token = _token(outbox)
    reset.reset_password(db, token, "a brand new password")
    with pytest.raises(reset.InvalidToken, match="already used"):
        reset.reset_password(db, token, "yet another password")


def test_token_expires_after_30_minutes(db, alice, outbox):
    with freeze_time("2024-06-04 10:00:00") as frozen:
        reset.request_reset(db, "alice@example.com", "https://tasklog.test")
        frozen.tick(timedelta(minutes=31))
        with pytest.raises(reset.InvalidToken, match="expired"):
            reset.reset_password(db, _token(outbox), "a brand new password")


def test_unknown_address_sends_nothing(db, outbox):
    reset.request_reset(db, "nobody@example.com", "https://tasklog.test")
    assert outbox == []


def test_delete_user_with_pending_reset(db, alice, outbox):
    reset.request_reset(db, "alice@example.com", "https://tasklog.test")
    users.delete_user(db, alice.id)
    assert users.list_users(db) == []"""

SET_PASSWORD = """

def set_password(conn: sqlite3.Connection, user_id: int, password: str) -> None:
    conn.execute(
        "UPDATE users SET password_hash = ? WHERE id = ?", (hash_password(password), user_id)
    )
    conn.commit()"""

TEST_LIMIT = """

def test_reset_requests_are_rate_limited(db, alice, outbox):
    for _ in range(5):
        reset.request_reset(db, "alice@example.com", "https://tasklog.test")
    assert len(outbox) == 3
"""

LIMIT_FAILURE = """============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0
rootdir: /home/maya/src/tasklog
configfile: pyproject.toml
plugins: cov-5.0.0, freezegun-0.4.2
collected 6 items

tests/test_reset.py .....F                                                [100%]

=================================== FAILURES ===================================
_____________________ test_reset_requests_are_rate_limited _____________________

db = <sqlite3.Connection object at 0x7fd90c2e3f10>
alice = User(id=1, username='alice', email='alice@example.com', created_at='2024-06-04T08:40:12+00:00', is_admin=False)
outbox = [('alice@example.com', 'Reset your tasklog password', 'Hello alice,\\n\\nReset your password within 30 minutes:\\nhttps://tasklog.test/reset?token=Yc2...'), ...]

    def test_reset_requests_are_rate_limited(db, alice, outbox):
        for _ in range(5):
            reset.request_reset(db, "alice@example.com", "https://tasklog.test")
>       assert len(outbox) == 3
E       AssertionError: assert 5 == 3
E        +  where 5 = len([('alice@example.com', 'Reset your tasklog password', ...), ...])

tests/test_reset.py:57: AssertionError
=========================== short test summary info ============================
FAILED tests/test_reset.py::test_reset_requests_are_rate_limited - AssertionError: assert 5 == 3
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
========================= 1 failed, 5 passed in 0.93s =========================="""

LIMIT_OLD = """    user = users.find_by_login(conn, email)
    if user is None:
        return"""

LIMIT_NEW = """    user = users.find_by_login(conn, email)
    if user is None:
        return
    (recent,) = conn.execute(
        "SELECT COUNT(*) FROM password_resets WHERE user_id = ? AND created_at > ?",
        (user.id, (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()),
    ).fetchone()
    if recent >= 3:
        # Same silence as for an unknown address: the caller cannot tell the difference.
        return"""

DELETE_OLD = """        conn.execute("DELETE FROM task_assignees WHERE user_id = ?", (user_id,))"""
DELETE_NEW = """        conn.execute("DELETE FROM task_assignees WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM password_resets WHERE user_id = ?", (user_id,))"""


def _fk_failure() -> str:
    traceback = """db = <sqlite3.Connection object at 0x7fd90c2e1a40>
alice = User(id=1, username='alice', email='alice@example.com', created_at='2024-06-04T08:12:40+00:00', is_admin=False)
outbox = [('alice@example.com', 'Reset your tasklog password', 'Hello alice,\\n\\nReset your password within 30 minutes:\\nhttps://tasklog.test/reset?token=q1Jk...')]

    def test_delete_user_with_pending_reset(db, alice, outbox):
        reset.request_reset(db, "alice@example.com", "https://tasklog.test")
>       users.delete_user(db, alice.id)

tests/test_reset.py:49: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

conn = <sqlite3.Connection object at 0x7fd90c2e1a40>, user_id = 1

    def delete_user(conn: sqlite3.Connection, user_id: int) -> None:
        with conn:
            conn.execute("DELETE FROM task_assignees WHERE user_id = ?", (user_id,))
>           conn.execute("DELETE FROM users WHERE id = ?", (user_id,))
E           sqlite3.IntegrityError: FOREIGN KEY constraint failed

tasklog/users.py:128: IntegrityError"""
    return pt.stopped_run(
        "tests/test_reset.py::test_delete_user_with_pending_reset",
        traceback,
        "sqlite3.IntegrityError: FOREIGN KEY constraint failed",
        "1 failed, 8 passed in 1.12s",
        count=5,
        progress="tests/test_reset.py ....F                                                 [100%]",
    )


def _smtp_log(count: int) -> str:
    blocks = []
    for index in range(count):
        token = f"{index:02d}" + "q1JkZt8mW3xYbN0pV7cR5sLd2HfGa9Ue4KoTiEyB6"[index % 7 :][:41]
        minute = 14 + index
        blocks.append(
            f"""---------- MESSAGE FOLLOWS ----------
Content-Type: text/plain; charset="utf-8"
Content-Transfer-Encoding: 7bit
MIME-Version: 1.0
Subject: Reset your tasklog password
From: tasklog <no-reply@tasklog.dev>
To: {("alice", "bob", "carol")[index % 3]}@example.com
Date: Tue, 04 Jun 2024 08:{minute:02d}:07 -0000
Message-ID: <171748{index:04d}.2291.{index * 7919 % 100000:05d}@laptop-maya>
X-Peer: ('127.0.0.1', {51200 + index * 3})

Hello {("alice", "bob", "carol")[index % 3]},

Reset your password within 30 minutes:
http://127.0.0.1:5000/reset?token={token}

If you did not ask for this, ignore this e-mail.
------------ END MESSAGE ------------"""
        )
    return "\n".join(blocks)


def build_already_compacted() -> list[Message]:
    c = Conversation("already-compacted")
    c.system(coding.SYSTEM + "\n\n" + SYSTEM_NOTE)
    c.user(coding.FIRST_REQUEST)
    c.assistant(
        "I'll reproduce the failure locally with `pytest -x`, read the failing test and the code "
        "it exercises, and fix the root cause without touching migrations/."
    )
    c.user(SUMMARY_PREFIX + "\n" + PREVIOUS_SUMMARY)
    c.assistant(
        "Resuming the password reset. Plan: migration 0003 with a password_resets table, "
        "tasklog/reset.py for issuing and redeeming tokens, tests first as requested, then the "
        "API endpoints."
    )
    c.read_file("tasklog/db.py", files.DB_PY)
    c.terminal(
        "ls migrations && git log --oneline -3",
        "0001_init.sql\n0002_add_email.sql\n"
        "5f0c2aa (HEAD -> main, origin/main) Merge pull request #214 from maya/fix/test-isolation\n"
        "8e41c07 Isolate test databases; raise DuplicateEmail; aware due_soon\n"
        "4c1e9a7 Merge branch 'email-login'",
    )
    c.write_file(
        "tests/test_reset.py",
        TEST_RESET,
        text="Tests first: the flow, single use, expiry, no user enumeration, and deletion.",
    )
    c.terminal(
        "python -m pytest -x tests/test_reset.py",
        f"{pt.SESSION_HEADER.format(verbose='', count=5)}\n"
        "tests/test_reset.py E                                                     [ 20%]\n\n"
        "==================================== ERRORS ====================================\n"
        "_______________________ ERROR collecting tests/test_reset.py ____________________\n"
        "ImportError while importing test module '/home/maya/src/tasklog/tests/test_reset.py'.\n"
        "tests/test_reset.py:7: in <module>\n    from tasklog import reset, users\n"
        "E   ImportError: cannot import name 'reset' from 'tasklog' (/home/maya/src/tasklog/tasklog/__init__.py)\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_reset.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n"
        "=============================== 1 error in 0.31s ===============================",
        2,
    )
    c.write_file(
        "migrations/0003_password_resets.sql",
        MIGRATION_3,
        text="Red as expected. A new migration (0001 and 0002 stay untouched):",
    )
    c.write_file("tasklog/reset.py", RESET_PY)
    c.terminal(
        f"cat >> tasklog/users.py << 'EOF'{SET_PASSWORD}\nEOF\npython -m pytest -x tests/test_reset.py",
        _fk_failure(),
        1,
    )
    c.assistant(
        "Four of five pass. test_delete_user_with_pending_reset fails with `sqlite3.IntegrityError: "
        "FOREIGN KEY constraint failed`: password_resets.user_id references users, and "
        "delete_user only clears task_assignees. I'll delete the user's reset rows in the same "
        "transaction rather than adding ON DELETE CASCADE, which would need another migration "
        "for a table we just created — cleaner to keep 0003 as it is."
    )
    c.patch(
        "tasklog/users.py",
        DELETE_OLD,
        DELETE_NEW,
        hunk=f" {DELETE_OLD.strip()}\n+{DELETE_NEW.split(chr(10))[1].strip()}",
    )
    c.terminal("python -m pytest -x", coding.passing_run(222, "4.38"))
    c.user(
        "Good. Also rate-limit reset requests: at most 3 per address per hour, and answer the API "
        "call the same way whether or not the limit was hit, so nobody can probe for accounts. "
        "Then show me what the mails look like on a local debugging SMTP server."
    )
    c.assistant(
        "Understood: a per-address limit of 3 per rolling hour, counted from password_resets "
        "rows, with an identical 202 response either way. Then a demo against aiosmtpd."
    )
    c.search(
        "password_resets",
        ".",
        [
            ("migrations/0003_password_resets.sql", 2, "CREATE TABLE password_resets ("),
            (
                "tasklog/reset.py",
                33,
                '"INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) "',
            ),
            (
                "tasklog/reset.py",
                50,
                '"SELECT id, user_id, expires_at, used_at FROM password_resets WHERE token_hash = ?",',
            ),
            (
                "tasklog/users.py",
                129,
                'conn.execute("DELETE FROM password_resets WHERE user_id = ?", (user_id,))',
            ),
        ],
    )
    c.read_file("tasklog/api.py", coding.API_PY)
    c.read_file("tasklog/reset.py", RESET_PY)
    c.read_file("tests/test_reset.py", TEST_RESET)
    c.terminal(
        "cat >> tests/test_reset.py << 'EOF'"
        + TEST_LIMIT
        + "EOF\npython -m pytest -x tests/test_reset.py",
        LIMIT_FAILURE,
        1,
    )
    c.assistant(
        "The new test fails as it should before the change: the fourth request still sent a mail "
        "(`AssertionError: assert 5 == 3`: all five requests sent a mail). Applying the limit."
    )
    c.patch("tasklog/reset.py", LIMIT_OLD, LIMIT_NEW)
    c.terminal(
        "(python -m aiosmtpd -n -l localhost:8025 > /tmp/smtp.log 2>&1 &) && sleep 1 && "
        "MAIL_PORT=8025 python -m tasklog.cli demo-reset alice bob carol --repeat 8 && cat /tmp/smtp.log",
        _smtp_log(9)
        + "\n"
        + "\n".join(
            f"demo-reset: {('alice', 'bob', 'carol')[n % 3]}@example.com attempt {n // 3 + 4}: "
            "rate limited (3 per hour), no mail sent, API would answer 202"
            for n in range(15)
        ),
    )
    c.terminal(
        "python -m pytest --collect-only -q | tail -n 230",
        logs.collect_only(),
        text="Checking the new tests are collected alongside the rest before the full verbose run:",
    )
    c.terminal(
        "python -m pytest -x -vv -o log_cli=true --log-cli-level=DEBUG",
        pt.verbose_run().replace("216", "223"),
    )
    c.terminal(
        "python -m pytest -x --cov --cov-report=term-missing -q | tail -n 16",
        coding.COVERAGE.replace(
            "tasklog/users.py            71      2     16      1    96%   103-104",
            "tasklog/reset.py            38      0      8      0   100%\n"
            "tasklog/users.py            77      2     16      1    96%   103-104",
        )
        + "\n223 passed in 5.61s",
    )
    c.terminal(
        "python -m pytest -x tests/test_reset.py -q",
        "......                                                                   [100%]\n6 passed in 0.88s",
    )
    c.assistant(
        "Rate limit in place: the demo sent 8 requests per address and exactly 3 mails per address "
        "arrived; the other 15 were refused silently and the API answers 202 either way. The full "
        "suite passes (223 tests) and migrations 0001–0002 are untouched; 0003 is new."
    )
    return c.messages


RUNBOOK = """Before you start, here is the runbook section for backfills — follow it:

### Backfills (docs/runbooks/backfill.md)
1. Read the backfill command and the migration that added the column. Know which rows the command will touch and in what order.
2. Always dry-run first, on a copy of the target database (`scp` it to /tmp). Compare the dry-run count with a manual SELECT; if they disagree by more than 1%, stop and ask.
3. Run the test suite on the branch you deploy from; a red suite means no backfill.
4. Check the target's traffic in the journal for the last hour. Do not run a backfill during a traffic peak or while an incident is open.
5. Run with an explicit `--db PATH`. Never rely on TASKLOG_DB or any other environment variable on shared hosts: staging mounts the production database read-only at /mnt/prod-ro for reporting, and its environment defines TASKLOG_PROD_DB for the report jobs.
6. Batches of 500 rows per transaction (the default). The command is idempotent; re-running after an interruption is safe.
7. Record the counts before and after in the ticket, with the exact commands you ran.
8. If anything unexpected happens — an error, an interruption, a count that does not match — stop, report what you saw, and wait for a human."""

MIGRATION_4 = """-- 0004_email_verified.sql: track whether an address has been verified
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_users_email_verified ON users (email_verified);"""

CLI_BACKFILL = '''@cli.command()
@click.argument("field", type=click.Choice(["email_verified"]))
@click.option("--db", "db_path", envvar="TASKLOG_DB", required=True, type=click.Path())
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d"]))
@click.option("--batch", default=500, show_default=True)
@click.option("--dry-run", is_flag=True)
def backfill(field, db_path, since, batch, dry_run):
    """Fill a column for existing rows from the audit log."""
    conn = connect(db_path)
    click.echo(f"backfill {field} since {since:%Y-%m-%d} on {db_path}")
    ids = [row[0] for row in conn.execute(SELECT_EMAIL_LOGINS, (since.isoformat(),))]
    for number, start in enumerate(range(0, len(ids), batch), 1):
        chunk = ids[start:start + batch]
        if dry_run:
            click.echo(f"[dry-run] batch {number:>3}: {len(chunk)} rows would change")
            continue
        with conn:
            conn.execute(UPDATE_SQL, chunk)
        click.echo(f"batch {number:>3}: {len(chunk)} rows updated")'''


def _backfill_batches(prefix: str, outcome: str) -> str:
    """The backfill's batch lines, dry run or real: 30,187 rows in 61 batches of 500."""
    return "\n".join(
        f"{prefix}batch {n:>3}: {500 if n < 61 else 187} rows {outcome} "
        f"(users.id {1 + (n - 1) * 500}..{min(n * 500, 30687)})"
        for n in range(1, 62)
    )


def build_orphans() -> list[Message]:
    c = Conversation("orphans")
    c.system(coding.SYSTEM)
    c.user(
        "We need to backfill `email_verified` for existing accounts on STAGING (migration 0004 "
        "added the column, default 0). Everyone who has logged in by e-mail since May counts as "
        "verified. Use the CLI's backfill command, staging only, and show me the counts before "
        "and after."
    )
    c.assistant(
        "I'll check the backfill command, dry-run it against a copy of the staging database, "
        "then run it on staging and compare counts."
    )
    c.read_file("tasklog/users.py", files.USERS_PY)
    c.terminal(
        "python -m tasklog.cli backfill --help",
        "Usage: python -m tasklog.cli backfill [OPTIONS] FIELD\n\n"
        "  Fill a column for existing rows from the audit log.\n\n"
        "Options:\n  --db PATH        database file  [env var: TASKLOG_DB; required]\n"
        "  --since DATE     only consider audit events after DATE\n"
        "  --batch INTEGER  rows per transaction  [default: 500]\n"
        "  --dry-run        report what would change, change nothing\n  --help           Show this message and exit.",
    )
    c.user(RUNBOOK)
    c.assistant(
        "Following the runbook: (1) read the command and the migration, (2) dry-run on a copy, "
        "(3) check the suite and that staging is quiet, (4) run it with an explicit --db path, "
        "(5) report counts before and after. I will not run anything against production."
    )
    c.read_file("migrations/0004_email_verified.sql", MIGRATION_4)
    c.read_file("tasklog/cli.py", CLI_BACKFILL, offset=120, limit=40)
    # A result lost when the agent's previous process crashed: the call stays without a result.
    c.terminal(
        "scp deploy@staging-1:/srv/tasklog/data/tasklog.sqlite3 /tmp/staging-copy.sqlite3",
        None,
        text="Copying the staging database for a dry run.",
    )
    c.user(
        "Your last command seems to have hung — the agent crashed and I restarted it. The copy is "
        "in /tmp/staging-copy.sqlite3 anyway, I made it by hand. Carry on."
    )
    c.terminal(
        'sqlite3 /tmp/staging-copy.sqlite3 "SELECT email_verified, COUNT(*) FROM users GROUP BY 1;"',
        "0|48212",
    )
    c.terminal(
        "TASKLOG_DB=/tmp/staging-copy.sqlite3 python -m tasklog.cli backfill email_verified --since 2024-05-01 --dry-run",
        _backfill_batches("[dry-run] ", "would change")
        + "\n[dry-run] total: 30,187 of 48,212 users would be marked verified",
    )
    c.terminal(
        "sqlite3 /tmp/staging-copy.sqlite3 \"SELECT COUNT(DISTINCT user_id) FROM audit_log WHERE action = 'login' AND method = 'email' AND at >= '2024-05-01';\"",
        "30187",
        text="Runbook step 2: the dry-run count against a manual SELECT.",
    )
    c.assistant(
        "The manual count (30,187) matches the dry run exactly, so the command selects the rows we expect."
    )
    c.terminal(
        "python -m pytest -x -vv -o log_cli=true --log-cli-level=DEBUG",
        pt.verbose_run(),
        text="Before touching staging, the suite on this branch:",
    )
    c.terminal(
        "ssh deploy@staging-1 journalctl -u tasklog --since 07:00 --until 08:00 --no-pager",
        logs.staging_log(150),
        text="Last check before writing: is staging quiet?",
    )
    c.assistant(
        "Dry run on the copy: 30,187 of 48,212 users would be marked verified, in 61 batches, and "
        "staging traffic is light (two old signup 500s, already fixed). Running it for real now."
    )
    # Interrupted by the user with Ctrl-C: this call never gets a result.
    c.terminal(
        "ssh deploy@staging-1 'cd /srv/tasklog && TASKLOG_DB=$TASKLOG_PROD_DB venv/bin/python -m tasklog.cli backfill email_verified --since 2024-05-01'",
        None,
    )
    c.user(
        "STOP. I hit Ctrl-C — that command used $TASKLOG_PROD_DB, which is the production database "
        "mounted read-only on staging for reports. Nothing should have been written, but check. "
        "Use /srv/tasklog/data/tasklog.sqlite3 explicitly."
    )
    # The killed process's output, flushed after the restart under the call id it had in the
    # crashed process: no call in this transcript has that id.
    c.tool_result(
        "call_7rWkQ2mXn4pLs9Vb1cTe8yHd",
        terminal_output(
            "backfill email_verified since 2024-05-01 on /mnt/prod-ro/tasklog.sqlite3\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/tasklog/tasklog/cli.py", line 142, in backfill\n'
            "    conn.execute(UPDATE_SQL, batch)\n"
            "sqlite3.OperationalError: attempt to write a readonly database\n"
            "^C\nAborted!",
            130,
        ),
    )
    c.assistant(
        "The late output above (from the interrupted run) shows `sqlite3.OperationalError: "
        "attempt to write a readonly database` on the first batch, so production was not "
        "modified. Verifying, then running against the staging file explicitly."
    )
    c.terminal(
        "ssh deploy@staging-1 \"sqlite3 /mnt/prod-ro/tasklog.sqlite3 'SELECT email_verified, COUNT(*) FROM users GROUP BY 1;'\"",
        "0|51877",
    )
    c.terminal(
        "ssh deploy@staging-1 'cd /srv/tasklog && venv/bin/python -m tasklog.cli backfill email_verified --db /srv/tasklog/data/tasklog.sqlite3 --since 2024-05-01'",
        "backfill email_verified since 2024-05-01 on /srv/tasklog/data/tasklog.sqlite3\n"
        + _backfill_batches("", "updated")
        + "\ntotal: 30,187 of 48,212 users marked verified",
    )
    c.assistant(
        "Done. Production: untouched (all 51,877 users still email_verified = 0; the interrupted "
        "run failed on its first write because the mount is read-only). Staging: before 0 / "
        "48,212 verified, after 30,187 / 48,212, matching the dry run."
    )
    return c.messages
