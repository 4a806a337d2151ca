"""Long, realistic logs for the tasklog coding story: the full CI failure log, the staging
server log with the signup 500s, `pytest --collect-only`, and the merge diff (made with difflib
from the real before/after file texts, so it is a genuine unified diff)."""

from __future__ import annotations

import difflib

from builders import pytest_output as pt
from builders import tasklog_files as files

_CI_FAILURES = (
    [
        ("tests/test_users.py::test_duplicate_email_rejected", "ERROR", "integrity"),
        ("tests/test_users.py::test_login_with_email_is_case_insensitive", "FAILED", "integrity"),
        ("tests/test_users.py::test_list_admins", "FAILED", "admins"),
        ("tests/test_tasks.py::test_due_soon_orders_by_due_date", "FAILED", "tz"),
        ("tests/test_tasks.py::test_create_task_strips_title", "FAILED", "integrity"),
        ("tests/test_api_auth.py::test_signup_duplicate_email_returns_409", "FAILED", "500"),
    ]
    + [
        (f"tests/test_permissions.py::test_role_matrix[{role}-{action}]", "ERROR", "integrity")
        for role in ("admin", "owner", "assignee", "viewer")
        for action in ("read", "edit", "assign", "delete", "export")
    ]
    + [
        (f"tests/test_api_auth.py::test_login_payloads[{kind}]", "ERROR", "integrity")
        for kind in ("username", "email", "email-upper", "missing-password")
    ]
)


def _stamp(second: int, fraction: int) -> str:
    return f"2024-06-03T08:12:{second:02d}.{fraction:07d}Z"


def _ci_block(index: int, test_id: str, kind: str) -> list[str]:
    name = test_id.split("::", 1)[1]
    head = f"_{'_' * 10} {'ERROR at setup of ' if kind == 'integrity' and 'role_matrix' in name else ''}{name} {'_' * 10}"
    if kind == "integrity":
        body = [
            head,
            "",
            "db = <sqlite3.Connection object at 0x7f2b8c1d%04x>" % (0x4E40 + index * 0x70),
            "",
            "    @pytest.fixture",
            "    def alice(db):",
            '>       return users.create_user(db, "alice", "alice@example.com", "correct horse")',
            "",
            "tests/conftest.py:18: ",
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ",
            ">       cur = conn.execute(",
            '            "INSERT INTO users (username, email, password_hash, created_at) VALUES (?, ?, ?, ?)",',
            "            (username, email, hash_password(password), now_iso()),",
            "        )",
            "E       sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
            "",
            "tasklog/users.py:58: IntegrityError",
        ]
    elif kind == "admins":
        body = [
            head,
            "",
            "    def test_list_admins(db, alice, bob):",
            "        users.set_admin(db, bob.id)",
            '>       assert [u.username for u in users.list_users(db, admins_only=True)] == ["bob"]',
            "E       AssertionError: assert ['alice', 'bob'] == ['bob']",
            "E         At index 0 diff: 'alice' != 'bob'",
            "E         Left contains one more item: 'bob'",
            "",
            "tests/test_users.py:36: AssertionError",
        ]
    elif kind == "tz":
        body = [
            head,
            "",
            ">       soon = [task for task in tasks if task.due is not None and task.due <= horizon]",
            "E       TypeError: can't compare offset-naive and offset-aware datetimes",
            "",
            "tasklog/tasks.py:91: TypeError",
        ]
    else:
        body = [
            head,
            "",
            ">       assert response.status_code == 409",
            "E       assert 500 == 409",
            "E        +  where 500 = <WrapperTestResponse streamed [500 INTERNAL SERVER ERROR]>.status_code",
            "",
            "tests/test_api_auth.py:27: AssertionError",
        ]
    second = 42 + index // 6
    return [
        f"test\tRun tests\t{_stamp(second, 1000 + index * 7919 % 9_000_000)} {line}"
        for line in body
    ]


def ci_failed_log() -> str:
    """`gh run view 9381 --log-failed`: every failure of the red CI run, as GitHub prints it."""
    lines = [
        f"test\tRun tests\t{_stamp(41, 5531000)} ##[group]Run pytest -x --cov --cov-report=term-missing",
        f"test\tRun tests\t{_stamp(41, 5531900)} pytest -x --cov --cov-report=term-missing",
        f"test\tRun tests\t{_stamp(41, 5532100)} shell: /usr/bin/bash -e {{0}}",
        f"test\tRun tests\t{_stamp(41, 5532400)} ##[endgroup]",
        f"test\tRun tests\t{_stamp(41, 5532791)} NOTE: CI ran with -p no:cacheprovider --maxfail=50 (repo variable PYTEST_ADDOPTS)",
        f"test\tRun tests\t{_stamp(41, 5533410)} ==================================== ERRORS ====================================",
    ]
    for index, (test_id, _, kind) in enumerate(_CI_FAILURES):
        lines.extend(_ci_block(index, test_id, kind))
    lines.append(
        f"test\tRun tests\t{_stamp(52, 4420556)} =========================== short test summary info ============================"
    )
    for test_id, outcome, kind in _CI_FAILURES:
        reason = {
            "integrity": "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
            "admins": "AssertionError: assert ['alice', 'bob'] == ['bob']",
            "tz": "TypeError: can't compare offset-naive and offset-aware datetimes",
            "500": "assert 500 == 409",
        }[kind]
        lines.append(f"test\tRun tests\t{_stamp(52, 4421003)} {outcome} {test_id} - {reason}")
    lines.append(
        f"test\tRun tests\t{_stamp(52, 4426781)} ============ 7 failed, 169 passed, 40 errors in 11.08s ============"
    )
    lines.append(
        f"test\tRun tests\t{_stamp(52, 5120337)} ##[error]Process completed with exit code 1."
    )
    return "\n".join(lines)


