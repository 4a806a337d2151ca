"""AppTest: the Evaluate page shows `recall (structural)` beside recall, per category and per
third of the conversation, and for a folder the pipeline against head-tail per session, as the
library computes them (the independent measure of lab/structural/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
from app_helpers import ROOT, dataframe_with, open_app

from compaction.config import CompactionConfig
from compaction.lab.evaluate import evaluate
from compaction.lab.samples import get_sample, load_sample
from compaction.summarizers.extractive import ExtractiveSummarizer

EVALUATE = ROOT / "app_pages" / "evaluate.py"


def test_structural_recall_column_beside_recall() -> None:
    messages = load_sample("orphans").messages
    expected = evaluate(messages, config=CompactionConfig(), summarizer=ExtractiveSummarizer())
    at = open_app(EVALUATE, sample="orphans")
    table = dataframe_with(at, "recall (structural)")
    columns = list(table.columns)
    assert columns.index("recall (structural)") == columns.index("recall") + 1
    assert list(table["recall (structural)"]) == [
        row["recall_structural"] for row in expected.rows()
    ]
    assert any("independent measure" in str(c.value) for c in at.caption)


def test_structural_recall_per_category_and_third_for_each_strategy() -> None:
    messages = load_sample("fix-failing-tests").messages
    expected = evaluate(messages, config=CompactionConfig(), summarizer=ExtractiveSummarizer())
    at = open_app(EVALUATE, sample="fix-failing-tests")
    assert not at.exception
    table = dataframe_with(at, "missing paths")
    assert list(table["strategy"]) == [row["strategy"] for row in expected.rows()]
    for column, label in (
        ("recall_structural_early_errors", "early errors"),
        ("recall_structural_definitions", "definitions"),
        ("recall_structural_early", "1st third"),
    ):
        shown = [None if pd.isna(value) else value for value in table[label]]
        assert shown == [row[column] for row in expected.rows()], label
    titles = [e.label for e in at.expander if e.label.startswith("Structural facts lost by")]
    assert titles == [
        f"Structural facts lost by {name}: {len(outcome.structural.lost)}"
        for name, outcome in expected.outcomes.items()
        if outcome.structural is not None
    ]


def test_a_folder_shows_the_pipeline_against_head_tail_per_session(tmp_path: Path) -> None:
    shutil.copy(get_sample("fix-failing-tests").path, tmp_path)
    at = open_app(EVALUATE, evaluate_ratio="0.1")
    at.text_input(key="evaluate_folder").set_value(str(tmp_path))
    at.button(key="evaluate_folder_run").click()
    at.run()
    assert not at.exception
    aggregate_table = dataframe_with(at, "over target")
    assert "recall (structural): missing paths" in aggregate_table.columns
    per_session = dataframe_with(at, "lost in total")
    assert list(per_session["session"]) == ["fix-failing-tests.openai.json"]
    expected = evaluate(load_sample("fix-failing-tests").messages, target_ratio=0.1).rows()
    rows = {row["strategy"]: row for row in expected}
    assert per_session["total"][0] == (
        f"{rows['compaction']['recall_structural']:.2f} / "
        f"{rows['head-tail-matched']['recall_structural']:.2f}"
    )
    behind = [
        column
        for column in rows["compaction"]
        if column.startswith("recall_structural_")
        and (rows["compaction"][column] or 0) < (rows["head-tail-matched"][column] or 0)
    ]
    if behind:
        losses = dataframe_with(at, "lost facts [message index]")
        assert len(losses["figure"]) >= len(behind)
    else:
        captions = [str(c.value) for c in at.caption]
        assert "Compaction keeps at least as much as head-tail-matched everywhere." in captions
