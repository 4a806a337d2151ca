"""Property tests over generated *agentic* sessions (issue 21): one request, then 50–500 tool
calls with outputs from 10 bytes to 2 MB, sometimes a huge argument.

That shape is where compaction used to fail: anchoring the cut to the only user message dragged
the whole run into the tail, and a huge output in the tail outlived every compaction. Whatever the
window, head, tail ratio, orphan strategy and counter, a compaction that ran must fit the window,
keep the request verbatim as a user message (again on a second pass), leave the head as it was but
for Fit's cuts, and stay valid for both providers.
"""

from __future__ import annotations

import json
from typing import Any

from conversation_checks import assert_well_formed_compaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import CompactionConfig, Compactor, validate
from compaction.messages import content_text
from compaction.phases.boundaries import find_head_end
from compaction.summary import summary_parts

REQUEST = "Migrate the billing service to the new payments API and keep every test green."
SIZES = [10, 80, 400, 2_000, 12_000, 60_000, 2_000_000]
SIZE_WEIGHTS = st.sampled_from([0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5])  # 2 MB: rare, below


def _output(number: int, size: int) -> str:
    line = f"[{number}] test_billing.py::test_case_{number} PASSED in 0.{number % 97:02d}s\n"
    return (line * (size // len(line) + 1))[:size]


@st.composite
def agentic_sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": "You are a coding agent. " * 10})
    messages.append({"role": "user", "content": REQUEST})
    groups = draw(st.integers(50, 500))
    huge_left = draw(st.integers(0, 2))  # at most two 2 MB outputs per session
    huge_argument_at = draw(st.integers(-1, groups - 1))  # sometimes a huge argument
    for number in range(groups):
        parallel = draw(st.sampled_from([1, 1, 1, 2, 3]))
        calls = []
        for branch in range(parallel):
            arguments: dict[str, Any] = {"command": f"pytest tests/test_{number}_{branch}.py"}
            if number == huge_argument_at and branch == 0:
                arguments = {"path": "src/billing.py", "content": _output(number, 300_000)}
            calls.append(
                {
                    "id": f"call_{number}_{branch}",
                    "type": "function",
                    "function": {
                        "name": "write_file" if "content" in arguments else "terminal",
                        "arguments": json.dumps(arguments),
                    },
                }
            )
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            size = SIZES[draw(SIZE_WEIGHTS)]
            if huge_left and draw(st.integers(0, 60)) == 0:
                size, huge_left = SIZES[-1], huge_left - 1
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": _output(number, size)}
            )
    messages.append({"role": "assistant", "content": "All migrated; the suite passes."})
    return messages


def _configs() -> st.SearchStrategy[CompactionConfig]:
    return st.builds(
        CompactionConfig,
        context_length=st.sampled_from([8_000, 16_000, 32_000]),
        protect_first_n=st.integers(0, 5),
        tail_token_ratio=st.sampled_from([0.0, 0.2]),
        orphan_strategy=st.sampled_from(["stub", "strip"]),
        counter=st.sampled_from(["rough", "rough", "tiktoken"]),
    )


def _request_is_a_user_turn(messages: list[dict[str, Any]]) -> bool:
    for message in messages:
        if message.get("role") != "user":
            continue
        text = content_text(message)
        parts = summary_parts(text)
        if (text if parts is None else parts.own_text) == REQUEST:
            return True
    return False


def _errors(messages: list[dict[str, Any]], provider: str) -> list[Any]:
    return [p for p in validate(messages, provider) if p.severity == "error"]


WINDOW = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


@WINDOW
@given(agentic_sessions(), _configs())
def test_an_agentic_session_compacts_into_the_window_and_keeps_the_request(
    messages: list[dict[str, Any]], config: CompactionConfig
) -> None:
    compactor = Compactor(config)
    result = compactor.compress(messages, force=True)
    assert not result.skipped
    assert result.tokens_after <= config.context_length, result.fit
    assert result.fit is not None and result.fit.fits
    assert _request_is_a_user_turn(result.messages)
    assert_well_formed_compaction(messages, result, find_head_end(messages, config.protect_first_n))
    for provider in ("openai", "anthropic"):
        if not _errors(messages, provider):
            assert _errors(result.messages, provider) == [], provider

    grown = [*result.messages, {"role": "assistant", "content": "Double-checking the suite."}]
    again = compactor.compress(grown, force=True)
    if not again.skipped:
        assert again.tokens_after <= config.context_length
    assert _request_is_a_user_turn(again.messages)
    for provider in ("openai", "anthropic"):
        if not _errors(messages, provider):
            assert _errors(again.messages, provider) == [], f"{provider}, second pass"
