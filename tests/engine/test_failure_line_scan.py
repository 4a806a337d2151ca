"""The one-liners' last failure line: the literal scan finds what the regular expression finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text import one_liners as tool_summaries

PIECES = ["error", "ERROR", "Exception", "traceback", "FAILED", "Fatal", "fat", "err", "\n", " "]
PIECES += ["ed", "failedfatal", "errorerror", "Trace\nback", "x", "é", "\u212aey", "İ"]


def by_regex(output: str) -> str | None:
    """The definition: the line around the last match of the case-insensitive pattern."""
    matches = list(tool_summaries._FAILURE_WORD.finditer(output))
    if not matches:
        return None
    last = matches[-1]
    start = output.rfind("\n", 0, last.start()) + 1
    end = output.find("\n", last.end())
    return output[start : end if end >= 0 else len(output)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_last_failure_line_matches_the_regular_expression(pieces: list[str]) -> None:
    output = "".join(pieces)
    assert tool_summaries._last_failure_line(output) == by_regex(output)
