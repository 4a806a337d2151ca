"""Sample 1: a coding agent gets a failing pytest suite green in the tasklog project.

What it exercises: many tool calls; tasklog/users.py read three times with identical output
(Phase 1 dedupe); one ~30 KB verbose pytest log; two real IntegrityError tracebacks and a
TypeError (errors the one-line summaries must keep); user constraints; decisions; and a final
user request that Active Task must copy verbatim.
"""

from __future__ import annotations

from builders import pytest_output as pt
from builders import tasklog_files as files
from builders import tasklog_logs as logs
from builders.common import Conversation, Message

SYSTEM = """You are a coding agent working in the user's repository through tools. You can run shell commands (terminal), read files (read_file), create or overwrite files (write_file), make targeted edits (patch) and search the tree (search_files).

Guidelines:
- Investigate before editing: read the failing test and the code under test, reproduce the failure, then fix the root cause.
- Prefer the smallest change that fixes the problem. Do not reformat unrelated code.
- After every change, run the relevant tests again and read the output before claiming success.
- When the user states a constraint, follow it for the rest of the session.
- Never push to a remote or rewrite published history unless asked.

Environment: Linux, Python 3.11.9 in .venv (activated), git 2.43, ruff 0.4.8, mypy 1.10. Working directory: /home/maya/src/tasklog. The current date is 2024-06-03."""

FIRST_REQUEST = """Since I merged the email-login branch into main, the test suite fails and CI is red (run #9381). Please get `pytest` green again.

Two rules for this job:
- never modify the migrations in migrations/ — 0001 and 0002 are already applied in production, so any schema change would need a new migration and a deploy, and that's not what this is.
- use `pytest -x` so we stop at the first failure instead of scrolling through 40 red tests.

Keep the changes minimal; I want to review them as one small PR."""

CI_LOG_TAIL = """test	Run tests	2024-06-03T08:12:41.5532791Z ============================= test session starts ==============================
test	Run tests	2024-06-03T08:12:41.5533410Z platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0
test	Run tests	2024-06-03T08:12:41.5533862Z rootdir: /home/runner/work/tasklog/tasklog
test	Run tests	2024-06-03T08:12:41.5534105Z configfile: pyproject.toml
test	Run tests	2024-06-03T08:12:41.5534388Z plugins: cov-5.0.0, freezegun-0.4.2
test	Run tests	2024-06-03T08:12:42.0127745Z collected 216 items
test	Run tests	2024-06-03T08:12:42.0128211Z 
test	Run tests	2024-06-03T08:12:42.1190325Z tests/test_db.py ....                                                     [  1%]
test	Run tests	2024-06-03T08:12:42.6021957Z tests/test_users.py ..EF.F....                                           [  6%]
test	Run tests	2024-06-03T08:12:43.2207113Z tests/test_tasks.py F.FF..........                                       [ 12%]
test	Run tests	2024-06-03T08:12:44.9112350Z tests/test_permissions.py EEEEEEEEEEEEEEEEEEEEEEEEEEEE                   [ 25%]
test	Run tests	2024-06-03T08:12:46.0019288Z tests/test_api_auth.py .F..EEEE....F...                                 [ 32%]
test	Run tests	2024-06-03T08:12:47.5523719Z tests/test_api_tasks.py ..............................                   [ 46%]
test	Run tests	2024-06-03T08:12:48.0034167Z tests/test_notifications.py ...........                              [ 51%]
test	Run tests	2024-06-03T08:12:49.3311890Z tests/test_reports.py .......................                            [ 62%]
test	Run tests	2024-06-03T08:12:51.7755102Z tests/test_cli.py ......................................................  [ 86%]
test	Run tests	2024-06-03T08:12:52.4419021Z tests/test_search.py ..............................                      [100%]
test	Run tests	2024-06-03T08:12:52.4420556Z 
test	Run tests	2024-06-03T08:12:52.4421003Z =========================== short test summary info ============================
test	Run tests	2024-06-03T08:12:52.4421877Z ERROR tests/test_users.py::test_duplicate_email_rejected - sqlite3.IntegrityError: UNIQUE constraint failed: users.email
test	Run tests	2024-06-03T08:12:52.4422419Z FAILED tests/test_users.py::test_login_with_email_is_case_insensitive - sqlite3.IntegrityError: UNIQUE constraint failed: users.email
test	Run tests	2024-06-03T08:12:52.4422934Z FAILED tests/test_users.py::test_list_admins - AssertionError: assert ['alice', 'bob'] == ['bob']
test	Run tests	2024-06-03T08:12:52.4423571Z FAILED tests/test_tasks.py::test_due_soon_orders_by_due_date - TypeError: can't compare offset-naive and offset-aware datetimes
test	Run tests	2024-06-03T08:12:52.4424106Z FAILED tests/test_tasks.py::test_create_task_strips_title - sqlite3.IntegrityError: UNIQUE constraint failed: users.email
test	Run tests	2024-06-03T08:12:52.4424698Z ERROR tests/test_permissions.py::test_owner_can_edit - sqlite3.IntegrityError: UNIQUE constraint failed: users.email
test	Run tests	2024-06-03T08:12:52.4425203Z ERROR tests/test_permissions.py::test_role_matrix[admin-read] - sqlite3.IntegrityError: UNIQUE constraint failed: users.email
test	Run tests	2024-06-03T08:12:52.4425771Z FAILED tests/test_api_auth.py::test_signup_duplicate_email_returns_409 - assert 500 == 409
test	Run tests	2024-06-03T08:12:52.4426240Z ... 33 more
test	Run tests	2024-06-03T08:12:52.4426781Z ============ 7 failed, 169 passed, 40 errors in 11.08s ============
test	Run tests	2024-06-03T08:12:52.5120337Z ##[error]Process completed with exit code 1."""


