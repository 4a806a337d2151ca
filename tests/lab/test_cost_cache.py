"""The prefix-cache model: each provider's rules on hand-made requests, and the model against
what the corpus's sessions recorded (the Claude Code sessions within 10% in aggregate)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_paths import corpus_path

from compaction.formats import load_conversations
from compaction.lab.cost.cache import (
    ANTHROPIC,
    GEMINI,
    NO_CACHE,
    OPENAI,
    Block,
    Request,
    provider_of,
    rules_for,
    simulate_cache,
)
from compaction.lab.cost.calibration import calibrate
from compaction.lab.cost.check import check_cache
from compaction.lab.cost.report import cost_report
from compaction.lab.cost.requests import record_requests, warm_prefix, warm_tokens
from compaction.tokens import make_counter

CLAUDE_CODE = [
    "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    "claudecode-claudereliability-py2rust__transcript.jsonl",
    "claudecode-yatra__claude-session.jsonl",
    "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d__subagents__agent-a881341.jsonl",
    "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d__subagents__agent-acompact-fffbd0.jsonl",
]


def _blocks(*sizes: int, prefix: str = "m") -> tuple[Block, ...]:
    return tuple(Block(f"{prefix}{i}", size) for i, size in enumerate(sizes))


def _request(blocks: tuple[Block, ...], at: float | None) -> Request:
    return Request(blocks, at=at, breakpoints=(0, len(blocks) - 1))


def test_anthropic_reads_the_previous_request_and_writes_what_was_appended() -> None:
    rules = rules_for("claude-sonnet-4-6")
    first = _blocks(5_000, 3_000)
    second = (*first, *_blocks(400, 600, prefix="n"))
    one, two = simulate_cache([_request(first, 0), _request(second, 30)], rules)
    assert (one.read, one.write, one.fresh) == (0, 8_000, 0)
    assert (two.read, two.write, two.fresh) == (8_000, 1_000, 0)


def test_anthropic_entries_expire_after_their_ttl_and_the_one_hour_ttl_keeps_them() -> None:
    first = _blocks(5_000, 3_000)
    second = (*first, *_blocks(1_000, prefix="n"))
    requests = [_request(first, 0), _request(second, 6 * 60)]  # six minutes later
    late = simulate_cache(requests, rules_for("claude-sonnet-4-6"))[1]
    assert (late.read, late.write) == (0, 9_000)
    kept = simulate_cache(requests, rules_for("claude-sonnet-4-6", one_hour=True))[1]
    assert (kept.read, kept.write) == (8_000, 1_000)


def test_anthropic_looks_back_at_most_20_blocks_from_a_breakpoint() -> None:
    rules = rules_for("claude-sonnet-4-6")
    first = _blocks(5_000, 3_000)
    near = (*first, *_blocks(*[100] * 19, prefix="n"))
    far = (*first, *_blocks(*[100] * 21, prefix="n"))
    assert simulate_cache([_request(first, 0), _request(near, 1)], rules)[1].read == 8_000
    # Beyond the lookback only the system prompt's breakpoint (block 0) is found.
    assert simulate_cache([_request(first, 0), _request(far, 1)], rules)[1].read == 5_000


def test_anthropic_caches_nothing_below_the_models_minimum() -> None:
    small = _blocks(300, 200)
    outcome = simulate_cache([_request(small, 0)], rules_for("claude-sonnet-4-6"))[0]
    assert (outcome.read, outcome.write, outcome.fresh) == (0, 0, 500)
    assert rules_for("claude-opus-4-6").min_tokens == 4_096


def test_openai_reads_the_shared_prefix_in_128_token_steps_from_1024_on() -> None:
    rules = rules_for("gpt-5.4")
    assert rules.provider == OPENAI and rules.granularity == 128
    first = _blocks(1_000, 1_000)
    second = (*first, *_blocks(500, prefix="n"))
    changed = (first[0], *_blocks(1_000, 500, prefix="x"))
    outcomes = simulate_cache([Request(first, 0), Request(second, 1), Request(changed, 2)], rules)
    assert outcomes[1].read == 1_920 and outcomes[1].write == 0  # 2,000 rounded down to 128s
    assert outcomes[2].read == 0  # 1,000 shared tokens: under the 1,024 minimum


def test_a_clock_that_goes_backwards_lets_no_time_pass_and_unknown_providers_cache_nothing() -> (
    None
):
    rules = rules_for("claude-sonnet-4-6")
    first = _blocks(5_000, 3_000)
    second = (*first, *_blocks(1_000, prefix="n"))
    outcome = simulate_cache([_request(first, 1_000), _request(second, 10)], rules)[1]
    assert outcome.read == 8_000
    assert provider_of("nvidia/nemotron-3-super-120b-a12b-20230311:free") == NO_CACHE
    assert provider_of("gemini-3-flash-preview") == GEMINI
    assert provider_of("claude-opus-4-6") == ANTHROPIC
    none = simulate_cache([Request(first, 0)], rules_for("glm-4.7"))[0]
    assert (none.read, none.write, none.fresh) == (0, 0, 8_000)


def _check(name: str) -> tuple[int, int, int, int]:
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")
    conversation = load_conversations(path)[0]
    counter = make_counter()
    calibration = calibrate(conversation, counter)
    requests = record_requests(conversation, calibration, counter)
    warm = warm_prefix(calibration, warm_tokens(conversation))
    check, _ = check_cache(conversation, requests, warm=warm)
    assert check.rules.provider == ANTHROPIC
    rows = check.rows
    return (
        sum(r.recorded_read for r in rows),
        sum(r.predicted_read for r in rows),
        sum(r.recorded_write or 0 for r in rows),
        sum(r.predicted_write for r in rows),
    )


def test_the_model_predicts_claude_codes_recorded_reads_and_writes_within_10_percent() -> None:
    read = predicted_read = write = predicted_write = 0
    for name in CLAUDE_CODE:
        a, b, c, d = _check(name)
        read, predicted_read, write, predicted_write = (
            read + a,
            predicted_read + b,
            write + c,
            predicted_write + d,
        )
    assert abs(predicted_read - read) / read < 0.10
    assert abs(predicted_write - write) / write < 0.10


def test_the_report_prices_the_record_and_each_what_if_on_a_real_session() -> None:
    name = "claudecode-claudereliability-py2rust__transcript.jsonl"
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent")
    report = cost_report(load_conversations(Path(path))[0])
    names = [s.name for s in report.scenarios]
    assert names[:3] == ["agent, as billed", "agent, cache model", "ours (default)"]
    assert "peer: observation-masking" in names
    billed, modelled = report.scenarios[0], report.scenarios[1]
    assert billed.usd == pytest.approx(report.cost.total())
    assert modelled.usd is not None and abs(modelled.usd - billed.usd) / billed.usd < 0.05
    assert all(s.calls == len(report.cost.calls) for s in report.scenarios)
