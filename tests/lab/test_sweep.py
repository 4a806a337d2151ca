"""Sweeps: points equal single runs, parallel equals serial, frontier, recommendation, history."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.compactor import compress
from compaction.config import CompactionConfig
from compaction.errors import ConfigError, HistoryError
from compaction.history import History
from compaction.lab.probes import mine_facts, recall
from compaction.lab.samples import list_samples, load_sample
from compaction.lab.sweep.frontier import (
    non_default_fields,
    pareto_frontier,
    recommend,
    recommendation_snippets,
)
from compaction.lab.sweep.run import Sweep, SweepPoint, sweep
from compaction.messages import Message
from compaction.provider_rules import errors, validate
from compaction.summarizers.base import StaticSummarizer

BASE = CompactionConfig(context_length=40_000)


@pytest.fixture(scope="module")
def session() -> list[Message]:
    if not any(sample.id == "fix-failing-tests" for sample in list_samples()):
        pytest.skip("sample_sessions/fix-failing-tests is absent from this checkout")
    return load_sample("fix-failing-tests").messages


@pytest.fixture(scope="module")
def small_sweep(session: list[Message]) -> Sweep:
    return sweep(
        [session], ["tail_token_ratio=0.05,0.15", "summary_ratio=0.1,0.3"], base_config=BASE
    )


def test_each_point_equals_a_single_compress_with_its_config(
    session: list[Message], small_sweep: Sweep
) -> None:
    assert len(small_sweep.points) == 4
    facts = mine_facts(session)
    for point in small_sweep.points:
        config = BASE.replace(**point.params)
        assert point.config == config.to_dict()
        result = compress(session, config)
        kept = recall(facts, result.messages)
        assert point.tokens_before == result.tokens_before
        assert point.tokens_after == result.tokens_after
        assert point.savings_pct == pytest.approx(result.savings_pct, abs=1e-4)
        assert (point.recall_found, point.recall_total) == (kept.found, kept.total)
        assert point.recall == pytest.approx(kept.ratio, abs=1e-4)
        assert point.openai_errors == len(errors(validate(result.messages, "openai")))
        assert point.anthropic_errors == len(errors(validate(result.messages, "anthropic")))
        assert point.summary_tokens > 0 and point.skipped == 0
    # A larger tail keeps more: fewer savings.
    by_tail = {p.params["tail_token_ratio"]: p.tokens_after for p in small_sweep.points}
    assert by_tail[0.15] > by_tail[0.05]


def test_parallel_sweep_equals_serial(session: list[Message], small_sweep: Sweep) -> None:
    parallel = sweep(
        [session], ["tail_token_ratio=0.05,0.15", "summary_ratio=0.1,0.3"], base_config=BASE, jobs=2
    )

    def figures(s: Sweep) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if k != "duration_s"} for row in s.rows()]

    assert figures(parallel) == figures(small_sweep)
    assert parallel.jobs == 2


def test_many_conversations_pool_their_figures(session: list[Message]) -> None:
    other = session[: len(session) // 2]
    pooled = sweep([session, other], {"tail_token_ratio": [0.2]}, base_config=BASE)
    (point,) = pooled.points
    assert [run["conversation"] for run in point.runs] == [0, 1]
    assert point.tokens_after == sum(run["tokens_after"] for run in point.runs)
    assert point.recall_total == sum(run["recall_total"] for run in point.runs)
    assert [c["messages"] for c in pooled.conversations] == [len(session), len(other)]
    single = sweep([other], {"tail_token_ratio": [0.2]}, base_config=BASE).points[0]
    assert point.runs[1]["tokens_after"] == single.tokens_after


def test_progress_and_target_tokens(session: list[Message]) -> None:
    calls: list[tuple[int, int]] = []
    result = sweep(
        [session],
        {"tail_token_ratio": [0.1, 0.5]},
        base_config=BASE,
        target_tokens=9_000,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(0, 2), (1, 2), (2, 2)]
    for point in result.points:
        assert point.fits_target == (point.tokens_after <= 9_000)


def test_summariser_is_used_and_input_untouched(session: list[Message]) -> None:
    before = json.dumps(session, sort_keys=True)
    result = sweep([session], {"summary_ratio": [0.2]}, summarizer=StaticSummarizer())
    assert result.summarizer == "static"
    assert json.dumps(session, sort_keys=True) == before


def test_bad_sweeps_fail_before_any_work(session: list[Message]) -> None:
    with pytest.raises(ConfigError, match="at least one conversation"):
        sweep([], {"summary_ratio": [0.2]})
    with pytest.raises(ConfigError, match="jobs must be at least 1"):
        sweep([session], {"summary_ratio": [0.2]}, jobs=0)
    with pytest.raises(ConfigError, match=r"invalid value 1\.5 for parameter summary_ratio"):
        sweep([session], ["summary_ratio=0.5:2:0.5"])
    with pytest.raises(ConfigError, match="message lists or Conversations"):
        sweep(["not a conversation"], {"summary_ratio": [0.2]})


def test_sweep_round_trips_through_dict(small_sweep: Sweep) -> None:
    data = json.loads(json.dumps(small_sweep.to_dict()))
    again = Sweep.from_dict(data)
    assert again.rows() == small_sweep.rows()
    assert again.grid == small_sweep.grid
    with pytest.raises(ConfigError, match="not a sweep"):
        Sweep.from_dict({"points": []})


# -- frontier and recommendation on hand-made points ---------------------------------------------


def point(
    index: int,
    savings: float,
    recall_ratio: float,
    tokens_after: int = 1_000,
    errors_openai: int = 0,
    **params: Any,
) -> dict[str, Any]:
    return {
        "index": index,
        "savings_pct": savings,
        "recall": recall_ratio,
        "tokens_after": tokens_after,
        "openai_errors": errors_openai,
        "anthropic_errors": 0,
        "config": BASE.replace(**params).to_dict(),
    }


def test_pareto_frontier_maximises_both_in_ascending_savings() -> None:
    points = [
        point(0, 50, 0.9),
        point(1, 70, 0.8),
        point(2, 60, 0.7),  # dominated by 1
        point(3, 70, 0.6),  # same savings as 1, lower recall: dominated
        point(4, 40, 0.9),  # same recall as 0, lower savings: dominated
        point(5, 90, 0.5),
        point(6, 50, 0.9),  # equal to 0 on both: kept, after 0
        point(7, 30, 0.95),
    ]
    frontier = pareto_frontier(points)
    assert [p["index"] for p in frontier] == [7, 0, 6, 1, 5]
    # Other axes: minimising is done by the caller; x/y name any numeric key.
    assert [p["index"] for p in pareto_frontier(points, x="recall", y="savings_pct")] == [
        5,
        1,
        0,
        6,
        7,
    ]
    assert pareto_frontier([]) == []


def test_frontier_accepts_sweep_points(small_sweep: Sweep) -> None:
    frontier = small_sweep.frontier()
    assert frontier and all(isinstance(p, SweepPoint) for p in frontier)
    for member in frontier:
        assert not any(
            other.savings_pct >= member.savings_pct
            and other.recall >= member.recall
            and (other.savings_pct > member.savings_pct or other.recall > member.recall)
            for other in small_sweep.points
        )


def test_recommendation_rule() -> None:
    points = [
        point(0, 40, 0.99),  # best recall but below the target
        point(1, 65, 0.90, tokens_after=900),
        point(2, 70, 0.90, tokens_after=800),  # same recall, more savings: wins over 1
        point(3, 70, 0.90, tokens_after=700),  # same recall and savings, fewer tokens: wins
        point(4, 75, 0.80),
        point(5, 80, 0.95, errors_openai=1),  # best above target, but invalid: never chosen
    ]
    assert recommend(points, 60)["index"] == 3  # type: ignore[index]
    assert recommend(points, 76) is None
    assert recommend(points, 0)["index"] == 0  # type: ignore[index]
    # A full tie keeps the earlier point.
    assert recommend([point(8, 70, 0.9), point(9, 70, 0.9)], 50)["index"] == 8  # type: ignore[index]


def test_snippets_list_only_non_default_settings() -> None:
    chosen = point(0, 70, 0.9, tail_token_ratio=0.3, summary_ratio=0.1, orphan_strategy="strip")
    snippets = recommendation_snippets(chosen)
    assert snippets["python"] == (
        "CompactionConfig(context_length=40000, tail_token_ratio=0.3, summary_ratio=0.1, "
        "orphan_strategy='strip')"
    )
    assert snippets["cli"] == (
        "compaction compress INPUT --context-length 40000 --tail-ratio 0.3 "
        "--set summary_ratio=0.1 --orphans strip"
    )
    yaml = snippets["yaml"]
    assert "compression:\n  enabled: true\n  threshold: 0.5\n  protect_first_n: 3\n" in yaml
    assert "  tail_token_ratio: 0.3\n  summary_ratio: 0.1\n" in yaml
    assert '  orphan_strategy: "strip"' in yaml and "context_length: 40000" in yaml
    assert yaml.startswith("# hermes-agent") and "our mapping" in yaml
    defaults = recommendation_snippets({"config": CompactionConfig().to_dict()})
    assert defaults["python"] == "CompactionConfig()"
    assert defaults["cli"] == "compaction compress INPUT"
    # Every python snippet builds the very config it came from.
    namespace: dict[str, Any] = {"CompactionConfig": CompactionConfig}
    rebuilt = eval(snippets["python"], namespace)
    assert rebuilt.to_dict() == chosen["config"]
    assert non_default_fields(CompactionConfig().to_dict()) == {}


# -- history ---------------------------------------------------------------------------------------


def test_history_round_trip(session: list[Message], small_sweep: Sweep) -> None:
    with History() as history:
        sweep_id = history.record_sweep(small_sweep, label="tails", min_savings_pct=30)
        (listed,) = history.sweeps()
        assert listed.id == sweep_id and listed.label == "tails" and listed.sweep is None
        assert listed.point_count == 4 and listed.grid == small_sweep.grid
        best = small_sweep.recommend(30)
        assert best is not None and listed.recommendation is not None
        assert listed.recommendation["point"] == best.index
        assert listed.recommendation["snippets"] == recommendation_snippets(best)
        stored = history.sweep(sweep_id)
        assert stored.sweep is not None
        assert stored.sweep.rows() == small_sweep.rows()
        assert stored.sweep.frontier() == small_sweep.frontier()
        # The swept conversation is a stored session, shared with runs.
        (session_id,) = stored.session_ids
        assert history.session(session_id).message_count == len(session)
        history.delete_sweep(sweep_id)
        assert history.sweeps() == []
        with pytest.raises(HistoryError, match=f"no sweep {sweep_id}"):
            history.sweep(sweep_id)
