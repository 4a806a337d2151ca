"""Realistic pytest, ruff, coverage and CI output for the tasklog stories.

The verbose run lists every test of the suite with live DEBUG logs; the test names come from a
fixed table so the output is deterministic and long enough (~30 KB) to be the session's big log.
"""

from __future__ import annotations

SESSION_HEADER = """============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0{verbose}
rootdir: /home/maya/src/tasklog
configfile: pyproject.toml
testpaths: tests
plugins: cov-5.0.0, freezegun-0.4.2
collected {count} items
"""

# (module, test name, parametrisations) for the whole suite: 212 test items in total.
SUITE: list[tuple[str, str, list[str]]] = [
    ("tests/test_db.py", "test_connect_enables_foreign_keys", []),
    ("tests/test_db.py", "test_migrate_is_idempotent", []),
    ("tests/test_db.py", "test_migrations_applied_in_name_order", []),
    ("tests/test_db.py", "test_row_factory_returns_rows", []),
    ("tests/test_users.py", "test_create_user_returns_user", []),
    ("tests/test_users.py", "test_short_password_rejected", []),
    ("tests/test_users.py", "test_duplicate_email_rejected", []),
    ("tests/test_users.py", "test_login_with_email_is_case_insensitive", []),
    ("tests/test_users.py", "test_login_with_username", []),
    ("tests/test_users.py", "test_wrong_password", []),
    ("tests/test_users.py", "test_list_admins", []),
    (
        "tests/test_users.py",
        "test_normalize_email",
        ["Bob@Example.COM", " bob@example.com ", "BOB@EXAMPLE.COM", "bob@example.com"],
    ),
    ("tests/test_tasks.py", "test_due_soon_orders_by_due_date", []),
    ("tests/test_tasks.py", "test_done_tasks_not_due", []),
    ("tests/test_tasks.py", "test_create_task_strips_title", []),
    ("tests/test_tasks.py", "test_empty_title_rejected", ["", "   ", "\\t\\n"]),
    ("tests/test_tasks.py", "test_set_status", ["open", "in_progress", "done"]),
    ("tests/test_tasks.py", "test_unknown_status_rejected", ["closed", "DONE", "wip"]),
    ("tests/test_tasks.py", "test_assign_is_idempotent", []),
    ("tests/test_tasks.py", "test_due_soon_horizon", ["1", "3", "7", "14"]),
    ("tests/test_permissions.py", "test_owner_can_edit", []),
    ("tests/test_permissions.py", "test_assignee_can_change_status", []),
    ("tests/test_permissions.py", "test_stranger_cannot_edit", []),
    (
        "tests/test_permissions.py",
        "test_role_matrix",
        [
            f"{role}-{action}"
            for role in ("admin", "owner", "assignee", "viewer")
            for action in ("read", "edit", "assign", "delete", "export")
        ],
    ),
    ("tests/test_api_auth.py", "test_signup_creates_account", []),
    ("tests/test_api_auth.py", "test_signup_duplicate_email_returns_409", []),
    ("tests/test_api_auth.py", "test_login_sets_session_cookie", []),
    ("tests/test_api_auth.py", "test_logout_clears_session", []),
    (
        "tests/test_api_auth.py",
        "test_login_rate_limited",
        [f"{n}-{code}" for n, code in ((1, 200), (4, 200), (5, 429), (9, 429))],
    ),
    (
        "tests/test_api_auth.py",
        "test_login_payloads",
        [
            f"{kind}"
            for kind in (
                "username",
                "email",
                "email-upper",
                "missing-password",
                "missing-login",
                "empty-json",
                "form-encoded",
                "extra-fields",
            )
        ],
    ),
    ("tests/test_api_tasks.py", "test_list_tasks_requires_login", []),
    ("tests/test_api_tasks.py", "test_create_task_returns_201", []),
    (
        "tests/test_api_tasks.py",
        "test_create_task_validates_due",
        ["2024-13-01", "yesterday", "2024-06-03T25:00"],
    ),
    ("tests/test_api_tasks.py", "test_patch_status", ["open", "in_progress", "done"]),
    (
        "tests/test_api_tasks.py",
        "test_pagination",
        [f"page{p}-size{s}" for p in (1, 2, 3) for s in (10, 25, 50)],
    ),
    ("tests/test_api_tasks.py", "test_filter_by_status", ["open", "in_progress", "done", "all"]),
    (
        "tests/test_api_tasks.py",
        "test_sort_orders",
        ["due", "-due", "title", "-title", "created", "-created"],
    ),
    ("tests/test_notifications.py", "test_due_reminder_sent_once", []),
    ("tests/test_notifications.py", "test_reminder_skips_done_tasks", []),
    ("tests/test_notifications.py", "test_digest_groups_by_owner", []),
    (
        "tests/test_notifications.py",
        "test_reminder_times",
        [f"{h:02d}:00" for h in range(6, 22, 2)],
    ),
    ("tests/test_reports.py", "test_weekly_report_counts", []),
    ("tests/test_reports.py", "test_report_csv_header", []),
    ("tests/test_reports.py", "test_report_range", [f"2024-0{m}" for m in range(1, 10)]),
    ("tests/test_reports.py", "test_burndown_points", [f"sprint{n}" for n in range(1, 13)]),
    ("tests/test_cli.py", "test_cli_help", []),
    ("tests/test_cli.py", "test_cli_migrate", []),
    ("tests/test_cli.py", "test_cli_create_admin", []),
    ("tests/test_cli.py", "test_cli_export", ["csv", "json", "ndjson"]),
    ("tests/test_cli.py", "test_cli_import_rejects", [f"case{n}" for n in range(1, 21)]),
    ("tests/test_cli.py", "test_cli_roundtrip", [f"seed{n}" for n in range(1, 29)]),
    ("tests/test_search.py", "test_search_titles", [f"q{n}" for n in range(1, 31)]),
]