def _integrity_failure(test: str, line: int, call: str, indent_call: str) -> str:
    """The body of a pytest failure that ends in the UNIQUE constraint on users.email."""
    return f"""{call}

{test}:{line}: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

conn = <sqlite3.Connection object at 0x7f3a2c1b9e40>, username = {indent_call}
password = 's3cret-pass'

    def create_user(conn: sqlite3.Connection, username: str, email: str, password: str) -> User:
        email = normalize_email(email)
        log.debug("creating user %s <%s>", username, email)
>       cur = conn.execute(
            "INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
            (username, email, hash_password(password), now_iso()),
        )
E       sqlite3.IntegrityError: UNIQUE constraint failed: users.email

tasklog/users.py:58: IntegrityError"""


INTEGRITY_ERROR = "sqlite3.IntegrityError: UNIQUE constraint failed: users.email"


def first_failure() -> str:
    traceback = _integrity_failure(
        "tests/test_users.py",
        22,
        """db = <sqlite3.Connection object at 0x7f3a2c1b9e40>

    def test_login_with_email_is_case_insensitive(db):
>       alice = users.create_user(db, "alice", "Alice@Example.com", "s3cret-pass")""",
        "'alice', email = 'alice@example.com'",
    )
    return pt.stopped_run(
        "tests/test_users.py::test_login_with_email_is_case_insensitive",
        traceback,
        INTEGRITY_ERROR,
        "1 failed, 7 passed in 0.94s",
        log="DEBUG    tasklog.users:users.py:55 creating user alice <alice@example.com>",
    )


def second_failure() -> str:
    traceback = _integrity_failure(
        "tests/test_users.py",
        18,
        """db = <sqlite3.Connection object at 0x7f11d03a5b70>
alice = User(id=1, username='alice', email='alice@example.com', created_at='2024-06-03T09:24:17+00:00', is_admin=False)

    def test_duplicate_email_rejected(db, alice):
        with pytest.raises(users.DuplicateEmail):
>           users.create_user(db, "alice2", "alice@example.com", "another password")""",
        "'alice2', email = 'alice@example.com'",
    )
    return pt.stopped_run(
        "tests/test_users.py::test_duplicate_email_rejected",
        traceback,
        INTEGRITY_ERROR,
        "1 failed, 6 passed in 0.71s",
        log="DEBUG    tasklog.users:users.py:55 creating user alice <alice@example.com>\n"
        "DEBUG    tasklog.users:users.py:55 creating user alice2 <alice@example.com>",
    )


def third_failure() -> str:
    traceback = """db = <sqlite3.Connection object at 0x7f11d03a6c00>
alice = User(id=1, username='alice', email='alice@example.com', created_at='2024-06-03T09:00:00+00:00', is_admin=False)

    @freeze_time("2024-06-03 09:00:00")
    def test_due_soon_orders_by_due_date(db, alice):
        now = datetime.now(timezone.utc)
        later = tasks.create_task(db, alice.id, "write report", now + timedelta(days=2))
        sooner = tasks.create_task(db, alice.id, "book room", now + timedelta(hours=5))
        tasks.create_task(db, alice.id, "plan offsite", now + timedelta(days=30))
>       assert [t.id for t in tasks.due_soon(db)] == [sooner.id, later.id]

tests/test_tasks.py:14: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

conn = <sqlite3.Connection object at 0x7f11d03a6c00>, days = 3, now = FakeDatetime(2024, 6, 3, 9, 0)

    def due_soon(conn: sqlite3.Connection, days: int = 3, now: datetime | None = None) -> list[Task]:
        \"\"\"Open tasks due within `days` days, soonest first.\"\"\"
        now = now or datetime.now()
        horizon = now + timedelta(days=days)
        rows = conn.execute("SELECT * FROM tasks WHERE status != 'done' AND due IS NOT NULL")
        tasks = [_row_to_task(row) for row in rows]
>       soon = [task for task in tasks if task.due is not None and task.due <= horizon]
E       TypeError: can't compare offset-naive and offset-aware datetimes

tasklog/tasks.py:91: TypeError"""
    return pt.stopped_run(
        "tests/test_tasks.py::test_due_soon_orders_by_due_date",
        traceback,
        "TypeError: can't compare offset-naive and offset-aware datetimes",
        "1 failed, 15 passed in 1.02s",
    )


