"""The one-liners' last exception line and last reported error: the literal scans from the end
find what the patterns' findall finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text import one_liners

PIECES = ["Error", "Exception", "Exit", "Interrupt", "Failure", "ValueError", "KeyError: ", ":"]
PIECES += ["E   ", "  ", "\t", "\n", "\r", "x", "a.b.", "_", "é", "Ⅸ", "Value", "error"]
PIECES += ["Fail", "ure"]


def by_findall(output: str) -> str | None:
    """The definition: the last of the pattern's matches that holds a colon."""
    found = [line for line in one_liners._EXCEPTION_LINE.findall(output) if ":" in line]
    return found[-1] if found else None


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_last_exception_line_matches_the_pattern(pieces: list[str]) -> None:
    output = "".join(pieces)
    assert one_liners._last_exception_line(output) == by_findall(output)


def test_last_exception_line_of_a_traceback() -> None:
    output = (
        "Traceback (most recent call last):\n"
        '  File "a.py", line 3, in <module>\n'
        "KeyError: 'missing'\n"
        "ValueError: bad value\n"
        "    raise RuntimeError\n"
        "a line after\n"
    )
    assert one_liners._last_exception_line(output) == "ValueError: bad value"
    assert one_liners._last_exception_line("no exception here\n" * 3) is None


def test_many_lines_naming_a_word_stay_linear() -> None:
    # Each line names "Error" without being an exception line; "Exit" only in the first line:
    # a scan that looked for every word again from each line would be quadratic.
    output = "SystemExit: 0\n" + "an Error without a colon here\n" * 50_000
    assert one_liners._last_exception_line(output) == "SystemExit: 0"


REPORTED_PIECES = ["Error: ", "Exception: ", "error: ", "fatal: ", "]: ", "FAILED", "Traceback"]
REPORTED_PIECES += [" (most recent call last)", "[E0425]", "Value", "Key", "x", " ", "\n", "\r"]
REPORTED_PIECES += ["error", "fatal", "Error", "_", ":", "é", "FAILEDx", "\t"]


def reported_by_findall(output: str) -> str | None:
    """The definition: the last line the pattern finds, one naming an exception first."""
    found = one_liners._REPORTED.findall(output)
    if not found:
        return None
    named = [line for line in found if "Error: " in line or "Exception: " in line]
    chosen: str = (named or found)[-1]
    return chosen


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(REPORTED_PIECES), max_size=40))
def test_reported_error_matches_the_pattern(pieces: list[str]) -> None:
    output = "".join(pieces)
    assert one_liners._reported_error(output) == reported_by_findall(output)


def test_reported_error_prefers_a_line_naming_an_exception() -> None:
    output = (
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email\n"
        "error: could not apply the migration\n"
        "FAILED tests/test_db.py::test_insert\n"
        "done\n"
    )
    assert one_liners._reported_error(output) == (
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email"
    )
    assert one_liners._reported_error("ok\nerror: bad flag\nFAILED x\n") == "FAILED x"
    assert one_liners._reported_error("code: ERROR_CODES.NOT_FOUND,\nerror.message\n") is None


def test_many_reported_lines_stay_linear() -> None:
    # Each line reports an error without naming an exception: the search for a named one goes
    # back through all of them once, to the first line.
    output = "KeyError: 'missing'\n" + "error: retrying\n" * 50_000
    assert one_liners._reported_error(output) == "KeyError: 'missing'"
