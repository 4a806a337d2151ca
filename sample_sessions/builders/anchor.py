"""Sample 3: the latest user request is followed by a long run of tool calls.

The user asks for a dependency review; the agent then checks 22 packages one by one (two calls
each, outputs of ~1 KB to 3 KB) without another user message. The token-budgeted tail walk stops
long after the request, so only the last-user anchor keeps it verbatim.
"""

from __future__ import annotations

import json

from builders import coding
from builders import tasklog_files as files
from builders.common import Conversation, Message, token

# name, pinned, latest, summary, licence, requires, modules that import it
Package = tuple[str, str, str, str, str, str, list[str]]

PACKAGES: list[Package] = [
    (
        "Flask",
        "3.0.0",
        "3.0.3",
        "A simple framework for building complex web applications.",
        "BSD-3-Clause",
        "Jinja2, Werkzeug, blinker, click, itsdangerous",
        ["tasklog/app.py", "tasklog/api.py", "tasklog/views.py"],
    ),
    (
        "Werkzeug",
        "3.0.1",
        "3.0.3",
        "The comprehensive WSGI web application library.",
        "BSD-3-Clause",
        "MarkupSafe",
        ["tasklog/app.py"],
    ),
    (
        "Jinja2",
        "3.1.2",
        "3.1.4",
        "A very fast and expressive template engine.",
        "BSD-3-Clause",
        "MarkupSafe",
        ["tasklog/mail.py"],
    ),
    (
        "MarkupSafe",
        "2.1.3",
        "2.1.5",
        "Safely add untrusted strings to HTML/XML markup.",
        "BSD-3-Clause",
        "",
        [],
    ),
    (
        "itsdangerous",
        "2.1.2",
        "2.2.0",
        "Safely pass data to untrusted environments and back.",
        "BSD-3-Clause",
        "",
        ["tasklog/tokens.py"],
    ),
    (
        "click",
        "8.1.7",
        "8.1.7",
        "Composable command line interface toolkit",
        "BSD-3-Clause",
        "",
        ["tasklog/cli.py"],
    ),
    (
        "blinker",
        "1.7.0",
        "1.8.2",
        "Fast, simple object-to-object and broadcast signaling",
        "MIT",
        "",
        [],
    ),
    (
        "argon2-cffi",
        "21.3.0",
        "23.1.0",
        "Argon2 for Python",
        "MIT",
        "argon2-cffi-bindings",
        ["tasklog/users.py"],
    ),
    (
        "argon2-cffi-bindings",
        "21.2.0",
        "21.2.0",
        "Low-level CFFI bindings for Argon2",
        "MIT",
        "cffi",
        [],
    ),
    (
        "cffi",
        "1.15.1",
        "1.16.0",
        "Foreign Function Interface for Python calling C code.",
        "MIT",
        "pycparser",
        [],
    ),
    ("pycparser", "2.21", "2.22", "C parser in Python", "BSD-3-Clause", "", []),
    (
        "python-dateutil",
        "2.8.2",
        "2.9.0.post0",
        "Extensions to the standard Python datetime module",
        "Dual License",
        "six",
        ["tasklog/tasks.py", "tasklog/api.py"],
    ),
    ("six", "1.16.0", "1.16.0", "Python 2 and 3 compatibility utilities", "MIT", "", []),
    ("gunicorn", "21.2.0", "22.0.0", "WSGI HTTP Server for UNIX", "MIT", "packaging", []),
    (
        "packaging",
        "23.2",
        "24.0",
        "Core utilities for Python packages",
        "Apache-2.0 OR BSD-2-Clause",
        "",
        [],
    ),
    (
        "sentry-sdk",
        "1.39.1",
        "2.5.1",
        "Python client for Sentry (https://sentry.io)",
        "MIT",
        "certifi, urllib3",
        ["tasklog/app.py"],
    ),
    (
        "certifi",
        "2023.11.17",
        "2024.6.2",
        "Python package for providing Mozilla's CA Bundle.",
        "MPL-2.0",
        "",
        [],
    ),
    (
        "urllib3",
        "2.1.0",
        "2.2.1",
        "HTTP library with thread-safe connection pooling, file post, and more.",
        "MIT",
        "",
        ["tasklog/webhooks.py"],
    ),
    (
        "requests",
        "2.31.0",
        "2.32.3",
        "Python HTTP for Humans.",
        "Apache-2.0",
        "certifi, charset-normalizer, idna, urllib3",
        ["tasklog/webhooks.py", "tasklog/integrations/slack.py"],
    ),
    (
        "charset-normalizer",
        "3.3.2",
        "3.3.2",
        "The Real First Universal Charset Detector.",
        "MIT",
        "",
        [],
    ),
    (
        "idna",
        "3.6",
        "3.7",
        "Internationalized Domain Names in Applications (IDNA)",
        "BSD-3-Clause",
        "",
        [],
    ),
    (
        "freezegun",
        "1.4.0",
        "1.5.1",
        "Let your Python tests travel through time",
        "Apache-2.0",
        "python-dateutil",
        ["tests/test_tasks.py", "tests/test_notifications.py"],
    ),
]

