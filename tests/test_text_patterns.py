"""The error-line and identifier scanners probe mining relies on: what they find, what they skip,
and that they stay fast on large outputs."""

from __future__ import annotations

import json

import pytest

from compaction.text.patterns import error_lines, identifiers, written_paths


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: invalid literal for int() with base 10: 'x'",
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
        "Error: Cannot find module 'express'",
        "error[E0308]: mismatched types",
        "fatal: not a git repository (or any of the parent directories): .git",
        "FAILED tests/test_auth.py::test_signup - AssertionError: 1 != 2",
        "Process exited with code 1",
        "exit status 2",
        '{"exit_code": 127}',
    ],
)
def test_error_lines_found(line: str) -> None:
    assert error_lines(f"some output\n  {line}\nmore") == [line]


@pytest.mark.parametrize(
    "line",
    [
        "exit code 0",
        "Traceback (most recent call last):",
        "no errors found",
        "ValueError",  # an exception name with no message is not an error line
        "RuntimeWarning: deprecated",
        "the error: is mentioned mid-sentence",
    ],
)
def test_not_error_lines(line: str) -> None:
    assert error_lines(f"{line}\n") == []


def test_error_lines_are_collapsed_cut_and_in_order() -> None:
    text = "KeyError:   'a'\r\nok\nTypeError: " + "y" * 300
    found = error_lines(text)
    assert found[0] == "KeyError: 'a'"
    assert found[1].startswith("TypeError: y") and len(found[1]) == 160
    long_exit = "x" * 200 + " exit code 3"
    assert error_lines(long_exit) == []  # a blob reporting an exit code has no line to keep


def test_identifiers_found_and_boundaries_respected() -> None:
    text = (
        "see localhost:8080, http://127.0.0.1:5000/x. and 0.0.0.0:22 on Port 3000 "
        "(report 2024) 1.2.3.4 v1.2 3.11 python3.11 2.0.0-rc.1 abc1234 deadbeef "
        "123e4567-e89b-12d3-a456-426614174000 #12 a#13 &#14; fix/v2.3.1"
    )
    assert identifiers(text) == [
        ":8080",
        "http://127.0.0.1:5000/x",
        ":5000",
        ":22",
        "Port 3000",
        "v1.2",
        "2.0.0-rc.1",
        "abc1234",
        "#12",
        "v2.3.1",
    ]


def test_hash_lengths() -> None:
    assert identifiers("a" * 6 + "1") == ["aaaaaa1"]
    assert identifiers("abc123") == []  # six hex: too short for a hash
    sha1 = "0123456789abcdef0123456789abcdef01234567"
    assert identifiers(sha1) == [sha1]
    assert identifiers(sha1 + "89") == []  # 42 hex: not a git hash


def test_scanners_are_fast_on_large_outputs() -> None:
    chunk = (
        "def each_face(added): return 0x1f  # line 42 of 1.2 dead code\n"
        "  File '/usr/lib/python3.11/site-packages/pkg/mod.py', line 12, in run\n"
        "127.0.0.2 - - [10/Oct/2000:13:55:36] GET /a.b.c HTTP/1.1 200 2326\n"
    )
    text = chunk * 5_000  # ~1 MB
    # A backtracking pattern would hang here; speed itself is measured in benchmarks.
    assert isinstance(identifiers(text), list)
    assert error_lines(text) == []


def test_pytest_failure_explanations_are_error_lines() -> None:
    text = "tests/test_x.py F\nE       KeyError: 'stripe_signature'\n1 failed in 0.1s\n"
    assert "KeyError: 'stripe_signature'" in error_lines(text)


def test_opencodes_apply_patch_names_the_file_it_writes() -> None:
    # OpenCode's apply_patch takes `patchText`; read from the raw JSON, the path ran on into the
    # patch through the escaped newlines ("/w/TODO.md\\n@@\\n").
    arguments = {
        "patchText": "*** Begin Patch\n*** Update File: /w/TODO.md\n@@\n-a\n+b\n*** End Patch"
    }
    raw = json.dumps(arguments)
    assert written_paths("apply_patch", arguments, raw) == ["/w/TODO.md"]