API_FAILURE_LOG = """DEBUG    tasklog.users:users.py:55 creating user alice2 <alice@example.com>
ERROR    tasklog.api:app.py:838 Exception on /api/signup [POST]
Traceback (most recent call last):
  File "/home/maya/src/tasklog/.venv/lib/python3.11/site-packages/flask/app.py", line 880, in full_dispatch_request
    rv = self.dispatch_request()
         ^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/maya/src/tasklog/.venv/lib/python3.11/site-packages/flask/app.py", line 865, in dispatch_request
    return self.ensure_sync(self.view_functions[rule.endpoint])(**view_args)  # type: ignore[no-any-return]
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/maya/src/tasklog/tasklog/api.py", line 44, in signup
    user = users.create_user(get_db(), data["username"], data["email"], data["password"])
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/maya/src/tasklog/tasklog/users.py", line 68, in create_user
    raise DuplicateEmail(email) from None
tasklog.users.DuplicateEmail: alice@example.com"""


def api_failure() -> str:
    traceback = """client = <FlaskClient <Flask 'tasklog.api'>>, alice = User(id=1, username='alice', email='alice@example.com', created_at='2024-06-03T09:31:02+00:00', is_admin=False)

    def test_signup_duplicate_email_returns_409(client, alice):
        response = client.post(
            "/api/signup",
            json={"username": "alice2", "email": "ALICE@example.com", "password": "long enough"},
        )
>       assert response.status_code == 409
E       assert 500 == 409
E        +  where 500 = <WrapperTestResponse streamed [500 INTERNAL SERVER ERROR]>.status_code

tests/test_api_auth.py:27: AssertionError"""
    return pt.stopped_run(
        "tests/test_api_auth.py::test_signup_duplicate_email_returns_409",
        traceback,
        "assert 500 == 409",
        "1 failed, 64 passed in 2.87s",
        log=API_FAILURE_LOG,
        count=218,
    )


def passing_run(count: int, seconds: str) -> str:
    text = f"""{pt.SESSION_HEADER.format(verbose="", count=count)}
{pt.progress_lines()}

============================= {count} passed in {seconds}s ============================="""
    return text


USERS_PATCH_OLD = """    email = normalize_email(email)
    log.debug("creating user %s <%s>", username, email)
    cur = conn.execute(
        "INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
        (username, email, hash_password(password), now_iso()),
    )
    conn.commit()"""

USERS_PATCH_NEW = """    email = normalize_email(email)
    log.debug("creating user %s <%s>", username, email)
    try:
        cur = conn.execute(
            "INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, ?, ?)",
            (username, email, hash_password(password), now_iso()),
        )
    except sqlite3.IntegrityError as error:
        # idx_users_email (migration 0002) is the only UNIQUE index on email; the username
        # constraint reports "users.username" and keeps propagating unchanged.
        if "users.email" in str(error):
            raise DuplicateEmail(email) from None
        raise
    conn.commit()"""

TASKS_PATCH_OLD = """    now = now or datetime.now()
    horizon = now + timedelta(days=days)"""

TASKS_PATCH_NEW = """    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    horizon = now + timedelta(days=days)"""

PARSE_DUE_OLD = """    return dateparser.isoparse(value)"""

PARSE_DUE_NEW = """    parsed = dateparser.isoparse(value)
    # Rows written before the email-login branch stored naive timestamps; they were UTC.
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)"""

DUE_SOON_COMMIT = """commit 5d0aa12c81f9e3b0d7a4c2e6f1b89d3a7e5c4f21
Author: Jonas Berg <jonas@tasklog.dev>
Date:   Mon May 27 11:40:52 2024 +0200

    Due-soon view: compare against timezone-aware datetimes

    The API now stores due dates with their UTC offset (the web client sends
    ISO 8601 with Z). Tests create aware datetimes to match.

diff --git a/tasklog/tasks.py b/tasklog/tasks.py
index 77d1e0a..4f2b9c3 100644
--- a/tasklog/tasks.py
+++ b/tasklog/tasks.py
@@ -44,7 +44,7 @@ def create_task(
         raise ValueError("a task needs a title")
     cur = conn.execute(
         "INSERT INTO tasks (title, status, due, owner_id) VALUES (?, 'open', ?, ?)",
-        (title.strip(), due.strftime("%Y-%m-%d %H:%M:%S") if due else None, owner_id),
+        (title.strip(), due.isoformat() if due else None, owner_id),
     )
     conn.commit()
     return get_task(conn, cur.lastrowid)
diff --git a/tests/test_tasks.py b/tests/test_tasks.py
index 1c0e6d2..9a83f0b 100644
--- a/tests/test_tasks.py
+++ b/tests/test_tasks.py
@@ -1,13 +1,13 @@
-from datetime import datetime, timedelta
+from datetime import datetime, timedelta, timezone
 
 from freezegun import freeze_time
 
 from tasklog import tasks
 
 
 @freeze_time("2024-06-03 09:00:00")
 def test_due_soon_orders_by_due_date(db, alice):
-    now = datetime.now()
+    now = datetime.now(timezone.utc)
     later = tasks.create_task(db, alice.id, "write report", now + timedelta(days=2))
     sooner = tasks.create_task(db, alice.id, "book room", now + timedelta(hours=5))
     tasks.create_task(db, alice.id, "plan offsite", now + timedelta(days=30))"""

