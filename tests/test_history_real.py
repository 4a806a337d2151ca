"""Runs produced by the real Compactor (offline, and with the LLM summariser on the loopback
server) are stored faithfully, and the summariser's API key never reaches the history file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llm_server import LLMServer

from compaction.compactor import Compactor, compress
from compaction.config import CompactionConfig
from compaction.history import History
from compaction.summarizers.llm import LLMSummarizer

# Deliberately shapeless (no provider prefix), so only dropping key-named fields protects it.
API_KEY = "labkey-Qz7Xw9vK2mRt5"


def agent_session(rounds: int = 10) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the Stripe webhook signature check in payments/hooks.py"},
    ]
    for n in range(rounds):
        call_id = f"call_{n}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Reading file {n}.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"payments/mod{n}.py"}),
                        },
                    }
                ],
            }
        )
        body = "\n".join(f"def handler_{n}_{i}(event):\n    return event[{i}]" for i in range(80))
        messages.append({"role": "tool", "tool_call_id": call_id, "content": body})
    messages.append({"role": "user", "content": "Now run the test suite."})
    return messages


def test_records_a_real_offline_compress_result() -> None:
    messages = agent_session()
    original = json.dumps(messages)
    result = compress(messages, config=CompactionConfig(context_length=8_000, counter="rough"))
    with History() as history:
        run_id = history.record(messages, result, label="offline")
        run = history.run(run_id)
        assert history.run(run_id).session_id == history.sessions()[0].id
    assert json.dumps(messages) == original
    assert run.report == json.loads(json.dumps(result.to_dict(), default=str))
    assert run.messages == result.messages
    assert (run.tokens_before, run.tokens_after) == (result.tokens_before, result.tokens_after)
    assert run.savings_pct == round(result.savings_pct, 2)
    assert set(run.phase_durations) == {p.name for p in result.phases}
    assert run.summary_budget_tokens == result.phase("summarize").details["budget_tokens"]
    assert run.tail_budget_tokens == result.config["tail_budget_tokens"]
    assert run.fallback_used == result.fallback_used
    if result.summary is not None:
        assert run.summary == result.summary.to_dict()


def test_llm_run_keeps_usage_and_never_the_key(llm_server: LLMServer, _history_db: Path) -> None:
    llm = LLMSummarizer("openai/main", api_base=llm_server.base_url, api_key=API_KEY, timeout=10)
    engine = Compactor(config=CompactionConfig(context_length=8_000), summarizer=llm)
    messages = agent_session()
    result = engine.compress(messages, force=True)
    assert result.fallback_used is None
    info = {"kind": "llm", "model": "openai/main", "api_base": llm_server.base_url}
    with History() as history:
        run_id = history.record(messages, result, summarizer_info={**info, "api_key": API_KEY})
        run = history.run(run_id)
        bundle = json.dumps(history.export(run_id))
    assert run.summarizer_info == info
    assert run.llm_prompt_tokens == llm_server.last_usage["prompt_tokens"]  # type: ignore[index]
    assert run.llm_completion_tokens == llm_server.last_usage["completion_tokens"]  # type: ignore[index]
    assert run.model == "openai/main"
    assert history_words(run.summary) & {"login"}  # the server's summary was stored
    assert API_KEY not in bundle
    data = b"".join(p.read_bytes() for p in _history_db.parent.iterdir())
    assert API_KEY.encode() not in data
    assert b"Stripe webhook" in data


def history_words(summary: dict[str, str] | None) -> set[str]:
    return {word.strip(".,").lower() for body in (summary or {}).values() for word in body.split()}
