"""Sample 6: the seed's worked example, as a conversation small enough to read in one sitting.

With a 128K window: the trigger is 64K, the head is the first 3 messages (~2K), the tail the
last ~12.8K and the middle the ~49.2K in between. A long written report from the agent sits just
before the tail: it cannot be pruned, so both tail walks stop in front of it and the tail is the
final request and its work (~12.8K), as in the seed's table. Sizes are tuned by the line counts
below; tests/test_samples.py checks the numbers the DESCRIPTION states.
"""

from __future__ import annotations

from builders import coding
from builders import tasklog_logs as logs
from builders.common import Conversation, Message, token

# Line counts that tune the token sizes (o200k_base, the gpt-4o tokenizer).
MIDDLE_LOG_LINES = 113
APPENDIX_ROWS = 146
TAIL_LOG_LINES = 65

DESCRIPTION = (
    "The seed's worked numbers at context_length=128000: 64,160 tokens in 22 messages, just over "
    "the 64,000 trigger; head 3 messages = 1,926 tokens (≈2K); tail 6 messages = 12,900 tokens "
    "(≈12.8K); middle 13 messages = 49,334 tokens (≈49.2K). The seed's arithmetic makes the "
    "summary budget 20% = 9,866, capped at 8,000 by the 2K–8K clamp (the Learn page shows it); "
    "this tool budgets on the middle as Phase 1 left it, 7,383 tokens here, so Phase 3 shows "
    "20% = 1,479 raised to the 2,000 minimum. Step through the phases: the long written report "
    "just before the tail cannot be pruned, which is what stops the tail walk at ≈12.8K."
)

TOOLS_DOC = """Tools available in this session:

terminal(command: string, timeout?: integer = 120, workdir?: string)
  Runs a shell command with bash on the operator's workstation and returns its combined stdout and stderr together with the exit code as JSON: {"output": ..., "exit_code": ..., "error": ...}. Output longer than 100,000 characters is truncated in the middle. Commands that need a TTY are not supported; use non-interactive flags (for example `--no-pager` for journalctl and `-y` for package managers). Long-running commands are killed after `timeout` seconds. The working directory persists between calls only when `workdir` is passed explicitly. Never use this tool to read or edit files that read_file, write_file or patch can handle.

read_file(path: string, offset?: integer = 1, limit?: integer = 2000)
  Returns the file's lines with line numbers, starting at `offset`. Binary files are refused. Paths are relative to the repository root unless absolute. Use offset and limit for large files rather than reading them whole; the result says how many lines the file has in total.

write_file(path: string, content: string)
  Creates or overwrites a file with `content` and returns the number of bytes written. Parent directories are created. Prefer patch for changes to existing files, so that unrelated lines cannot be lost.

patch(path: string, old_string: string, new_string: string, mode?: "replace" | "replace_all" = "replace")
  Replaces `old_string` with `new_string` in the file. `old_string` must match exactly once (including whitespace) unless mode is replace_all. Returns the unified diff of the change, or an error naming the problem (no match, several matches, file missing).

search_files(pattern: string, path?: string = ".", target?: "content" | "files" = "content", file_glob?: string, limit?: integer = 50)
  Searches file contents with a regular expression (ripgrep syntax), or file names with a glob when target is "files". Returns JSON with total_count and the matches (path, line, content). Respects .gitignore.

Rules for tool use:
1. Prefer one precise command over several exploratory ones; read the output before the next call.
2. Quote file paths that contain spaces. Do not pipe secrets into commands; environment variables named *_TOKEN, *_KEY or *_PASSWORD are redacted from outputs.
3. When a command fails, report the exact error line and the exit code before trying something else.
4. Remote hosts are reached only through `ssh deploy@HOST`; the deploy user can read journald and the application's data directory, and cannot sudo.
5. Summarise large outputs for the user instead of pasting them, quoting only the lines that matter.

Repository layout (tasklog, /home/maya/src/tasklog):
- tasklog/app.py: create_app(config) builds the Flask app, registers the api blueprint, sets up Sentry when SENTRY_DSN is set, and configures logging (JSON lines in production, plain text in development).
- tasklog/api.py: the JSON API (signup, login, logout, tasks). Every endpoint returns JSON errors of the form {"error": message} with a 4xx status; a 5xx means an unhandled exception.
- tasklog/users.py: accounts, password hashing (argon2), login by username or e-mail.
- tasklog/tasks.py: tasks, assignment, the due-soon view.
- tasklog/reports.py, tasklog/notifications.py: weekly reports, reminder e-mails (sent by a cron job at 07:00 UTC).
- tasklog/db.py and migrations/: SQLite connection handling and the ordered SQL migrations. Migrations already applied in production must never be edited; schema changes go in a new numbered file.
- tests/: pytest suite, run with `pytest -x` locally and in CI (GitHub Actions, .github/workflows/ci.yml).
- deploy/: the release pipeline. A release goes to the canary (web-2) first, then to web-1 after 30 minutes unless a deploy freeze is active. Rollback: `deploy/rollback.sh RELEASE` on each host.

Data handling: never paste full e-mail addresses, password hashes, session cookies or reset tokens into a postmortem or a chat reply; hash or truncate them. Request ids and timestamps are fine to quote. The journal of each web host keeps 14 days of logs; nginx access logs rotate daily (access.log.1 is yesterday).

Communication during an incident:
- Keep replies short while investigating: what you checked, what you found, what you will check next. Save the full narrative for the postmortem.
- When you quote a log line, keep its timestamp and host so that others can find it again.
- If you are not sure whether something is safe to run on a production host, ask first and explain what the command would do. Reading logs and running read-only SQL (SELECT, EXPLAIN) is always fine; anything that writes is not, during an investigation.
- Times are UTC everywhere: in replies, in the postmortem and in commands (`journalctl --since` interprets times in the host's zone, which is UTC on every host).
- If the user asks for something outside the investigation, finish the current step first and say so, unless the request is urgent (a new outage, or a request to stop).
- At the end of an investigation, state the root cause in one sentence, list the evidence, and list what is still unknown. Do not claim a fix is verified until you have seen the evidence after the fix was deployed."""


