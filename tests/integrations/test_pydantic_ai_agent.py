"""Pydantic AI's real agent (`Agent.run_sync`: its graph, its tool calls) with the compaction
capability, against the loopback OpenAI-compatible server scripted to read a long log page by
page: the history is compacted (it becomes the run's history), every request is under the window
with its tool calls paired and the request verbatim, and the agent finishes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_script import (
    CONFIG,
    REQUEST,
    WINDOW,
    AgentScript,
    check_requests,
    page_text,
    uncompacted_tokens,
)
from llm_server import LLMServer

pytest.importorskip("pydantic_ai", reason="the [pydantic-ai] extra is not installed")

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from compaction.history import History
from compaction.integrations.pydantic_ai import CompactionProcessor


def _agent(server: LLMServer, processor: CompactionProcessor) -> Agent[None, str]:
    from pydantic_ai.capabilities import ProcessHistory

    model = OpenAIChatModel(
        "scripted", provider=OpenAIProvider(base_url=server.base_url, api_key="x")
    )
    agent = Agent(
        model,
        system_prompt="You are a build assistant.",
        capabilities=[ProcessHistory(processor)],
        retries=0,
    )

    @agent.tool_plain
    def read_page(page: int) -> str:
        """Read one page of the build log."""
        return page_text(page)

    return agent


def test_a_pydantic_ai_agent_compacts_keeps_pairs_and_finishes(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    script = AgentScript()
    llm_server.script(script)
    processor = CompactionProcessor(CONFIG, summary_model="agent", record_to=tmp_path / "r.db")
    result = _agent(llm_server, processor).run_sync(REQUEST)

    assert "test_login failed" in result.output
    assert uncompacted_tokens() > WINDOW
    check_requests(llm_server.requests)
    assert processor.compactions >= 2
    assert script.summaries == processor.compactions  # the agent's own model summarised
    # The processor's output is the run's history: compacted, not the full one.
    assert len(result.all_messages()) < 2 * 14
    with History(tmp_path / "r.db") as history:
        assert len(history.runs()) == processor.compactions