DIFF_STAT = """ tasklog/api.py         |  2 ++
 tasklog/tasks.py        |  8 ++++++--
 tasklog/users.py        | 15 ++++++++++-----
 tests/conftest.py       | 21 +++++++++++++++-----
 tests/test_api_auth.py  |  9 +++++++++
 5 files changed, 42 insertions(+), 13 deletions(-)"""

COMMIT_MESSAGE = """Isolate test databases; raise DuplicateEmail; aware due_soon

b81d2f0 made the `db` fixture session-scoped to avoid running the
migrations for every test (40 s). Tests then shared rows, and since the
email-login branch normalises addresses, fixtures collided on
idx_users_email (sqlite3.IntegrityError: UNIQUE constraint failed:
users.email) in 40 tests.

The migrations now run once into a template database file and each test
gets a fresh copy of it: isolation at ~4 s for the suite.

Also:
- users.create_user raises DuplicateEmail instead of leaking the
  IntegrityError; the signup API answers 409 for it (was a 500).
- tasks.due_soon compares timezone-aware datetimes; naive rows are UTC.

Migrations are unchanged."""

API_PY = '''"""The JSON API: sign-up, login, tasks."""

from __future__ import annotations

from flask import Blueprint, g, jsonify, request, session

from tasklog import tasks, users
from tasklog.db import connect

bp = Blueprint("api", __name__, url_prefix="/api")


def get_db():
    if "db" not in g:
        g.db = connect(current_app_config()["DATABASE"])
    return g.db


def current_app_config():
    from flask import current_app

    return current_app.config


@bp.post("/signup")
def signup():
    data = request.get_json(silent=True) or {}
    missing = [key for key in ("username", "email", "password") if not data.get(key)]
    if missing:
        return jsonify(error=f"missing fields: {', '.join(missing)}"), 400
    try:
        user = users.create_user(get_db(), data["username"], data["email"], data["password"])
    except ValueError as error:
        return jsonify(error=str(error)), 400
    session["user_id"] = user.id
    return jsonify(id=user.id, username=user.username, email=user.email), 201


@bp.post("/login")
def login():
    data = request.get_json(silent=True) or request.form
    try:
        user = users.authenticate(get_db(), data.get("login", ""), data.get("password", ""))
    except users.InvalidCredentials:
        return jsonify(error="invalid login or password"), 401
    session["user_id"] = user.id
    return jsonify(id=user.id, username=user.username)


@bp.post("/logout")
def logout():
    session.clear()
    return "", 204


@bp.get("/tasks")
def list_tasks():
    if "user_id" not in session:
        return jsonify(error="login required"), 401
    rows = get_db().execute(
        "SELECT * FROM tasks WHERE owner_id = ? ORDER BY id", (session["user_id"],)
    )
    return jsonify([dict(row) for row in rows])'''

TEST_API_HEAD = """import pytest

from tasklog import users
from tasklog.app import create_app


@pytest.fixture
def client(db, tmp_path):
    app = create_app({"TESTING": True, "DATABASE": db, "SECRET_KEY": "test"})
    with app.test_client() as client:
        yield client


@pytest.fixture
def alice(db):
    return users.create_user(db, "alice", "alice@example.com", "correct horse")


def test_signup_creates_account(client):
    response = client.post("/api/signup", json={"username": "zoe", "email": "zoe@example.com",
                                               "password": "long enough"})"""

API_PATCH_OLD = """    except ValueError as error:
        return jsonify(error=str(error)), 400"""

API_PATCH_NEW = """    except users.DuplicateEmail:
        return jsonify(error="an account with this e-mail address already exists"), 409
    except ValueError as error:
        return jsonify(error=str(error)), 400"""

CI_YML = """name: CI
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
      - name: Install
        run: pip install -e ".[test]" ruff==0.4.8 mypy==1.10.0 types-python-dateutil
      - name: Lint
        run: ruff check tasklog tests
      - name: Types
        run: mypy tasklog
      - name: Run tests
        run: pytest -x --cov --cov-report=term-missing"""

COVERAGE = """---------- coverage: platform linux, python 3.11.9-final-0 -----------
Name                     Stmts   Miss Branch BrPart  Cover   Missing
--------------------------------------------------------------------
tasklog/__init__.py          2      0      0      0   100%
tasklog/api.py              58      3     12      2    93%   17-19, 71->exit
tasklog/cli.py              74      6     22      3    90%   48-50, 97, 112->115, 130
tasklog/db.py               24      0      6      0   100%
tasklog/notifications.py    41      2     10      1    94%   66-67
tasklog/reports.py          63      5     18      2    91%   88-92, 104->107
tasklog/search.py           19      0      4      0   100%
tasklog/tasks.py            52      1     14      1    97%   31
tasklog/users.py            71      2     16      1    96%   103-104
--------------------------------------------------------------------
TOTAL                      404     19    102     10    94%"""


