"""The one-liners' last exception line: the literal scan finds what the pattern's findall finds."""

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
