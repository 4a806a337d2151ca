"""`cache_aware`: a smaller kept tail, because after a compaction only the head is still a cached
prefix — and its effect measured in dollars by lab/cost's cache model on a real session."""

from __future__ import annotations

import pytest
from corpus_paths import corpus_path

from compaction.compactor import Compactor
from compaction.config import CACHE_AWARE_TAIL, CompactionConfig
from compaction.errors import ConfigError
from compaction.formats import load_conversation

SPOTTER = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def test_cache_aware_keeps_half_the_tail_budget_and_is_a_bool() -> None:
    default = CompactionConfig(context_length=100_000)
    aware = default.replace(cache_aware=True)
    assert aware.tail_budget_tokens == int(default.tail_budget_tokens * CACHE_AWARE_TAIL)
    assert aware.threshold_tokens == default.threshold_tokens
    assert aware.to_dict()["cache_aware"] is True
    with pytest.raises(ConfigError, match="cache_aware must be true or false"):
        CompactionConfig(cache_aware="yes")  # type: ignore[arg-type]


def _spotter() -> list[dict[str, object]]:
    path = corpus_path(SPOTTER)
    if path is None:
        pytest.skip(f"corpus file {SPOTTER} is absent (a fresh clone has no ../shared/corpus*)")
    return load_conversation(path).messages


def test_the_head_stays_byte_identical_so_the_next_request_reads_it_from_the_cache() -> None:
    messages = _spotter()[:200]
    for aware in (False, True):
        config = CompactionConfig(context_length=80_000, cache_aware=aware)
        result = Compactor(config).compress(messages, force=True)
        head = result.phase("boundaries").details["head_end"]
        assert head >= 3 and result.messages[:head] == messages[:head]
        assert len(result.messages) < len(messages)


def test_cache_aware_costs_less_on_a_real_session_by_the_cache_model() -> None:
    from compaction.lab.cost.report import cost_report

    path = corpus_path(SPOTTER)
    if path is None:
        pytest.skip(f"corpus file {SPOTTER} is absent")
    report = cost_report(load_conversation(path), peers=[])
    default = report.scenario("ours (default)")
    aware = report.scenario("ours (cache-aware)")
    assert default is not None and aware is not None
    assert default.usd is not None and aware.usd is not None
    assert aware.usd < default.usd * 0.95  # 9.0% less in the run docs/cost.md reports
    assert aware.compactions == default.compactions
