"""Why a compaction was skipped, and the change that would compact: computed from the real
numbers, so applying any suggested change really does compact the same conversation."""

from __future__ import annotations

import pytest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.samples import load_sample
from compaction.phases.regions import plan_regions
from compaction.ui.skip_advice import skip_advice, window_label


def _skipped(sample: str, config: CompactionConfig, force: bool) -> tuple[list, str]:
    messages = load_sample(sample).messages
    result = Compactor(config).compress(messages, force=force)
    assert result.skipped, f"{sample} was expected to skip at {config}"
    return messages, str(result.skip_reason)


@pytest.mark.parametrize("sample", ["quick-fix", "shell-session"])
def test_nothing_to_compress_names_the_tail_allowance_and_a_change_that_compacts(
    sample: str,
) -> None:
    config = CompactionConfig()
    messages, reason = _skipped(sample, config, force=True)
    advice = skip_advice(plan_regions(messages, config), reason)
    assert advice is not None
    text = advice.sentence()
    assert f"soft ceiling {config.tail_soft_ceiling:,} tokens" in text
    assert "128K window" in text and "tail ratio 0.2" in text
    assert advice.alternatives, text
    for name, value in advice.alternatives:
        changed = config.replace(**{name: value})
        result = Compactor(changed).compress(messages, force=True)
        assert not result.skipped, f"{name}={value} still skips: {result.skip_reason}"
        assert len(result.phases) > 2
    assert "To compact, lower the window to" in text


def test_a_tail_ratio_is_offered_when_a_smaller_one_leaves_a_middle() -> None:
    # The orphans sample (31K tokens) fits a 0.2 tail of a 400K window; a smaller tail ratio or
    # window compacts it, and the sentence reads as the issue asks ("… or the tail ratio to …").
    config = CompactionConfig(context_length=400_000)
    messages, reason = _skipped("orphans", config, force=True)
    advice = skip_advice(plan_regions(messages, config), reason)
    assert advice is not None
    names = dict(advice.alternatives)
    assert {"context_length", "tail_token_ratio"} <= set(names), advice
    assert f"lower the window to {window_label(names['context_length'])}" in advice.sentence()
    assert "or the tail ratio to" in advice.sentence()
    for name, value in advice.alternatives:
        result = Compactor(config.replace(**{name: value})).compress(messages, force=True)
        assert not result.skipped, (name, value)
    # The largest such change: one step less would still skip.
    bigger = round(names["tail_token_ratio"] + 0.05, 2)
    result = Compactor(config.replace(tail_token_ratio=bigger)).compress(messages, force=True)
    assert result.skipped


def test_below_the_threshold_names_the_threshold_and_the_window_that_reaches_it() -> None:
    config = CompactionConfig()
    messages, reason = _skipped("orphans", config, force=False)
    advice = skip_advice(plan_regions(messages, config), reason)
    assert advice is not None
    text = advice.sentence()
    assert "below the threshold of 64,000" in text
    assert "Compact below the threshold" in text
    for name, value in advice.alternatives:
        result = Compactor(config.replace(**{name: value})).compress(messages, force=False)
        assert not result.skip_reason or not result.skip_reason.startswith("below"), (name, value)


def test_window_labels() -> None:
    assert window_label(128_000) == "128K"
    assert window_label(1_000_000) == "1M"
    assert window_label(31_500) == "31,500"