REQUEST = (
    "Our pins in requirements.lock are about six months old. Go through the lock file package by "
    "package: for each one check the version we pin, the newest release, and where our code "
    "imports it. Then give me one table with a recommendation per package (upgrade now / later / "
    "leave). Don't change any files and don't install anything — this is a read-only review."
)


def _versions(pinned: str, latest: str, name: str) -> list[str]:
    """A plausible descending release list between the pin and the newest release."""
    out = [latest]
    seed = sum(map(ord, name))
    parts = latest.split(".")
    if latest != pinned and parts[-1].isdigit():
        for step in range(int(parts[-1]) - 1, -1, -1):
            candidate = ".".join([*parts[:-1], str(step)])
            if candidate != pinned:
                out.append(candidate)
            else:
                break
    out.append(pinned)
    major, minor = int(pinned.split(".")[0]), int(pinned.split(".")[1])
    older_major, older_minor = (major, minor - 1) if minor > 0 else (major - 1, 9)
    for extra in range(4 + seed % 5):
        out.append(f"{older_major}.{older_minor}.{8 - extra}")
    return list(dict.fromkeys(out))


def _lock_entry(name: str, version: str) -> str:
    hashes = [token(f"{name}-{version}-{n}", 43) for n in range(3)]
    digests = ["".join(f"{ord(ch) % 16:x}" for ch in h)[:64].ljust(64, "0") for h in hashes]
    lines = [f"{name.lower()}=={version} \\"]
    lines += [f"    --hash=sha256:{digest} \\" for digest in digests[:-1]]
    lines.append(f"    --hash=sha256:{digests[-1]}")
    return "\n".join(lines)


def lock_file() -> str:
    header = (
        "#\n# This file is autogenerated by pip-compile with Python 3.11\n"
        "# by the following command:\n#\n#    pip-compile --generate-hashes --output-file=requirements.lock pyproject.toml\n#"
    )
    return header + "\n" + "\n".join(_lock_entry(p[0], p[1]) for p in PACKAGES)


def _show(package: Package) -> str:
    name, pinned, latest, summary, licence, requires, users = package
    required_by = [p[0] for p in PACKAGES if name in p[5].split(", ")]
    versions = ", ".join(_versions(pinned, latest, name))
    package_dir = name.lower().replace("-", "_")
    modules = (
        "__init__",
        "_compat",
        "_internal",
        "_types",
        "core",
        "exceptions",
        "utils",
        "helpers",
        "config",
        "formatting",
        "parsing",
        "signals",
        "testing",
        "typing",
        "wrappers",
        "version",
        "sansio",
        "routing",
        "sessions",
        "templating",
        "views",
        "blueprints",
        "cli",
        "ctx",
        "debughelpers",
        "globals",
        "json",
        "logging",
        "scaffold",
        "serving",
        "datastructures",
    )
    listing = [
        f"  {name.replace('-', '_')}-{pinned}.dist-info/{meta}"
        for meta in ("INSTALLER", "LICENSE.txt", "METADATA", "RECORD", "REQUESTED", "WHEEL")
    ]
    for module in modules:
        listing.append(f"  {package_dir}/{module}.py")
        listing.append(f"  {package_dir}/__pycache__/{module}.cpython-311.pyc")
    listing.append(f"  {package_dir}/py.typed")
    files_listing = "\n".join(listing)
    return (
        f"Name: {name}\nVersion: {pinned}\nSummary: {summary}\n"
        f"Home-page: https://pypi.org/project/{name}/\nAuthor: \nLicense: {licence}\n"
        f"Location: /home/maya/src/tasklog/.venv/lib/python3.11/site-packages\n"
        f"Requires: {requires}\nRequired-by: {', '.join(required_by) or 'tasklog' if users else ', '.join(required_by)}\n"
        f"Files:\n{files_listing}\n---\n"
        f"{name.lower()} ({latest})\nAvailable versions: {versions}\n"
        f"  INSTALLED: {pinned}\n  LATEST:    {latest}"
    )


