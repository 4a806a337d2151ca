"""exit_code's pre-test never hides a match: it finds what the patterns alone find, in ASCII
and outside it (where case folding matches a few other characters to the phrases' letters)."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text import one_liners

PIECES = ["exit", "EXIT", "ExIt", "ex", "it", "ed with", "ED WITH", " ", "code", "CODE", "status"]
PIECES += ["Status", ":", "=", "1", "-", "42", "\n", "x", "é", "Σ", "K", "\u212a", "\u0130"]
PIECES += ["\u0131", "\u017f", "ſtatus", "exıt", "EXİT", "e\u0307", "\t", "_", '"exit_code": 3']


def by_patterns(output: str) -> int | None:
    """The definition: the JSON field, else the first phrase the text pattern finds."""
    match = one_liners._EXIT_JSON.search(output) or one_liners._EXIT_TEXT.search(output)
    return int(match.group(1)) if match else None


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_exit_code_matches_the_patterns(pieces: list[str]) -> None:
    output = "".join(pieces)
    assert one_liners.exit_code(output) == by_patterns(output)


def test_only_the_listed_characters_fold_to_the_phrases_letters() -> None:
    letters = sorted(set("".join(one_liners._EXIT_PHRASES)) - {" "})
    folds = re.compile(f"(?i)[{''.join(letters)}]")
    outside = [
        chr(point) for point in range(128, sys.maxunicode + 1) if folds.fullmatch(chr(point))
    ]
    assert sorted(outside) == sorted(one_liners._FOLDED_TO_ASCII)


def test_exit_code_outside_ascii() -> None:
    assert one_liners.exit_code("Build — exit code 2") == 2
    assert one_liners.exit_code("Build — ExıT status 5") == 5  # dotless i: the pattern decides
    assert one_liners.exit_code("Büild fäiled, exıt cödé 2") is None
    assert one_liners.exit_code("naïve output with no code") is None
