"""The OpenAI Agents SDK's real runner (`Runner.run_sync`: its loop, its function tools) with
CompactionFilter as the model-input filter, against the loopback OpenAI-compatible server
scripted to read a long log page by page: the filter compacts, every request is under the window
with its tool calls paired and the request verbatim, and the agent finishes — and a second run
of the same session goes on from the compacted context."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_script import (
    CONFIG,
    REQUEST,
    WINDOW,
    AgentScript,
    agent_requests,
    check_requests,
    page_text,
    uncompacted_tokens,
)
from llm_server import LLMServer

pytest.importorskip("agents", reason="the [openai-agents] extra is not installed")

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from openai import AsyncOpenAI

from compaction.history import History
from compaction.integrations.openai_agents import CompactionFilter


@function_tool
def read_page(page: int) -> str:
    """Read one page of the build log."""
    return page_text(page)


def _agent(server: LLMServer) -> Agent[None]:
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    return Agent(
        name="builder",
        instructions="You are a build assistant.",
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
        tools=[read_page],
    )


def test_an_agents_sdk_runner_compacts_keeps_pairs_and_finishes(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    script = AgentScript()
    llm_server.script(script)
    compaction = CompactionFilter(CONFIG, summary_model="agent", record_to=tmp_path / "r.db")
    run_config = RunConfig(call_model_input_filter=compaction, tracing_disabled=True)
    # One event loop for both runs, as a server would have (Runner.run_sync shuts its loop's
    # async generators down after each run, so a second run_sync in one thread warns).
    loop = asyncio.new_event_loop()
    try:
        result = loop.run_until_complete(
            Runner.run(_agent(llm_server), REQUEST, run_config=run_config, max_turns=40)
        )

        assert "test_login failed" in result.final_output
        assert uncompacted_tokens() > WINDOW
        check_requests(llm_server.requests)
        assert compaction.compactions >= 2
        assert script.summaries == compaction.compactions
        # The runner keeps every item; what it sent was compacted.
        assert (
            len([i for i in result.to_input_list() if i.get("type") == "function_call_output"])
            == 14
        )
        with History(tmp_path / "r.db") as history:
            assert len(history.runs()) == compaction.compactions

        # The next run of the conversation (its full history plus a new request) goes on from the
        # compacted context: the filter converts and counts only what is new.
        before = len(agent_requests(llm_server.requests))
        follow_up = "Now say which page had the failure."
        history_items = [*result.to_input_list(), {"role": "user", "content": follow_up}]
        loop.run_until_complete(
            Runner.run(_agent(llm_server), history_items, run_config=run_config, max_turns=40)
        )
    finally:
        loop.close()
    later = agent_requests(llm_server.requests)[before:]
    assert later
    tokens = check_requests(later, request_text=follow_up, minimum=1)
    assert max(tokens) <= WINDOW