def _imports(package: Package) -> str:
    name, _, _, _, _, _, users = package
    module = {
        "python-dateutil": "dateutil",
        "argon2-cffi": "argon2",
        "sentry-sdk": "sentry_sdk",
        "Jinja2": "jinja2",
        "Flask": "flask",
        "Werkzeug": "werkzeug",
    }.get(name, name.lower())
    matches = []
    for number, path in enumerate(users):
        for line in range(2):
            matches.append(
                {
                    "path": path,
                    "line": 3 + number * 2 + line * 11,
                    "content": f"from {module} import {('Flask, jsonify', 'exceptions')[line]}"
                    if line == 0
                    else f"    {module}.__version__  # logged at startup in {path}",
                }
            )
    return json.dumps(
        {
            "total_count": len(matches),
            "pattern": f"^(from|import) {module}\\b",
            "matches": matches,
            "files_searched": 57,
        },
        indent=1,
    )


def build() -> list[Message]:
    c = Conversation("anchor-last-user")
    c.system(coding.SYSTEM)
    c.user(
        "GET /api/tasks feels slow for accounts with a few thousand tasks. Can you check whether "
        "it's the query? Just investigate, don't change anything yet."
    )
    c.read_file("tasklog/api.py", coding.API_PY)
    c.read_file("tasklog/tasks.py", files.TASKS_PY)
    c.read_file("migrations/0001_init.sql", files.MIGRATION_1)
    c.terminal(
        'sqlite3 /tmp/staging-copy.sqlite3 "EXPLAIN QUERY PLAN SELECT * FROM tasks WHERE owner_id = 7 ORDER BY id;"',
        "QUERY PLAN\n`--SCAN tasks",
    )
    c.terminal(
        "for i in 1 2 3; do curl -s -o /dev/null -w '%{time_total}\\n' -b cookies.txt http://127.0.0.1:5000/api/tasks; done",
        "0.912341\n0.887120\n0.903377",
    )
    c.terminal("python -m pytest -x", coding.passing_run(217, "4.09"))
    c.assistant(
        "It is the query: `EXPLAIN QUERY PLAN` shows `SCAN tasks` — there is no index on "
        "tasks.owner_id, so every request reads the whole table (~0.9 s for an account on the "
        "staging copy). The fix is `CREATE INDEX idx_tasks_owner ON tasks (owner_id, id)` in a "
        "new migration 0004; nothing else needs to change. I have not changed anything."
    )
    c.user("Good find, we'll do the index in its own PR later.")
    c.user(REQUEST)
    c.read_file(
        "requirements.lock",
        lock_file(),
        text="Reading the lock file first; then two checks per package.",
    )
    for package in PACKAGES:
        name = package[0]
        c.terminal(
            f"pip show -f {name} && pip index versions {name} 2>/dev/null",
            _show(package) + "\n" + _changelog(package),
        )
        c.call(
            "search_files",
            {"pattern": f"^(from|import) {name.lower()}", "path": ".", "target": "content"},
            _imports(package),
        )
    c.terminal(
        "pip list --outdated --format=columns",
        "Package            Version    Latest      Type\n------------------ ---------- ----------- -----\n"
        + "\n".join(f"{p[0]:<18} {p[1]:<10} {p[2]:<11} wheel" for p in PACKAGES if p[1] != p[2]),
    )
    return c.messages


NOTES = [
    "Fix a regression where an empty or whitespace-only input raised instead of returning None.",
    "Drop support for end-of-life Python versions in the test matrix; no API change.",
    "Improve type annotations of the public API so strict type checkers accept common calls.",
    "Documentation: clarify the thread-safety guarantees of shared objects.",
    "Deprecate the legacy import path; it keeps working and warns until the next major release.",
    "Fix a resource leak when an exception is raised while a response is being streamed.",
    "Security: tighten validation of untrusted header values (no known exploit).",
    "Performance: avoid re-parsing configuration on every call in long-running processes.",
    "Wheels are now published for Linux aarch64 and macOS arm64.",
    "Fix handling of timezone-aware datetimes passed to the public helpers.",
]


def _changelog(package: Package) -> str:
    """The release-notes excerpt the agent pulls from the sdist's CHANGES file."""
    name, pinned, latest, _, _, _, _ = package
    if pinned == latest:
        return f"\n== CHANGES ({name}) ==\nNo releases after {pinned}."
    lines = [f"\n== CHANGES ({name} {pinned} -> {latest}) =="]
    for version in _versions(pinned, latest, name)[:5]:
        if version == pinned:
            break
        lines.append(f"\nVersion {version}\n{'-' * (8 + len(version))}\n")
        start = sum(map(ord, version + name)) % len(NOTES)
        lines += [f"-   {NOTES[(start + k) % len(NOTES)]}" for k in range(6)]
    return "\n".join(lines)
