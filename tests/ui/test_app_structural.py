"""AppTest: the Evaluate page shows `recall (structural)` beside recall, as the library computes
it (the independent measure of lab/structural.py)."""

from __future__ import annotations

from app_helpers import ROOT, dataframe_with, open_app

from compaction.config import CompactionConfig
from compaction.lab.evaluate import evaluate
from compaction.samples import load_sample
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
