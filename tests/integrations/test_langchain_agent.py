"""LangChain's real agent (`create_agent`: its graph, its tool node) with CompactionMiddleware,
against the loopback OpenAI-compatible server scripted to read a long log page by page: the
middleware compacts, every request the model is sent is under the window with its tool calls
paired and the request verbatim, and the agent finishes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_script import (
    CONFIG,
    PAGES,
    REQUEST,
    WINDOW,
    AgentScript,
    check_requests,
    page_text,
    uncompacted_tokens,
)
from llm_server import LLMServer

pytest.importorskip("langchain", reason="the [langchain] extra is not installed")

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from compaction.history import History
from compaction.integrations.langchain import CompactionMiddleware


@tool
def read_page(page: int) -> str:
    """Read one page of the build log."""
    return page_text(page)


def _model(server: LLMServer) -> ChatOpenAI:
    return ChatOpenAI(model="scripted", base_url=server.base_url, api_key="x", max_retries=0)


def test_a_langchain_agent_compacts_keeps_pairs_and_finishes(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    script = AgentScript()
    llm_server.script(script)
    history_path = tmp_path / "runs.db"
    middleware = CompactionMiddleware(CONFIG, summary_model="agent", record_to=history_path)
    agent = create_agent(
        _model(llm_server),
        tools=[read_page],
        system_prompt="You are a build assistant.",
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    state = agent.invoke(
        {"messages": [HumanMessage(REQUEST)]}, {"configurable": {"thread_id": "t1"}}
    )

    assert "test_login failed" in state["messages"][-1].text
    # The state keeps the full history: the middleware compacts what is sent, not what is kept.
    assert len([m for m in state["messages"] if m.type == "tool"]) == PAGES
    assert uncompacted_tokens() > WINDOW
    tokens = check_requests(llm_server.requests)
    assert middleware.compactions >= 2
    assert max(tokens) <= WINDOW and tokens[-1] < uncompacted_tokens()
    # The agent's own model wrote the summaries (the script answered them).
    assert script.summaries == middleware.compactions
    # Each compaction is in the history the app opens, labelled with the framework.
    with History(history_path) as history:
        runs = history.runs()
    assert len(runs) == middleware.compactions
    assert all(run.label and run.label.startswith("langchain: thread:t1") for run in runs)


def test_the_async_agent_compacts_too(llm_server: LLMServer) -> None:
    import asyncio

    llm_server.script(AgentScript())
    middleware = CompactionMiddleware(CONFIG)
    agent = create_agent(_model(llm_server), tools=[read_page], middleware=[middleware])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage(REQUEST)]}))
    assert "test_login failed" in state["messages"][-1].text
    check_requests(llm_server.requests)
    assert middleware.compactions >= 2
