"""Grouping messages into bars: bin sizes, region splits, majority colours and the chart built."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from compaction.ui.binning import BAR_LIMIT, bin_size, make_bins
from compaction.ui.charts import PICK, chart_rows, grouping_caption, message_chart
from compaction.ui.palette import FATE_LABELS
from compaction.ui.vega import chart_spec


def _sent(chart: Any) -> dict[str, Any]:
    """The chart's spec as the app sends it (ui/vega.py): JSON, its rows lists."""
    return dict(json.loads(chart_spec(lambda: chart)))


def test_bin_size_is_one_up_to_the_limit_and_keeps_the_bar_count_under_it() -> None:
    assert bin_size(BAR_LIMIT) == 1
    assert bin_size(BAR_LIMIT + 1) == 2
    assert bin_size(5_000) == 9
    assert 5_000 / bin_size(5_000) <= BAR_LIMIT


def test_region_bins_never_mix_regions_and_cover_every_message_once() -> None:
    labels = ["head"] * 3 + ["middle"] * 10 + ["tail"] * 7
    tokens = list(range(1, 21))
    roles = ["user", "assistant"] * 10
    bins = make_bins(tokens, labels, roles, 4, split_on_label=True)
    assert [(b.start, b.end) for b in bins] == [
        (0, 3), (3, 7), (7, 11), (11, 13), (13, 17), (17, 20)
    ]  # fmt: skip
    assert [b.label for b in bins] == ["head", "middle", "middle", "middle", "tail", "tail"]
    assert all(len(b.label_counts) == 1 for b in bins)
    assert sum(b.tokens for b in bins) == sum(tokens)
    assert bins[0].role_counts == {"user": 2, "assistant": 1}


def test_a_fate_bin_takes_the_label_of_most_of_its_tokens() -> None:
    labels = ["kept", "folded", "folded", "kept"]
    bins = make_bins([100, 10, 10, 5], labels, ["tool"] * 4, 4, split_on_label=False)
    assert len(bins) == 1
    assert bins[0].label == "kept"  # 105 tokens against 20 (as many messages each)
    assert bins[0].label_counts == {"kept": 2, "folded": 2}
    (row,) = chart_rows([], [100, 10, 10, 5], labels, "fate", ["tool"] * 4, limit=1)
    assert row["messages"] == "#0–#3 (4)" and row["tokens"] == 125
    assert row["label"] == FATE_LABELS["kept"]
    assert "2 folded into the summary" in row["detail"]


def test_tooltips_are_plain_text_for_vega_to_escape() -> None:
    # vega-tooltip escapes HTML itself: pre-escaping would show "&lt;b&gt;" to the user.
    rows = chart_rows(["<b>x</b>"], [1], ["kept"], "fate", ["<i>r</i>"])
    assert rows[0]["detail"] == "<b>x</b>" and rows[0]["role"] == "<i>r</i>"


def test_mismatched_lengths_are_reported() -> None:
    with pytest.raises(ValueError, match="one entry per message"):
        make_bins([1, 2], ["head"], ["user", "user"], 1, split_on_label=True)


def test_a_5000_message_chart_draws_at_most_the_limit_of_bars_starting_at_messages() -> None:
    count = 5_000
    labels = ["head"] * 4 + ["middle"] * 4_000 + ["tail"] * 996
    rows = chart_rows([], [10] * count, labels, "region", ["user"] * count)
    assert len(rows) <= BAR_LIMIT + 2  # +1 per region boundary
    assert rows[0]["start"] == 0 and rows[-1]["end"] == count
    assert all(a["end"] == b["start"] for a, b in itertools.pairwise(rows))
    assert sum(row["tokens"] for row in rows) == 10 * count
    assert {row["label"] for row in rows} == {
        "Head (protected)",
        "Middle (summarised)",
        "Tail (kept)",
    }
    assert grouping_caption(count, "region") is not None
    assert "grouped 9 per bar" in (grouping_caption(count, "region") or "")


def test_a_small_chart_keeps_one_bar_per_message_and_fate_legends_use_human_labels() -> None:
    labels = ["kept", "folded", "note_added"]
    chart = _sent(message_chart(["a", "b", "c"], [1, 2, 3], labels, "fate", ["user"] * 3))
    rows = next(iter(chart["datasets"].values()))
    assert [(row["start"], row["end"]) for row in rows] == [(0, 1), (1, 2), (2, 3)]
    assert chart["layer"][0]["encoding"]["color"]["scale"]["domain"] == [
        FATE_LABELS["kept"],
        FATE_LABELS["folded"],
        FATE_LABELS["note_added"],
    ]
    # A click selects the bar's first message: the Inspect page opens it.
    assert chart["params"][0]["name"] == PICK
    assert chart["params"][0]["select"]["fields"] == ["start"]
    assert grouping_caption(3, "fate") is None


def test_pinned_messages_have_a_marker_at_their_own_place_even_where_bars_group_them() -> None:
    count = 5_000  # grouped: several messages per bar
    labels = ["head"] * 4 + ["middle"] * 4_000 + ["tail"] * 996
    chart = message_chart([], [10] * count, labels, "region", ["user"] * count, pinned={7, 4_321})
    spec = _sent(chart)
    markers = [layer for layer in spec["layer"] if layer["mark"].get("type") == "point"]
    assert len(markers) == 1
    rows = spec["datasets"][markers[0]["data"]["name"]]
    assert rows == [{"at": 7.5, "message": "#7"}, {"at": 4_321.5, "message": "#4321"}]
    assert markers[0]["encoding"]["tooltip"][0]["title"] == "pinned (kept verbatim)"
    # The click target stays the top layer, so a marker never takes a bar's click.
    assert spec["layer"][-1]["mark"] == {"type": "bar", "opacity": 0}
    assert spec["params"][0]["name"] == PICK
    # Without pins the chart is the bars and the targets alone.
    plain = message_chart(["a", "b"], [1, 2], ["head", "tail"], "region", ["user"] * 2)
    assert [layer["mark"]["type"] for layer in _sent(plain)["layer"]] == ["bar", "bar"]
