"""The Inspect budget bar: what it tells a reader, read from its Vega-Lite spec."""

from __future__ import annotations

from compaction.config import CompactionConfig
from compaction.ui.charts import budget_bar


def test_the_budget_bar_names_each_region_with_its_tokens_and_marks_threshold_and_window() -> None:
    config = CompactionConfig(context_length=100_000, threshold_ratio=0.5)
    spec = budget_bar(300, 40_000, 9_000, config).to_dict()
    bars, rules, labels = spec["layer"]
    legend = bars["encoding"]["color"]["scale"]["domain"]
    assert legend == [
        "Head (protected) · 300 tokens",
        "Middle (summarised) · 40,000 tokens",
        "Tail (kept) · 9,000 tokens",
    ]
    lines = spec["datasets"][rules["data"]["name"]]
    values = {line["x"]: line["label"] for line in lines}
    assert values == {50_000: "threshold 50,000", 100_000: "window 100,000"}
    assert labels["encoding"]["text"]["field"] == "label"
    # The axis reaches past the window, so the window line is on the chart, not its edge.
    assert bars["encoding"]["x"]["scale"]["domain"][1] > 100_000


def test_a_conversation_past_the_window_stretches_the_bar_axis() -> None:
    config = CompactionConfig(context_length=10_000, threshold_ratio=0.5)
    spec = budget_bar(1_000, 20_000, 4_000, config).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"][1] >= 25_000
