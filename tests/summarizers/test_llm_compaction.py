"""A whole compaction with the LLM summariser against the loopback server, and its fallbacks.

This is the issue's "done when": the 13-section summary lands in the compacted conversation, and a
failing model degrades to the static marker or the extractive summary, with the reason reported.
"""

from __future__ import annotations

import json
from typing import Any

from llm_server import LLMServer

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.summarizers.llm import LLMSummarizer
from compaction.summary import SECTION_NAMES, STATIC_MARKER_START, SUMMARY_PREFIX

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def conversation(rounds: int = 12) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the flaky tests in tests/auth. My token is {SECRET}."},
    ]
    for n in range(rounds):
        call_id = f"call_{n}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {n}: reading module {n}.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"src/auth/mod{n}.py"}),
                        },
                    }
                ],
            }
        )
        body = "\n".join(f"def f{n}_{i}(x):\n    return x + {i}" for i in range(120))
        messages.append({"role": "tool", "tool_call_id": call_id, "content": body})
    messages.append({"role": "user", "content": "Now run the whole suite and report."})
    return messages


def compactor(server: LLMServer, **kwargs: Any) -> Compactor:
    llm = LLMSummarizer(
        "openai/main", api_base=server.base_url, api_key="test-key", timeout=10, **kwargs
    )
    return Compactor(config=CompactionConfig(context_length=8_000), summarizer=llm)


def summary_content(result: Any, start: str = SUMMARY_PREFIX) -> str:
    """The summary message's content (a static marker stands alone, without the prefix)."""
    for message in result.messages:
        content = message.get("content")
        if isinstance(content, str) and content.startswith(start):
            return content
    raise AssertionError("no summary message in the compacted conversation")


def test_compaction_with_the_llm_summary(llm_server: LLMServer) -> None:
    messages = conversation()
    streamed: list[str] = []
    result = compactor(llm_server).compress(messages, force=True, on_token=streamed.append)
    assert result.fallback_used is None
    assert len(llm_server.requests) == 1
    assert SECRET not in json.dumps(llm_server.requests[0].body)
    content = summary_content(result)
    for name in SECTION_NAMES:
        assert f"## {name}" in content
    assert "Fix the failing login test." in content  # the server's answer, not a fallback
    assert "".join(streamed) == "".join(llm_server.last_chunks)
    details = result.phase("summarize").details["summarizer_details"]
    assert details["prompt_tokens"] == llm_server.last_usage["prompt_tokens"]  # type: ignore[index]
    assert result.tokens_after < result.tokens_before


def test_transient_failure_falls_back_then_cooldown_skips_the_call(llm_server: LLMServer) -> None:
    clock = FakeClock()
    engine = compactor(llm_server, clock=clock, fallback="extractive")
    llm_server.fail(429)
    first = engine.compress(conversation(), force=True)
    assert first.fallback_used == "extractive"
    assert first.fallback_reason is not None and "transient" in first.fallback_reason
    assert "## Active Task" in summary_content(first)
    assert len(llm_server.requests) == 1

    llm_server.answer("## Active Task\nRecovered.")
    second = engine.compress(conversation(), force=True)
    assert second.fallback_used == "extractive"
    assert second.fallback_reason is not None and "cooldown" in second.fallback_reason
    error = second.phase("summarize").details["error"]
    assert error["kind"] == "cooldown"
    assert error["cooldown_until"] == 560.0
    assert len(llm_server.requests) == 1  # no call during the cooldown


def test_auth_failure_falls_back_to_static_marker(llm_server: LLMServer) -> None:
    llm_server.fail(401)
    result = compactor(llm_server).compress(conversation(), force=True)
    assert result.fallback_used == "static"
    assert result.fallback_reason is not None and result.fallback_reason.startswith("failed")
    marker = summary_content(result, start=STATIC_MARKER_START)
    assert marker.endswith("could not be summarized.")
    error = result.phase("summarize").details["error"]
    assert error["error_class"] == "AuthenticationError"
