"""The structural measure in the eval's rows and digests (per category, per third), and the
per-session comparison of the pipeline with head-tail-matched built from those digests."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.lab.evaluate import (
    COMPACTION,
    MATCHED,
    STRUCTURAL_COLUMNS,
    aggregate,
    evaluate,
)
from compaction.lab.per_session import FIGURES, compare_sessions, figure_name, losses
from compaction.lab.samples import load_sample
from compaction.lab.structural import CATEGORIES, POSITIONS


@pytest.fixture(scope="module")
def evaluation() -> Any:
    # At a tenth of its size the pipeline's summary loses facts head-tail's tail still holds.
    return evaluate(load_sample("fix-failing-tests").messages, target_ratio=0.1)


def test_rows_carry_structural_recall_per_category_and_third(evaluation: Any) -> None:
    assert (
        *(f"recall_structural_{name}" for name in CATEGORIES),
        *(f"recall_structural_{position}" for position in POSITIONS),
    ) == STRUCTURAL_COLUMNS
    for name, outcome in evaluation.outcomes.items():
        row = outcome.row()
        structural = outcome.structural
        for category in CATEGORIES:
            expected = structural.category_ratio(category)
            shown = row[f"recall_structural_{category}"]
            assert shown == (None if expected is None else round(expected, 4)), (name, category)
        for position in POSITIONS:
            expected = structural.position_ratio(position)
            assert row[f"recall_structural_{position}"] == pytest.approx(expected, abs=1e-4)
        assert row["recall_structural"] == round(structural.ratio, 4)


def test_the_digest_keeps_counts_and_examples_of_lost_facts(evaluation: Any) -> None:
    digest = evaluation.summary_row()
    for name, outcome in evaluation.outcomes.items():
        detail = digest["structural"][name]
        counts = detail["categories"]
        assert {category: counts[category]["total"] for category in CATEGORIES} == {
            category: outcome.structural.total.get(category, 0) for category in CATEGORIES
        }
        for category, examples in detail["lost_examples"].items():
            lost = [f for f in outcome.structural.lost if f.category == category]
            assert len(examples) == min(5, len(lost))
            indexes = [example["source_index"] for example in examples]
            assert indexes == sorted(f.source_index for f in lost)[: len(examples)]
    # What the pipeline lost and head-tail kept at its size, oldest first per category.
    ours = evaluation.outcomes[COMPACTION].structural
    theirs = evaluation.outcomes[MATCHED].structural
    only_ours = sorted(ours.lost_where_kept(theirs), key=lambda fact: fact.source_index)
    assert only_ours, "the sample should show the pipeline losing something head-tail keeps"
    expected: dict[str, list[dict[str, Any]]] = {}
    for fact in only_ours:
        chosen = expected.setdefault(fact.category, [])
        if len(chosen) < 5:
            chosen.append(fact.to_dict())
    assert digest["structural_gap"] == expected


def test_aggregate_means_each_structural_column(evaluation: Any) -> None:
    table = {entry["strategy"]: entry for entry in aggregate([evaluation.summary_row()])}
    for name, outcome in evaluation.outcomes.items():
        for column in STRUCTURAL_COLUMNS:
            assert table[name][column] == outcome.row()[column]


def digest(source: str, ours: dict[str, float | None], theirs: dict[str, float | None]) -> Any:
    def row(values: dict[str, float | None]) -> dict[str, float | None]:
        return {column: values.get(figure_name(column)) for column in FIGURES}

    return {
        "source": source,
        "strategies": {COMPACTION: row(ours), MATCHED: row(theirs)},
        "structural": {COMPACTION: {"categories": {"paths": {"total": 4}, "errors": {"total": 2}}}},
        "structural_gap": {
            "errors": [
                {"category": "errors", "text": "E2", "source_index": 9, "position": "late"},
            ],
            "paths": [
                {"category": "paths", "text": "a.py", "source_index": 2, "position": "early"},
                {"category": "paths", "text": "b.py", "source_index": 5, "position": "middle"},
            ],
        },
    }


DIGESTS = [
    digest("runs.json#0", {"total": 0.5, "paths": 0.5, "errors": 0.5}, {"total": 1.0}),
    digest("runs.json#1", {"total": 1.0, "paths": 1.0}, {"total": 0.5, "paths": 0.0}),
    digest("runs.json#2", {"total": 0.9, "paths": 1.0}, {"total": 0.9, "paths": 1.0}),
    digest("one.jsonl", {"total": 0.9, "errors": 0.25}, {"total": 0.8, "errors": 0.5}),
    {"source": "other.json", "strategies": {COMPACTION: {"recall_structural": 1.0}}},
]


def test_a_file_of_many_conversations_is_one_row_of_means() -> None:
    rows = compare_sessions(DIGESTS)
    assert [(row.source, row.conversations, row.lost, row.tied) for row in rows] == [
        ("runs.json", 3, 1, 1),
        ("one.jsonl", 1, 0, 0),
    ]
    runs = rows[0]
    assert runs.facts == 6
    assert runs.ours["recall_structural"] == pytest.approx(0.8)
    assert runs.theirs["recall_structural"] == pytest.approx(0.8)
    assert runs.ours["recall_structural_paths"] == pytest.approx(2.5 / 3)
    assert runs.theirs["recall_structural_paths"] == 0.5  # a run with no value is left out
    assert runs.ours["recall_structural_urls"] is None
    assert runs.to_dict()["ours"]["total"] == 0.8
    assert runs.to_dict()["conversations_tied"] == 1


def test_losses_name_each_figure_behind_with_facts_head_tail_kept() -> None:
    found = [(loss.source, loss.figure, loss.ours, loss.theirs) for loss in losses(DIGESTS)]
    assert found == [("runs.json#0", "total", 0.5, 1.0), ("one.jsonl", "errors", 0.25, 0.5)]
    total, errors = losses(DIGESTS, examples=2)
    assert [fact["text"] for fact in total.examples] == ["a.py", "b.py"]  # oldest first
    assert [fact["text"] for fact in errors.examples] == ["E2"]
    assert errors.to_dict()["head_tail_matched"] == 0.5