SYSTEM = (
    coding.SYSTEM
    + """

Incident handling:
- When asked to investigate an incident, establish the timeline from logs before proposing causes. Quote the exact log lines and error messages you rely on, with their timestamps.
- Distinguish what the logs prove from what you infer, and say which is which.
- Do not restart services, deploy, or change production data during an investigation unless the user explicitly asks for it in this conversation.
- Production hosts: web-1, web-2 (gunicorn behind nginx), db host: none (SQLite on a shared volume). Staging host: staging-1. You have read access to journald on all of them through `ssh deploy@HOST`.
- Write postmortems in the team's format: Summary, Impact, Timeline (UTC), Root cause, What went well, What went wrong, Action items (each with an owner and a due date)."""
    + "\n\nTeam glossary: "
    + ", ".join(
        f"{term} ({meaning})"
        for term, meaning in [
            ("SEV2", "customer-visible degradation, no data loss"),
            ("SEV1", "outage or data loss"),
            ("IC", "incident commander"),
            ("comms", "status page and customer e-mail owner"),
            ("RTO", "recovery time objective, 30 minutes for SEV2"),
            ("freeze", "no deploys without IC approval"),
            ("canary", "web-2, which receives new releases 30 minutes before web-1"),
            ("runbook", "docs/runbooks/*.md in the ops repository"),
        ]
    )
    + "\n\n"
    + TOOLS_DOC
)


def _journal(host: str, lines: int, start_minute: int) -> str:
    text = (
        logs.staging_log()
        .replace("staging-1", host)
        .replace("staging.tasklog.dev", "app.tasklog.dev")
    )
    rows = text.split("\n")
    return "\n".join(
        row.replace("Jun 03 07:", f"Jun 03 {22 + (start_minute // 60) % 2:02d}:")
        for row in rows[:lines]
    )


TIMELINE = [
    ("22:04", "web-2 (canary) receives release 2024.06.03-1 (email-login merge)"),
    (
        "22:09",
        "first POST /api/signup 500 on web-2: sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
    ),
    ("22:14", "error-rate alert for /api/signup fires (threshold 2% over 5 minutes)"),
    ("22:17", "on-call acknowledges the alert and starts reading the journal on web-2"),
    ("22:34", "release promoted to web-1 by the scheduled pipeline (freeze not yet declared)"),
    ("22:35", "500s on both hosts, ~4% of signups; logins and task views unaffected"),
    ("22:51", "IC declares SEV2 and a deploy freeze; comms posts a status-page notice"),
    ("22:56", "rollback of web-1 and web-2 to 2024.05.29-2 starts"),
    ("23:02", "rollback complete; signup error rate back to 0"),
]


def _timeline() -> str:
    return "\n".join(f"| {time} | {event} |" for time, event in TIMELINE)