def staging_log(requests: int = 130) -> str:
    """`journalctl -u tasklog` on staging: normal traffic with two 500s on POST /api/signup."""
    paths = [
        ("GET", "/api/tasks?status=open&page=1", 200, 2214),
        ("GET", "/static/app.3f9c1e.js", 304, 0),
        ("POST", "/api/login", 200, 61),
        ("GET", "/api/tasks?sort=-due", 200, 5120),
        ("PATCH", "/api/tasks/412", 200, 143),
        ("GET", "/api/reports/weekly?week=2024-W22", 200, 8807),
        ("POST", "/api/tasks", 201, 151),
        ("GET", "/healthz", 200, 2),
    ]
    ips = ["10.8.0.14", "10.8.0.22", "10.8.0.9", "10.8.1.3"]
    lines = []
    for index in range(requests):
        minute, second = divmod(index * 3540 // requests, 60)
        stamp = f"Jun 03 07:{minute % 60:02d}:{second:02d}"
        method, path, status, size = paths[index * 5 % len(paths)]
        ip = ips[index % len(ips)]
        if index in (31, 104):
            lines.append(
                f"{stamp} staging-1 gunicorn[2291]: [2024-06-03 07:{minute % 60:02d}:{second:02d} +0000] "
                "[2291] [ERROR] Exception on /api/signup [POST]"
            )
            lines.extend(
                f"{stamp} staging-1 gunicorn[2291]: {tb}"
                for tb in (
                    "Traceback (most recent call last):",
                    '  File "/srv/tasklog/venv/lib/python3.11/site-packages/flask/app.py", line 880, in full_dispatch_request',
                    "    rv = self.dispatch_request()",
                    '  File "/srv/tasklog/tasklog/api.py", line 33, in signup',
                    '    user = users.create_user(get_db(), data["username"], data["email"], data["password"])',
                    '  File "/srv/tasklog/tasklog/users.py", line 58, in create_user',
                    "    cur = conn.execute(",
                    "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
                )
            )
            method, path, status, size = "POST", "/api/signup", 500, 265
        lines.append(
            f"{stamp} staging-1 gunicorn[2291]: {ip} - - [03/Jun/2024:07:{minute % 60:02d}:{second:02d} +0000] "
            f'"{method} {path} HTTP/1.1" {status} {size} "https://staging.tasklog.dev/" '
            '"Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0"'
        )
    return "\n".join(lines)


def collect_only() -> str:
    ids = pt.test_ids()
    return "\n".join(ids) + f"\n\n{len(ids)} tests collected in 0.41s"


USERS_BEFORE = (
    files.USERS_PY.replace(
        """def normalize_email(email: str) -> str:
    # Added on the email-login branch: logins compare addresses case-insensitively.
    return email.strip().lower()


""",
        "",
    )
    .replace("    email = normalize_email(email)\n", "")
    .replace(
        '''    """Look a user up by username, or by e-mail address when `login` contains an @."""
    if "@" in login:
        row = conn.execute(
            "SELECT * FROM users WHERE email = ?", (normalize_email(login),)
        ).fetchone()
    else:
        row = conn.execute("SELECT * FROM users WHERE username = ?", (login,)).fetchone()''',
        """    row = conn.execute("SELECT * FROM users WHERE username = ?", (login,)).fetchone()""",
    )
)

CONFTEST_BEFORE = files.CONFTEST.replace(
    '@pytest.fixture(scope="session")', "@pytest.fixture"
).replace(
    "    # Shared for speed: running the migrations for every test made the suite take 40 s.\n", ""
)


def _diff(path: str, before: str, after: str) -> list[str]:
    return list(
        difflib.unified_diff(
            before.split("\n"), after.split("\n"), f"a/{path}", f"b/{path}", lineterm=""
        )
    )


def merge_diff() -> str:
    """`git diff 3e6b7f8 4c1e9a7 -- tasklog tests migrations`: what the email-login merge changed."""
    lines: list[str] = []
    lines += [
        "diff --git a/migrations/0002_add_email.sql b/migrations/0002_add_email.sql",
        "new file mode 100644",
        "index 0000000..a41f0c2",
    ]
    lines += (
        _diff("migrations/0002_add_email.sql", "", files.MIGRATION_2)[0:2]
        + ["@@ -0,0 +1,4 @@"]
        + [f"+{line}" for line in files.MIGRATION_2.split("\n")]
    )
    lines += ["diff --git a/tasklog/users.py b/tasklog/users.py", "index 5be21d9..c07a3e4 100644"]
    lines += _diff("tasklog/users.py", USERS_BEFORE, files.USERS_PY)
    lines += ["diff --git a/tests/conftest.py b/tests/conftest.py", "index 3f2a1c9..8be04d1 100644"]
    lines += _diff("tests/conftest.py", CONFTEST_BEFORE, files.CONFTEST)
    return "\n".join(lines)
