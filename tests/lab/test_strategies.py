"""The baseline strategies: what each keeps, that they fit (or, by design, do not), and that the
naive head+tail produces the invalid requests provider validation reports."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from compaction.config import CompactionConfig
from compaction.lab.probes import mine_facts, recall
from compaction.lab.strategies import (
    BASELINES,
    config_for_target,
    head_tail,
    prune_only,
    truncate_outputs,
)
from compaction.provider_rules import is_valid, validate
from compaction.tokens import make_counter

COUNTER = make_counter("rough")


def call(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "terminal", "arguments": arguments},
    }


def agent_session(turns: int = 30, output_chars: int = 2_000) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the test suite pass. Never edit the fixtures."},
    ]
    for turn in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{turn}", f"pytest -k t{turn}")],
            }
        )
        output = (
            f"run {turn}\n" + "." * output_chars + f"\nFAILED test_t{turn} - AssertionError: {turn}"
        )
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": output})
        messages.append({"role": "assistant", "content": f"Turn {turn} looked at failure {turn}."})
    messages.append({"role": "user", "content": "Now also update the changelog."})
    return messages


def test_head_tail_fits_the_target_and_keeps_head_and_latest() -> None:
    messages = agent_session()
    total = COUNTER.count_messages(messages)
    target = total // 5
    kept = head_tail(messages, target, COUNTER)
    assert COUNTER.count_messages(kept) <= target
    assert kept[:3] == messages[:3]
    assert kept[-1] == messages[-1]
    # Contiguous tail: the kept end of the list is exactly the end of the input.
    tail = kept[3:]
    assert tail == messages[len(messages) - len(tail) :]
    # Greedy: the message before the tail would not have fitted.
    assert COUNTER.count_messages(kept) + COUNTER.count_message(messages[-len(tail) - 1]) > target


def test_head_tail_returns_everything_when_it_fits() -> None:
    messages = agent_session(turns=2)
    kept = head_tail(messages, 10**6, COUNTER)
    assert kept == messages and kept is not messages
    assert all(a is not b for a, b in zip(kept, messages, strict=True))


def test_head_tail_with_a_head_bigger_than_the_target() -> None:
    messages = [{"role": "system", "content": "s" * 4_000}, {"role": "user", "content": "hi"}]
    kept = head_tail(messages, 100, COUNTER)
    # The system prompt does not fit; the head ends there and the tail takes what fits.
    assert kept == [messages[1]]


def test_head_tail_does_not_repair_tool_pairs() -> None:
    messages = agent_session()
    rules: set[str] = set()
    for target in range(400, COUNTER.count_messages(messages), 97):
        kept = head_tail(messages, target, COUNTER)
        rules |= {p.rule for p in validate(kept, "openai") if p.severity == "error"}
    # The head ends on a call whose result is gone; the tail sometimes starts on a result.
    assert rules == {"tool-call-unanswered", "tool-result-without-call"}


def test_truncate_outputs_cuts_every_long_tool_output_only() -> None:
    messages = agent_session(turns=3)
    messages[1] = {"role": "user", "content": "u" * 900}
    result = truncate_outputs(messages, 1, COUNTER)
    assert len(result) == len(messages)
    for before, after in zip(messages, result, strict=True):
        if before["role"] == "tool":
            assert after["content"] == before["content"][:500] + "..."
            assert after["tool_call_id"] == before["tool_call_id"]
        else:
            assert after == before
    short = [{"role": "tool", "tool_call_id": "x", "content": "short"}]
    assert truncate_outputs(short, 1, COUNTER) == short
    parts = [
        {"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": "p" * 600}]}
    ]
    assert truncate_outputs(parts, 1, COUNTER)[0]["content"] == "p" * 500 + "..."


def test_truncate_outputs_keeps_validity() -> None:
    messages = agent_session(turns=5)
    assert is_valid(validate(truncate_outputs(messages, 1, COUNTER), "anthropic"))


def test_config_for_target_puts_the_threshold_at_the_target() -> None:
    assert config_for_target(10_000).threshold_tokens == 10_000
    base = CompactionConfig(threshold_ratio=0.8, protect_first_n=5)
    config = config_for_target(20_000, base)
    assert config.threshold_tokens == 20_000 and config.protect_first_n == 5
    assert config_for_target(10).context_length == 1_000  # the smallest window allowed


def test_prune_only_summarises_old_outputs_and_stays_valid() -> None:
    messages = agent_session(turns=30)
    target = COUNTER.count_messages(messages) // 4
    result = prune_only(messages, target, COUNTER)
    assert len(result) == len(messages)
    assert COUNTER.count_messages(result) < COUNTER.count_messages(messages) // 2
    assert result[3] == messages[3]  # the head (extended to the end of its tool group)
    assert result[6]["content"].startswith("[terminal] ran `pytest -k t1`")
    assert "AssertionError: 1" in result[6]["content"]  # the error evidence survives
    assert result[-2] == messages[-2]  # the protected tail is untouched
    assert validate(result, "openai") == []


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_strategies_never_mutate_their_input(name: str) -> None:
    messages = agent_session(turns=10)
    before = copy.deepcopy(messages)
    BASELINES[name](messages, 500, COUNTER)
    assert messages == before


def test_probe_recall_ranks_the_baselines() -> None:
    """The facts lost are what tells the strategies apart at the same target."""
    messages = agent_session(turns=30)
    facts = mine_facts(messages)
    target = COUNTER.count_messages(messages) // 4
    recalls = {
        name: recall(facts, BASELINES[name](messages, target, COUNTER)) for name in BASELINES
    }
    # Head+tail drops the middle, with its failures; Phase 1 keeps them as one-liners.
    assert recalls["prune-only"].categories["errors"].ratio == 1.0
    assert recalls["head-tail"].categories["errors"].ratio < 0.5
    assert recalls["head-tail"].categories["latest_request"].ratio == 1.0


def test_config_for_target_scales_the_summary_clamp_down_with_small_targets() -> None:
    small = config_for_target(3_000)
    assert small.threshold_tokens == 3_000
    assert small.summary_min_tokens == 1_200 and small.summary_max_tokens == 1_200
    tiny = config_for_target(600)  # never below 500: the latest request must fit verbatim
    assert tiny.summary_min_tokens == 500
    large = config_for_target(100_000, fill_target=False)
    assert (large.summary_min_tokens, large.summary_max_tokens) == (2_000, 8_000)
    filled = config_for_target(100_000)  # the summary may use its whole share of the target
    assert (filled.summary_min_tokens, filled.summary_max_tokens) == (40_000, 40_000)
