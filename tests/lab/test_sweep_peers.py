"""A peer's own parameters as sweep axes: `PEER.FIELD` specs, each point equal to one run of
that peer's policy, one peer per grid, and recommendation snippets that run the peer."""

from __future__ import annotations

import pytest

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.lab.peers import PeerState, make_peer
from compaction.lab.probes import mine_facts, recall
from compaction.lab.samples import list_samples, load_sample
from compaction.lab.sweep.frontier import recommendation_snippets
from compaction.lab.sweep.grid import field_kind, parse_param, peer_field_names
from compaction.lab.sweep.run import sweep
from compaction.messages import Message
from compaction.provider_rules import errors, validate
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import make_counter

BASE = CompactionConfig(context_length=8_000)


@pytest.fixture(scope="module")
def session() -> list[Message]:
    if not any(sample.id == "fix-failing-tests" for sample in list_samples()):
        pytest.skip("sample_sessions/fix-failing-tests is absent from this checkout")
    return load_sample("fix-failing-tests").messages


def test_peer_fields_parse_as_axes_with_their_own_types_and_ranges() -> None:
    assert "hermes.protect_last_n" in peer_field_names()
    assert "observation-masking.window_turns" in peer_field_names()
    assert field_kind("gemini-cli.preserve_fraction") is float
    assert parse_param("openhands.max_size=60:180:60") == ("openhands.max_size", [60, 120, 180])
    with pytest.raises(ConfigError, match=r"invalid value 2\.0 for parameter hermes\.tail_ratio"):
        parse_param("hermes.tail_ratio=0.1,2")
    with pytest.raises(ConfigError, match=r"unknown parameter 'hermes\.nothing'"):
        parse_param("hermes.nothing=1")


def test_each_peer_point_is_one_run_of_that_peer(session: list[Message]) -> None:
    result = sweep([session], ["hermes.protect_last_n=5,40"], base_config=BASE)
    facts = mine_facts(session)
    counter = make_counter(BASE.counter, BASE.model)
    for point in result.points:
        peer = make_peer("hermes", {"protect_last_n": point.params["hermes.protect_last_n"]})
        run = peer.compact(session, 8_000, counter, ExtractiveSummarizer(), PeerState())
        assert point.tokens_after == run.tokens_after
        assert point.recall_found == recall(facts, run.messages).found
        assert point.openai_errors == len(errors(validate(run.messages, "openai")))
        assert point.summary_tokens > 0
    by_tail = {p.params["hermes.protect_last_n"]: p.tokens_after for p in result.points}
    assert by_tail[40] > by_tail[5]  # a longer protected tail keeps more
    snippets = recommendation_snippets(result.points[0])
    assert "make_peer('hermes', {'protect_last_n': 5})" in snippets["python"]
    assert "--strategies hermes" in snippets["cli"]


def test_one_peer_per_grid_and_cross_field_rules_per_point(session: list[Message]) -> None:
    with pytest.raises(ConfigError, match="one peer's parameters at a time"):
        sweep([session], ["hermes.protect_last_n=5", "codex.user_budget_tokens=100"])
    with pytest.raises(ConfigError, match="invalid combination"):
        sweep([session], ["openhands.max_size=8", "openhands.keep_first=4"])