def build() -> list[Message]:
    c = Conversation("fix-failing-tests")
    c.system(SYSTEM)
    c.user(FIRST_REQUEST)
    c.assistant(
        "I'll reproduce the failure locally with `pytest -x`, read the failing test and the code "
        "it exercises, and fix the root cause without touching migrations/. First, a look at what "
        "the merge changed and at the CI log."
    )
    c.terminal(
        "git log --oneline -8 && git status --short",
        "4c1e9a7 (HEAD -> main, origin/main) Merge branch 'email-login'\n"
        "b81d2f0 Share the test database across the session (suite took 40 s)\n"
        "7a3390e Normalise e-mail addresses on sign-up and login\n"
        "e02c5b1 Log in with e-mail address as well as username\n"
        "91f7c3d Add email column and unique index (migration 0002)\n"
        "5d0aa12 Due-soon view: compare against timezone-aware datetimes\n"
        "3e6b7f8 Bump flask to 3.0.3\n"
        "c9a04d2 Weekly report: include burndown points",
    )
    c.terminal("gh run view 9381 --log-failed | tail -n 30", CI_LOG_TAIL)
    c.terminal(
        "gh run view 9381 --log-failed",
        logs.ci_failed_log(),
        text="40 errors and 7 failures; most errors look like one cause. The full failed log:",
    )
    c.assistant(
        "Nearly every error is the same `sqlite3.IntegrityError: UNIQUE constraint failed: "
        "users.email`, raised while the `alice` fixture sets up; the others are a timezone "
        "TypeError in due_soon, an admin-list assertion and a 500 from signup. Let me see "
        "exactly what the email-login merge changed."
    )
    c.terminal(
        "git diff 3e6b7f8 4c1e9a7 -- migrations tasklog/users.py tests/conftest.py",
        logs.merge_diff(),
    )
    c.terminal(
        "ls tasklog tests migrations",
        "migrations:\n0001_init.sql\n0002_add_email.sql\n\n"
        "tasklog:\n__init__.py\napi.py\ncli.py\ndb.py\nnotifications.py\nreports.py\n"
        "search.py\ntasks.py\nusers.py\n\n"
        "tests:\n__init__.py\nconftest.py\ntest_api_auth.py\ntest_api_tasks.py\ntest_cli.py\n"
        "test_db.py\ntest_notifications.py\ntest_permissions.py\ntest_reports.py\n"
        "test_search.py\ntest_tasks.py\ntest_users.py",
    )
    c.read_file("pyproject.toml", files.PYPROJECT)
    c.terminal("pip list", files.PIP_LIST)
    c.terminal("python -m pytest --collect-only -q", logs.collect_only())
    c.terminal("python -m pytest -x", first_failure(), 1)
    c.assistant(
        "Reproduced: the first failure is `sqlite3.IntegrityError: UNIQUE constraint failed: "
        "users.email` in test_login_with_email_is_case_insensitive, raised by the INSERT in "
        "create_user. The test creates 'Alice@Example.com', which create_user normalises to "
        "'alice@example.com'. Let me read users.py and the fixtures."
    )
    c.read_file("tasklog/users.py", files.USERS_PY)
    c.read_file("tests/conftest.py", files.CONFTEST)
    c.read_file("migrations/0002_add_email.sql", files.MIGRATION_2)
    c.read_file("tests/test_users.py", files.TEST_USERS)
    c.terminal(
        "python - <<'EOF'\nimport sqlite3\nconn = sqlite3.connect(':memory:')\n"
        "conn.executescript(open('migrations/0001_init.sql').read() + open('migrations/0002_add_email.sql').read())\n"
        "ins = \"INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, 'x', 'now')\"\n"
        "conn.execute(ins, ('a', 'Alice@Example.com'))\nconn.execute(ins, ('b', 'alice@example.com'))\n"
        "print('mixed case: both inserted')\nconn.execute(ins, ('c', 'alice@example.com'))\nEOF",
        "mixed case: both inserted\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 8, in <module>\n'
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
        1,
        text="Checking how idx_users_email treats case, straight against the migrations:",
    )
    c.search(
        "create_user\\(",
        "tests/",
        [
            (
                "tests/conftest.py",
                18,
                'return users.create_user(db, "alice", "alice@example.com", "correct horse")',
            ),
            (
                "tests/conftest.py",
                23,
                'return users.create_user(db, "bob", "bob@example.com", "battery staple")',
            ),
            (
                "tests/test_users.py",
                7,
                'user = users.create_user(db, "carol", "carol@example.com", "long enough")',
            ),
            (
                "tests/test_users.py",
                14,
                'users.create_user(db, "dave", "dave@example.com", "short")',
            ),
            (
                "tests/test_users.py",
                19,
                'users.create_user(db, "alice2", "alice@example.com", "another password")',
            ),
            (
                "tests/test_users.py",
                22,
                'alice = users.create_user(db, "alice", "Alice@Example.com", "s3cret-pass")',
            ),
            (
                "tests/test_permissions.py",
                9,
                'owner = users.create_user(db, "olga", "olga@example.com", "password123")',
            ),
            (
                "tests/test_api_auth.py",
                12,
                'users.create_user(db, "alice", "alice@example.com", "correct horse")',
            ),
        ],
        target="content",
    )
    c.terminal(
        "git show b81d2f0 --stat && git show b81d2f0 -- tests/conftest.py | head -n 30",
        "commit b81d2f0e55c1a9d4f0c2b7c64a1d2e9a3f1b7e02\n"
        "Author: Maya Lindqvist <maya@tasklog.dev>\nDate:   Thu May 30 17:02:11 2024 +0200\n\n"
        "    Share the test database across the session (suite took 40 s)\n\n"
        " tests/conftest.py | 6 +++---\n 1 file changed, 3 insertions(+), 3 deletions(-)\n\n"
        "diff --git a/tests/conftest.py b/tests/conftest.py\n"
        "index 3f2a1c9..8be04d1 100644\n--- a/tests/conftest.py\n+++ b/tests/conftest.py\n"
        "@@ -5,9 +5,9 @@ from tasklog import users\n \n \n-@pytest.fixture\n"
        '+@pytest.fixture(scope="session")\n def db():\n'
        "-    conn = tasklog_db.connect()\n"
        "+    # Shared for speed: running the migrations for every test made the suite take 40 s.\n"
        "+    conn = tasklog_db.connect()\n     tasklog_db.migrate(conn)\n     yield conn\n",
    )
    c.read_file(
        "tasklog/users.py",
        files.USERS_PY,
        text="Before deciding, let me re-check how create_user and normalize_email interact.",
    )
    c.assistant(
        "Root cause: commit b81d2f0 made the `db` fixture session-scoped, so every test shares "
        "one in-memory database. Rows leak between tests: the `alice` fixture inserted "
        "alice@example.com in an earlier test, and since the email-login branch normalises "
        "addresses, 'Alice@Example.com' collides with it on idx_users_email. The schema is "
        "right; the tests are not isolated.\n\nOptions:\n1. Drop the UNIQUE index or make it "
        "COLLATE NOCASE — ruled out, that is a migration change.\n2. Go back to a function-scoped "
        "fixture that runs the migrations per test — correct but brings back the 40 s suite.\n"
        "3. Run the migrations once into a template database file, and give each test a fresh "
        "copy of that file. Isolation with almost no cost.\n\nI'll go with option 3."
    )
    c.user(
        "Agreed on option 3. Don't make the suite slow again — the 40 s run was the whole reason "
        "for b81d2f0. And keep the fixture names (`db`, `alice`, `bob`), a lot of tests use them."
    )
    c.write_file("tests/conftest.py", files.CONFTEST_FIXED)
    c.terminal("python -m pytest -x", second_failure(), 1)
    c.assistant(
        "Progress: test_login_with_email_is_case_insensitive passes now. The next failure is "
        "genuine: test_duplicate_email_rejected expects users.DuplicateEmail, but create_user lets "
        "the raw `sqlite3.IntegrityError: UNIQUE constraint failed: users.email` escape. "
        "DuplicateEmail is declared in users.py but never raised. I'll translate the IntegrityError "
        "for the email index only, so a duplicate username still surfaces as before."
    )
    c.read_file(
        "tasklog/users.py",
        files.USERS_PY,
        text="Reading users.py once more to patch create_user against its exact current text.",
    )
    c.patch("tasklog/users.py", USERS_PATCH_OLD, USERS_PATCH_NEW)
    c.terminal("python -m pytest -x", third_failure(), 1)
    c.read_file("tasklog/tasks.py", files.TASKS_PY)
    c.read_file("tests/test_tasks.py", files.TEST_TASKS)
    c.search(
        "datetime.now\\(",
        "tasklog/",
        [
            (
                "tasklog/users.py",
                37,
                'return datetime.now(timezone.utc).isoformat(timespec="seconds")',
            ),
            ("tasklog/tasks.py", 88, "now = now or datetime.now()"),
            ("tasklog/reports.py", 41, "today = datetime.now().date()"),
            ("tasklog/notifications.py", 23, "sent_at = datetime.now(timezone.utc)"),
        ],
    )
    c.read_file("tasklog/reports.py", files.REPORTS_PY)
    c.terminal("git show 5d0aa12 -- tasklog/tasks.py tests/test_tasks.py", DUE_SOON_COMMIT)
    c.assistant(
        "due_soon() defaults `now` to a naive datetime.now(), while tasks created by the tests "
        "(and by the API since 5d0aa12) store aware UTC timestamps, so the comparison raises "
        "`TypeError: can't compare offset-naive and offset-aware datetimes`. Older rows in "
        "production may still be naive, so I'll make both sides aware: default `now` to UTC and "
        "read naive stored values as UTC. reports.py also uses a naive now(), but only to pick "
        "the calendar week, and its comment says that is deliberate, so I'm leaving it alone."
    )
    c.patch("tasklog/tasks.py", TASKS_PATCH_OLD, TASKS_PATCH_NEW)
    c.patch("tasklog/tasks.py", PARSE_DUE_OLD, PARSE_DUE_NEW)
    c.terminal("python -m pytest -x", passing_run(216, "4.02"))
    c.terminal(
        "for i in 1 2 3; do /usr/bin/time -f '%e s' python -m pytest -x -q -p no:randomly 2>&1 | tail -n 2; done",
        "216 passed in 4.02s\n4.61 s\n216 passed in 3.97s\n4.55 s\n216 passed in 4.05s\n4.63 s",
        text="Green. Since speed was the reason for the shared fixture, let me time it:",
    )
    c.assistant(
        "All 216 tests pass with `pytest -x` in 4.0 s (the shared-database suite took 3.6 s, the "
        "old per-test migrations 40 s). Changes so far: tests/conftest.py (template database "
        "copied per test), tasklog/users.py (DuplicateEmail instead of a raw IntegrityError), "
        "tasklog/tasks.py (timezone-aware due_soon). Nothing under migrations/ was touched."
    )
    c.user(
        "Nice. Run the whole suite once more with -vv and live DEBUG logs so I can see that the "
        "migrations are applied only once per session now. Still with -x."
    )
    c.terminal("python -m pytest -x -vv -o log_cli=true --log-cli-level=DEBUG", pt.verbose_run())
    c.assistant(
        "Confirmed: the live log shows `applying migration 0001_init.sql` and "
        "`applying migration 0002_add_email.sql` exactly once, during setup of the first test, "
        "and every one of the 216 tests passes. Each test gets its own copy of the migrated "
        "template, so no rows leak between tests any more."
    )
    c.user("CI also runs ruff and mypy, check those too before we call it done.")
    c.read_file(".github/workflows/ci.yml", CI_YML)
    c.terminal(
        "ruff check tasklog tests",
        "tasklog/tasks.py:7:38: F401 [*] `datetime.timezone` imported but unused\n"
        "tests/conftest.py:1:1: I001 [*] Import block is un-sorted or un-formatted\n"
        "Found 2 errors.\n[*] 2 fixable with the `--fix` option.",
        1,
    )
    c.assistant(
        "The F401 is stale: my patch does use timezone now, so ruff is reading an old file? "
        "Let me check the import line in tasks.py before fixing anything automatically."
    )
    c.read_file("tasklog/tasks.py", "\n".join(files.TASKS_PY.split("\n")[:12]), offset=1, limit=12)
    c.assistant(
        "The import is `from datetime import datetime, timedelta, timezone` and timezone is used "
        "by both patches, so the F401 came from ruff's cache of the file before the patch. "
        "The I001 in conftest.py is real (my new fixture module). Clearing the cache and "
        "letting ruff sort the imports."
    )
    c.terminal(
        "ruff clean && ruff check --fix tasklog tests && ruff check tasklog tests",
        "Removing cache at: .ruff_cache\nFound 1 error (1 fixed, 0 remaining).\nAll checks passed!",
    )
    c.terminal(
        "mypy tasklog",
        "tasklog/tasks.py:33: error: Returning Any from function declared to return "
        '"datetime | None"  [no-any-return]\nFound 1 error in 1 file (checked 9 source files)',
        1,
    )
    c.assistant(
        "mypy does not know the type of `dateparser.isoparse` in the branch where I call "
        "`.replace`. CI installs types-python-dateutil; locally it is missing."
    )
    c.terminal(
        "pip install -q types-python-dateutil && mypy tasklog",
        "Success: no issues found in 9 source files",
    )
    c.terminal(
        "python -m pytest -x --cov --cov-report=term-missing -q",
        f"{'.' * 80}\n{'.' * 80}\n{'.' * 56}\n{COVERAGE}\n216 passed in 5.37s",
    )
    c.user(
        "One more thing from staging: signing up with an address that already exists returns "
        "500 instead of a proper error. Is that the same DuplicateEmail thing? If so fix it in "
        "the API too, with a test. Same rules as before."
    )
    _api_fix(c)
    return c.messages


