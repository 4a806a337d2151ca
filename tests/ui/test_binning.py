"""Grouping messages into bars: bin sizes, region splits, majority colours and the chart built."""

from __future__ import annotations

import pytest

from compaction.ui.binning import BAR_LIMIT, bin_hover, bin_size, make_bins
from compaction.ui.charts import grouping_caption, message_chart
from compaction.ui.palette import FATE_LABELS


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
    hover = bin_hover(bins[0], FATE_LABELS)
    assert "messages #0–#3 (4)" in hover
    assert "125 tokens" in hover
    assert "2 folded into the summary" in hover


def test_hover_escapes_roles() -> None:
    bins = make_bins([1], ["kept"], ["<b>x</b>"], 1, split_on_label=False)
    assert "&lt;b&gt;" in bin_hover(bins[0], FATE_LABELS)


def test_mismatched_lengths_are_reported() -> None:
    with pytest.raises(ValueError, match="one entry per message"):
        make_bins([1, 2], ["head"], ["user", "user"], 1, split_on_label=True)


def test_a_5000_message_chart_draws_at_most_the_limit_of_bars_starting_at_messages() -> None:
    count = 5_000
    labels = ["head"] * 4 + ["middle"] * 4_000 + ["tail"] * 996
    figure = message_chart([], [10] * count, labels, "region", ["user"] * count)
    starts = [x for trace in figure.data for x in trace.x]
    assert len(starts) <= BAR_LIMIT + 2  # +1 per region boundary
    assert sorted(starts)[0] == 0
    widths = [w for trace in figure.data for w in trace.width]
    assert sum(widths) == count  # every message in exactly one bar
    assert sum(y for trace in figure.data for y in trace.y) == 10 * count
    assert {trace.name for trace in figure.data} == {
        "Head (protected)",
        "Middle (summarised)",
        "Tail (kept)",
    }
    assert grouping_caption(count, "region") is not None
    assert "grouped 9 per bar" in (grouping_caption(count, "region") or "")


def test_a_small_chart_keeps_one_bar_per_message_and_fate_legends_use_human_labels() -> None:
    labels = ["kept", "folded", "note_added"]
    figure = message_chart(["a", "b", "c"], [1, 2, 3], labels, "fate", ["user"] * 3)
    assert sorted(x for trace in figure.data for x in trace.x) == [0, 1, 2]
    assert {trace.name for trace in figure.data} == {
        FATE_LABELS["kept"],
        FATE_LABELS["folded"],
        FATE_LABELS["note_added"],
    }
    assert grouping_caption(3, "fate") is None
