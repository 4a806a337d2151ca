"""The one-liners' last failure line: the literal scan finds what the regular expression finds."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text import one_liners as tool_summaries

PIECES = ["error", "ERROR", "Exception", "traceback", "FAILED", "Fatal", "fat", "err", "\n", " "]
PIECES += ["ed", "failedfatal", "errorerror", "Trace\nback", "x", "é", "\u212aey", "İ"]
PIECES += ["faıled", "ı", "\u212a", "tracebac\u212a", "Σ", "ß", "ﬁ", "FAİLED", "—"]


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


#: Pieces outside ASCII that fold into no word: the literal scan's path for non-ASCII text.
UNFOLDED = ["error", "ERROR", "Exception", "traceback", "FAILED", "Fatal", "fat", "\n", " ", "x"]
UNFOLDED += ["é", "Σ", "ß", "ﬁ", "—", "ñ", "ÉRROR", "ﬀailed", "failedfatal"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(UNFOLDED), max_size=40))
def test_last_failure_line_outside_ascii_without_folds(pieces: list[str]) -> None:
    output = "".join(pieces) + "é"
    assert not any(char in output for char in tool_summaries._FAILURE_FOLDS)
    assert tool_summaries._last_failure_line(output) == by_regex(output)


def test_only_the_listed_characters_fold_into_the_words() -> None:
    letters = "".join(sorted(set("".join(tool_summaries._FAILURE_WORDS))))
    folds = re.compile(f"(?i)[{letters}]")
    special = {
        chr(point)
        for point in range(128, sys.maxunicode + 1)
        if folds.fullmatch(chr(point))
        or len(chr(point).lower()) != 1
        or chr(point).lower().isascii()
    }
    assert special == set(tool_summaries._FAILURE_FOLDS)
