"""The side-by-side alignment on every sample: each input message on exactly one row, each
output message on exactly one row, and the rows in the compacted conversation's order."""

from __future__ import annotations

import pytest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.samples import list_samples, load_sample
from compaction.result import FOLDED, PREVIOUS_SUMMARY, REMOVED
from compaction.ui.side_by_side import align, row_diff, row_texts

SAMPLE_IDS = [sample.id for sample in list_samples()]


@pytest.mark.parametrize("sample_id", SAMPLE_IDS)
def test_every_message_is_on_exactly_one_row(sample_id: str) -> None:
    messages = load_sample(sample_id).messages
    result = Compactor(CompactionConfig()).compress(messages, force=True)
    rows = align(messages, result)
    assert sorted(i for row in rows for i in row.left) == list(range(len(messages)))
    rights = [row.right for row in rows if row.right is not None]
    assert rights == list(range(len(result.messages)))  # in the compacted order, none skipped
    folded = sorted(i for i, f in result.fates.items() if f in (FOLDED, PREVIOUS_SUMMARY))
    if not result.skipped and folded:
        (summary,) = [row for row in rows if row.kind == "summary"]
        assert [i for i in summary.left if i in folded] == folded
    for row in rows:
        left, right = row_texts(row, messages, result.messages)
        assert left and right
        if row.kind == "kept":
            assert messages[row.left[0]] == result.messages[row.right or 0]
            assert row_diff(row, messages, result.messages) == "(no textual difference)"
        if row.kind == "removed":
            assert row.right is None


def test_orphans_sample_shows_the_removed_result_and_the_inserted_stub() -> None:
    messages = load_sample("orphans").messages
    result = Compactor(CompactionConfig()).compress(messages, force=True)
    rows = align(messages, result)
    removed = [row for row in rows if row.kind == "removed"]
    inserted = [row for row in rows if row.kind == "inserted"]
    assert removed and all(result.fates.get(row.left[0]) == REMOVED for row in removed)
    assert inserted and all(not row.left for row in inserted)
    left, right = row_texts(inserted[0], messages, result.messages)
    assert left == "(new: not in the original)" and right.startswith("[tool]")


def test_consecutive_removed_messages_stay_where_they_were() -> None:
    from compaction.result import CompactionResult, PhaseResult

    original = [{"role": "user", "content": f"m{i}"} for i in range(5)]
    kept = [original[0], original[3], original[4]]
    final = PhaseResult("cleanup", kept, [0, 3, 4], 10, 6, {1: REMOVED, 2: REMOVED})
    result = CompactionResult(kept, [final], 10, 6, fates={1: REMOVED, 2: REMOVED})
    rows = align(original, result)
    assert [(row.left, row.right, row.kind) for row in rows] == [
        ((0,), 0, "kept"),
        ((1,), None, "removed"),
        ((2,), None, "removed"),
        ((3,), 1, "kept"),
        ((4,), 2, "kept"),
    ]
