"""Property-based tests: the engine's invariants over generated conversations.

The generator builds the awkward shapes real agents produce — parallel calls, duplicated outputs,
huge outputs, calls that never got a result, results whose call is gone, no system message, no
user message — and every compaction must still come out well-formed.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conversation_checks import assert_well_formed_compaction, tool_structure_problems
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compaction import CompactionConfig, Compactor, compress, validate
from compaction.errors import InvalidConversationError
from compaction.phases.boundaries import find_head_end
from compaction.phases.cleanup import cleanup

WORDS = ["pytest", "error", "config", "auth", "the", "file", "ValueError: bad", "ok", "src/app.py"]


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append(
            {"role": "system", "content": "You are an agent. " * draw(st.integers(1, 20))}
        )
    call_number = 0
    shared_output = "same output line\n" * 40  # identical outputs exercise dedupe
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["user", "assistant", "group", "group", "orphan_result"]))
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)))
        if kind == "user":
            messages.append({"role": "user", "content": text})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": text})
        elif kind == "orphan_result":
            messages.append({"role": "tool", "tool_call_id": "ghost", "content": text})
        else:
            count = draw(st.integers(1, 3))
            ids = []
            calls = []
            for _ in range(count):
                call_number += 1
                ids.append(f"call_{call_number}")
                arguments = {"command": text, "content": "x" * draw(st.sampled_from([10, 900]))}
                calls.append(
                    {
                        "id": ids[-1],
                        "type": "function",
                        "function": {
                            "name": draw(st.sampled_from(["terminal", "read_file", "mystery"])),
                            "arguments": json.dumps(arguments),
                        },
                    }
                )
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for call_id in ids:
                if draw(st.integers(0, 9)) == 0:
                    continue  # the result never arrived
                size = draw(st.sampled_from(["small", "big", "huge", "dup"]))
                output = {
                    "small": text,
                    "big": (text + "\n") * 60,
                    "huge": "line of a huge log\n" * 800,
                    "dup": shared_output,
                }[size]
                messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    return messages


def only_orphans(messages: list[dict[str, Any]]) -> bool:
    """Nothing but tool results: every one an orphan, so compaction refuses (issue 21)."""
    return all(message["role"] == "tool" for message in messages)


SMALL = CompactionConfig(context_length=4_000, protect_first_n=2, summary_min_tokens=100)
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(conversations(), st.sampled_from(["stub", "strip"]))
def test_compaction_is_well_formed(messages: list[dict[str, Any]], strategy: str) -> None:
    config = SMALL.replace(orphan_strategy=strategy)
    frozen = copy.deepcopy(messages)
    if only_orphans(messages):
        with pytest.raises(InvalidConversationError, match="nothing of the conversation survives"):
            compress(messages, config)
        return
    result = compress(messages, config)
    assert messages == frozen, "the input must never be mutated"
    head_end = find_head_end(messages, config.protect_first_n)
    assert_well_formed_compaction(messages, result, head_end)


@FAST
@given(conversations())
def test_compaction_is_deterministic(messages: list[dict[str, Any]]) -> None:
    assume(not only_orphans(messages))
    first = compress(messages, SMALL)
    second = compress(messages, SMALL)
    assert json.dumps(first.messages) == json.dumps(second.messages)
    assert _without_timings(first.to_dict()) == _without_timings(second.to_dict())


def _without_timings(report: dict[str, Any]) -> dict[str, Any]:
    for phase in report["phases"]:
        phase.pop("duration_s")
        phase["details"].get("summarizer_details", {}).pop("duration_s", None)
    return report


@FAST
@given(conversations())
def test_second_compaction_of_the_output_is_well_formed(messages: list[dict[str, Any]]) -> None:
    assume(not only_orphans(messages))
    compactor = Compactor(SMALL)
    once = compactor.compress(messages, force=True)
    twice = compactor.compress(once.messages, force=True)
    assert tool_structure_problems(twice.messages) == []
    head_end = find_head_end(once.messages, SMALL.protect_first_n)
    assert_well_formed_compaction(once.messages, twice, head_end)


def test_a_request_merged_into_the_summary_is_pinned_by_the_next_pass() -> None:
    """Found by the property above: when neither role fits, Phase 4 merges the summary into the
    latest request; a second pass must replace the summary part and keep the request's words
    (it does: they come back as their own user message after the new summary)."""

    def group(*ids: int, command: str = "pytest") -> dict[str, Any]:
        arguments = json.dumps({"command": command, "content": "x" * 10})
        calls = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": "terminal", "arguments": arguments},
            }
            for i in ids
        ]
        return {"role": "assistant", "content": None, "tool_calls": calls}

    long_command = " ".join(["pytest"] * 8)
    messages: list[dict[str, Any]] = [
        group(1),
        {"role": "assistant", "content": "pytest"},
        *({"role": "user", "content": "pytest"} for _ in range(2)),
        group(2, 3),
        *({"role": "user", "content": "pytest"} for _ in range(10)),
        group(4, 5, 6),
        group(7),
        group(8, 9, 10, command="pytest pytest"),
        group(11, command=long_command),
        group(12, 13, 14, command=long_command),
        {"role": "tool", "tool_call_id": "call_13", "content": long_command},
        {"role": "tool", "tool_call_id": "call_14", "content": (long_command + "\n") * 60},
    ]
    compactor = Compactor(SMALL)
    once = compactor.compress(messages, force=True)
    assert any("the original message follows" in str(m.get("content")) for m in once.messages)
    twice = compactor.compress(once.messages, force=True)
    assert tool_structure_problems(twice.messages) == []
    assert {"role": "user", "content": "pytest"} in twice.messages
    assert_well_formed_compaction(
        once.messages, twice, find_head_end(once.messages, SMALL.protect_first_n)
    )


@FAST
@given(conversations())
def test_every_input_message_has_a_fate_and_every_output_an_origin(
    messages: list[dict[str, Any]],
) -> None:
    assume(not only_orphans(messages))
    result = compress(messages, SMALL)
    assert sorted(result.fates) == list(range(len(messages)))
    if result.phases and not result.skipped:
        origins = result.phases[-1].origins
        assert len(origins) == len(result.messages)
        assert all(o is None or 0 <= o < len(messages) for o in origins)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(8, 30))
def test_big_middles_always_shrink(messages: list[dict[str, Any]], extra_groups: int) -> None:
    # Pad with enough tool traffic that the middle holds several thousand tokens.
    padded = list(messages)
    for number in range(extra_groups):
        call_id = f"pad_{number}"
        padded.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "big.py"}'},
                    }
                ],
            }
        )
        padded.append(
            {"role": "tool", "tool_call_id": call_id, "content": f"def f{number}():\n" * 400}
        )
    padded.append({"role": "user", "content": "continue"})
    config = CompactionConfig(context_length=8_000, protect_first_n=2)
    result = Compactor(config).compress(padded, force=False)
    assert result.tokens_before >= config.threshold_tokens
    assert not result.skipped
    assert result.tokens_after < result.tokens_before


# -- valid for Anthropic and OpenAI whenever the input was (issue 21) ---------------------------


def _errors(messages: list[dict[str, Any]], provider: str) -> list[Any]:
    return [problem for problem in validate(messages, provider) if problem.severity == "error"]


def _valid_once_repaired(messages: list[dict[str, Any]], provider: str, strategy: str) -> bool:
    """The input is valid for `provider` once Phase 5 alone has repaired its orphans (stray
    results, unanswered calls): the input a provider-valid output may be demanded from."""
    repaired, _ = cleanup(messages, list(range(len(messages))), strategy)
    if not repaired.messages:
        return False
    problems = validate(repaired.messages, provider)
    # Two user turns in a row are only a warning (Anthropic merges them), but once the summary
    # is merged into one of them it is the summary's error: such an input was not alternating.
    return not any(p.severity == "error" or p.rule == "consecutive-same-role" for p in problems)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations(),
    st.integers(0, 5),
    st.sampled_from([0.0, 0.2]),
    st.sampled_from(["stub", "strip"]),
    st.sampled_from(["rough", "tiktoken"]),
    st.sampled_from([1_000, 2_000, 4_000]),
)
def test_output_is_valid_for_both_providers_whenever_the_input_was(
    messages: list[dict[str, Any]],
    head: int,
    tail_ratio: float,
    strategy: str,
    counter: str,
    window: int,
) -> None:
    assume(not only_orphans(messages))
    config = CompactionConfig(
        context_length=window,
        protect_first_n=head,
        tail_token_ratio=tail_ratio,
        orphan_strategy=strategy,  # type: ignore[arg-type]
        counter=counter,  # type: ignore[arg-type]
        summary_min_tokens=100,
    )
    compactor = Compactor(config)
    result = compactor.compress(messages, force=True)
    again = compactor.compress(result.messages, force=True)
    for provider in ("openai", "anthropic"):
        if _valid_once_repaired(messages, provider, strategy):
            assert _errors(result.messages, provider) == [], provider
            assert _errors(again.messages, provider) == [], f"{provider}, second pass"
    fit = result.fit
    if not result.skipped and fit is not None and not fit.request_exceeds_window:
        # Over the window only when every piece is already at its floor, as Fit says with the
        # figure: an input under a tiny window can need more once its unanswered calls get
        # their stub results (found by this test: 828 tokens in, 1,004 out of a 1,000-token
        # window, the summary discarded at 1,011; tests/engine/test_fit.py holds that case).
        over = result.tokens_after > window
        assert not over or f"would take {result.tokens_after:,} tokens" in (fit.cannot_fit or "")
        assert not over or not fit.cuts