def _api_fix(c: Conversation) -> None:
    c.terminal(
        "ssh deploy@staging-1 journalctl -u tasklog --since 07:00 --until 08:00 --no-pager",
        logs.staging_log(),
    )
    c.assistant(
        "Two 500s on POST /api/signup in the staging hour, both `sqlite3.IntegrityError: UNIQUE "
        "constraint failed: users.email` from create_user — the same unhandled error as in the "
        "tests, reached through the API."
    )
    c.search(
        "create_user",
        "tasklog/",
        [
            (
                "tasklog/users.py",
                53,
                "def create_user(conn: sqlite3.Connection, username: str, email: str, password: str) -> User:",
            ),
            (
                "tasklog/api.py",
                33,
                'user = users.create_user(get_db(), data["username"], data["email"], data["password"])',
            ),
            ("tasklog/cli.py", 61, "user = users.create_user(conn, username, email, password)"),
        ],
    )
    c.read_file("tasklog/api.py", API_PY)
    c.read_file("tests/test_api_auth.py", TEST_API_HEAD, offset=1, limit=20)
    c.assistant(
        "Yes, same root: before my change create_user leaked sqlite3.IntegrityError, which the "
        "signup view does not catch, hence the 500. Now it raises DuplicateEmail — a ValueError "
        "subclass — so the view would answer 400 with the address in the message. The right "
        "answer for an existing account is 409 Conflict. I'll catch DuplicateEmail first and "
        "write the test before the fix to see it fail."
    )
    test_code = (
        "\n\ndef test_signup_duplicate_email_returns_409(client, alice):\n"
        "    response = client.post(\n"
        '        "/api/signup",\n'
        '        json={"username": "alice2", "email": "ALICE@example.com", "password": "long enough"},\n'
        "    )\n"
        "    assert response.status_code == 409\n"
        '    assert response.get_json() == {"error": "an account with this e-mail address already exists"}\n'
    )
    c.terminal(
        "cat >> tests/test_api_auth.py << 'EOF'"
        + test_code
        + "EOF\npython -m pytest -x tests/test_api_auth.py",
        api_failure(),
        1,
    )
    c.assistant(
        "Interesting: 500, not 400. The captured log shows `tasklog.users.DuplicateEmail: "
        "alice@example.com` escaping the view — api.py catches ValueError, but the test app "
        "registers an errorhandler for ValueError subclasses first? No: the traceback shows "
        "line 44 of an older api.py; the dev server keeps a stale .pyc. Either way the fix is "
        "the explicit except clause."
    )
    c.patch("tasklog/api.py", API_PATCH_OLD, API_PATCH_NEW)
    c.terminal(
        "python -m pytest -x tests/test_api_auth.py::test_signup_duplicate_email_returns_409 -q",
        ".                                                                        [100%]\n1 passed in 0.38s",
    )
    c.terminal("python -m pytest -x", passing_run(217, "4.11"))
    c.terminal(
        "git diff --stat && git status --short",
        DIFF_STAT + "\n M tasklog/api.py\n M tasklog/tasks.py\n M tasklog/users.py\n"
        " M tests/conftest.py\n M tests/test_api_auth.py",
    )
    c.terminal(
        'ssh deploy@staging-1 "sqlite3 -header -column /srv/tasklog/data/tasklog.sqlite3 '
        "'SELECT lower(email) AS address, COUNT(*) AS accounts FROM users "
        "GROUP BY lower(email) HAVING COUNT(*) > 1;'\"",
        "address                 accounts\n----------------------  --------\n"
        "p.nakamura@example.org  2       ",
        text="One more check: does staging already hold addresses that differ only in case? "
        "Those would now be impossible to log in to by e-mail.",
    )
    c.assistant(
        "Staging has one pair, p.nakamura@example.org in two capitalisations, created before "
        "normalisation existed. find_by_login lowercases the login, so the mixed-case account "
        "cannot log in by e-mail (username login still works). Fixing that data needs a "
        "migration or a one-off script, which is outside this PR and your no-migrations rule; "
        "I'll mention it in the PR description as a follow-up."
    )
    c.assistant(
        "Done: 217 tests pass with `pytest -x`, ruff and mypy are clean, and nothing under "
        "migrations/ changed. The signup endpoint now answers 409 with a clear message for an "
        "existing address (any capitalisation), covered by "
        "test_signup_duplicate_email_returns_409."
    )
    c.user(
        "Great work. Please commit this on a new branch `fix/test-isolation` with a message that "
        "explains the fixture change, and write me a short PR description (what broke, why, what "
        "changed, how it was tested). Don't push — I'll open the PR myself."
    )
    c.terminal(
        "git switch -c fix/test-isolation && git add tasklog tests && git diff --cached --stat",
        "Switched to a new branch 'fix/test-isolation'\n" + DIFF_STAT,
    )
    c.terminal(
        "git commit -q -F - <<'EOF'\n" + COMMIT_MESSAGE + "\nEOF\ngit log -1 --stat",
        "commit 8e41c07d2b9a5f3e1c6d0a7b4f2e9c8d1a3b5f60 (HEAD -> fix/test-isolation)\n"
        "Author: Maya Lindqvist <maya@tasklog.dev>\nDate:   Mon Jun 3 10:02:37 2024 +0200\n\n"
        + "\n".join(f"    {line}" if line else "" for line in COMMIT_MESSAGE.split("\n"))
        + "\n\n"
        + DIFF_STAT,
    )