def test_ids() -> list[str]:
    ids = []
    for module, name, params in SUITE:
        if params:
            ids.extend(f"{module}::{name}[{param}]" for param in params)
        else:
            ids.append(f"{module}::{name}")
    return ids


def _call_log(test_id: str, index: int) -> list[str]:
    """The live DEBUG log lines a test of this kind emits (what the modules really log)."""
    second = 10 + index // 9
    stamp = f"09:41:{second % 60:02d}"
    lines = []
    if "test_users" in test_id or "auth" in test_id:
        lines.append(
            f"{stamp} DEBUG    tasklog.users:users.py:55 creating user alice <alice@example.com>"
        )
    if "auth" in test_id:
        lines.append(
            f'{stamp} INFO     werkzeug:_internal.py:97 127.0.0.1 - - "POST /api/login HTTP/1.1" 200 -'
        )
    if "test_tasks" in test_id or "notifications" in test_id:
        lines.append(
            f"{stamp} DEBUG    tasklog.tasks:tasks.py:49 inserted task id={index % 17 + 1}"
        )
    if "cli" in test_id and "[" not in test_id:
        lines.append(
            f"{stamp} INFO     tasklog.cli:cli.py:31 tasklog 0.9.2 using /tmp/"
            f"pytest-of-maya/pytest-12/test_{index}0/test.sqlite3"
        )
    return lines


def verbose_run() -> str:
    """`pytest -x -vv -o log_cli=true --log-cli-level=DEBUG` over the whole suite, all passing."""
    ids = test_ids()
    out = [SESSION_HEADER.format(verbose="\ncachedir: .pytest_cache", count=len(ids))]
    for index, test_id in enumerate(ids):
        percent = f"[{(index + 1) * 100 // len(ids):>3}%]"
        log_lines = _call_log(test_id, index)
        if index == 0:
            out.append(f"{test_id} ")
            out.append("-" * 31 + " live log setup " + "-" * 31)
            out.append("09:41:10 INFO     tasklog.db:db.py:38 applying migration 0001_init.sql")
            out.append(
                "09:41:10 INFO     tasklog.db:db.py:38 applying migration 0002_add_email.sql"
            )
            out.append("PASSED".ljust(74) + percent)
        elif log_lines:
            out.append(f"{test_id} ")
            out.append("-" * 31 + " live log call " + "-" * 32)
            out.extend(log_lines)
            out.append("PASSED".ljust(74) + percent)
        else:
            out.append(f"{test_id} PASSED".ljust(74) + percent)
    out.append("")
    out.append(f"{'=' * 29} {len(ids)} passed in 6.91s {'=' * 29}")
    return "\n".join(out)


def progress_lines(failed_at: int | None = None) -> str:
    """The compact `pytest -x` progress dots, per module, up to a failure at item `failed_at`."""
    ids = test_ids()
    stop = len(ids) if failed_at is None else failed_at + 1
    lines: list[str] = []
    current = ""
    dots = ""
    done = 0
    for index, test_id in enumerate(ids[:stop]):
        module = test_id.split("::", 1)[0]
        if module != current:
            if current:
                lines.append(_progress(current, dots, done, len(ids)))
            current, dots = module, ""
        dots += "F" if index == failed_at else "."
        done = index + 1
    lines.append(_progress(current, dots, done, len(ids)))
    return "\n".join(lines)


def _progress(module: str, dots: str, done: int, total: int) -> str:
    return f"{module} {dots}".ljust(73) + f" [{done * 100 // total:>3}%]"


def index_of(test_id: str) -> int:
    return test_ids().index(test_id)


def _separator(title: str, char: str) -> str:
    """A pytest separator line: ` title ` centred in `char` to 80 columns."""
    return f"{char * ((78 - len(title)) // 2)} {title} ".ljust(80, char)


def stopped_run(
    test_id: str,
    traceback: str,
    reason: str,
    result: str,
    log: str | None = None,
    count: int = 216,
    progress: str | None = None,
) -> str:
    """`pytest -x` stopping at its first failure: the failure's traceback and captured log,
    the short summary line `FAILED test_id - reason`, and the final `result` counts."""
    if progress is None:
        progress = progress_lines(index_of(test_id))
    if log is not None:
        traceback += "\n" + _separator("Captured log call", "-") + "\n" + log
    return f"""{SESSION_HEADER.format(verbose="", count=count)}
{progress}

{_separator("FAILURES", "=")}
{_separator(test_id.split("::", 1)[1], "_")}

{traceback}
{_separator("short test summary info", "=")}
FAILED {test_id} - {reason}
{_separator("stopping after 1 failures", "!")}
{_separator(result, "=")}"""