def _appendix() -> str:
    """Every failed sign-up request, as the journal shows it (addresses hashed for the wiki)."""
    rows = []
    for row in range(APPENDIX_ROWS):
        hour, minute = divmod(22 * 60 + 9 + row * 53 // APPENDIX_ROWS, 60)
        host = "web-2" if row % 3 else "web-1"
        request_id = token(f"req-{row}", 12).lower()
        address = token(f"addr-{row % 87}", 10).lower()
        rows.append(
            f"| {hour:02d}:{minute:02d}:{row * 37 % 60:02d} | {host} | {request_id} | "
            f"sha256:{address}… | 500 | UNIQUE constraint failed: users.email |"
        )
    return "\n".join(rows)


def _report() -> str:
    return f"""# Postmortem: signup 500s after the email-login release (SEV2)

## Summary
For 58 minutes, about 4% of sign-ups failed with HTTP 500. The email-login release normalised e-mail addresses to lower case before inserting them; a sign-up whose address differed only in case from an existing account hit the unique index on users.email and raised an unhandled `sqlite3.IntegrityError: UNIQUE constraint failed: users.email`.

## Impact
- 212 failed sign-up attempts from 187 distinct addresses (journal of web-1 and web-2).
- No data loss: the failing INSERT was rolled back; no partial accounts exist.
- Logins, task views and reports were not affected.

## Timeline (UTC)
| time | event |
|---|---|
{_timeline()}

## Root cause
`users.create_user` started calling `normalize_email` in the email-login release. The unique index `idx_users_email` (migration 0002) compares case-sensitively, so before the release two addresses differing in case could coexist; after it, the second one collides. The API did not translate the IntegrityError, so the client got a 500 instead of a 409.

## What went well
- The canary caught the errors 30 minutes before full rollout would normally complete.
- Rollback took 6 minutes.

## What went wrong
- The promotion to web-1 was not paused although the canary alert had fired.
- The test suite shared one database between tests, which hid the collision in CI.

## Action items
1. Return 409 for DuplicateEmail from POST /api/signup — owner Maya, due 2024-06-05.
2. Isolate test databases (template copy per test) — owner Maya, due 2024-06-05.
3. Block canary promotion while a canary alert is firing — owner Jonas, due 2024-06-10.
4. Find legacy accounts whose addresses differ only in case and merge them by hand — owner Priya, due 2024-06-12.

## Appendix A: sample of failed sign-up requests
| time (UTC) | host | request id | address | status | error |
|---|---|---|---|---|---|
{_appendix()}"""


def build() -> list[Message]:
    c = Conversation("teaching-example")
    c.system(SYSTEM)
    c.user(
        "Last night between 22:00 and 23:00 UTC sign-ups failed for some users on production. "
        "Investigate with the journals of web-1 and web-2, find the root cause, and then write "
        "the postmortem in our format.\n\nWhat we know so far: the alert for /api/signup fired at "
        "22:14, the on-call (Jonas) rolled both hosts back to 2024.05.29-2 at around 23:00 and "
        "the errors stopped. Support got eleven tickets from people who could not create an "
        "account; two of them say they had signed up years ago with the same address in a "
        "different capitalisation, which may or may not matter. Logins seemed fine the whole "
        "time. The release that went out that evening was the email-login merge, which also "
        "changed the test fixtures. Nobody has looked at the logs in detail yet, so please don't "
        "assume the rollback was the fix until you have seen it in the journals. Don't restart "
        "or deploy anything."
    )
    c.assistant(
        "I'll pull the journal of both web hosts for 22:00–23:00, find the first failing request "
        "and the exact error, correlate it with the deploy log, and then write the postmortem."
    )
    c.terminal(
        "ssh deploy@web-2 journalctl -u tasklog --since '22:00' --until '23:00' --no-pager",
        _journal("web-2", MIDDLE_LOG_LINES, 0),
    )
    c.terminal(
        "ssh deploy@web-1 journalctl -u tasklog --since '22:00' --until '23:00' --no-pager",
        _journal("web-1", MIDDLE_LOG_LINES, 60),
    )
    c.terminal(
        "gh run view 9381 --log-failed",
        logs.ci_failed_log(),
        text="The error matches the CI failure from the same release; the CI log for comparison:",
    )
    c.terminal(
        'ssh deploy@web-2 \'grep -c "POST /api/signup HTTP/1.1\\" 500" /var/log/nginx/access.log.1\'',
        "212",
    )
    c.terminal(
        "git diff 3e6b7f8 4c1e9a7 -- migrations tasklog/users.py tests/conftest.py",
        logs.merge_diff(),
    )
    c.assistant(
        "Root cause found: the release normalises addresses before the INSERT, and the unique "
        "index on users.email then rejects addresses that differ only in case from an existing "
        "account; the API lets `sqlite3.IntegrityError: UNIQUE constraint failed: users.email` "
        "escape as a 500. Writing the postmortem now."
    )
    c.user("Go ahead, put it in your reply so I can paste it into the wiki.")
    c.assistant(_report())
    c.user(
        "Perfect, that's going in the wiki. Last step: check that the rollback really fixed it — "
        "look at the last 30 minutes of both journals and tell me whether any signup still fails."
    )
    c.terminal(
        "ssh deploy@web-2 journalctl -u tasklog --since '-30min' --no-pager",
        _journal("web-2", TAIL_LOG_LINES, 0).replace("[ERROR]", "[INFO]"),
    )
    c.terminal(
        "ssh deploy@web-1 journalctl -u tasklog --since '-30min' --no-pager",
        _journal("web-1", TAIL_LOG_LINES, 60).replace("[ERROR]", "[INFO]"),
    )
    c.assistant(
        "No sign-up failed in the last 30 minutes on either host: every POST /api/signup in both "
        "journals returned 201, and there is no IntegrityError after the rollback finished. The "
        "fix itself (409 for duplicates, isolated test databases) still has to ship as action "
        "items 1 and 2."
    )
    return c.messages
