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


def test_the_legend_adds_tokens_after_phase_1_where_pruning_shrinks_a_region() -> None:
    spec = budget_bar(300, 40_000, 9_000, CompactionConfig(), (300, 5_000, 8_000)).to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [
        "Head (protected) · 300 tokens",
        "Middle (summarised) · 40,000 tokens (5,000 after Phase 1)",
        "Tail (kept) · 9,000 tokens (8,000 after Phase 1)",
    ]


def test_past_the_window_its_label_moves_right_of_the_line_away_from_the_threshold() -> None:
    config = CompactionConfig(context_length=10_000, threshold_ratio=0.5)
    for total, window_align in ((8_000, "right"), (90_000, "left")):
        spec = budget_bar(0, total, 0, config).to_dict()
        lines = spec["datasets"][spec["layer"][1]["data"]["name"]]
        assert {line["label"]: line["align"] for line in lines} == {
            "threshold 5,000": "right",
            "window 10,000": window_align,
        }
