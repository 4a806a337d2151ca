"""docs/integrations.md's examples run as written: each framework's ```python block, executed
against the loopback server (OPENAI_BASE_URL, MODEL) scripted like the real-agent tests, makes
an agent that compacts with every request under the window and its pairs intact, records each
compaction to the default history, and finishes."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from agent_script import REQUEST, AgentScript, check_requests
from llm_server import LLMServer

from compaction.history import History

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"

#: The block of each framework: the module it needs and how it names its adapter.
FRAMEWORKS = {
    "langchain": ("langchain_openai", "compaction.integrations.langchain"),
    "pydantic_ai": ("pydantic_ai.models.openai", "compaction.integrations.pydantic_ai"),
    "openai_agents": ("agents", "compaction.integrations.openai_agents"),
}


def _block(adapter_module: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    (block,) = [b for b in blocks if f"from {adapter_module} import" in b]
    return block


def _close_run_sync_loop() -> None:
    """The Agents SDK's `Runner.run_sync` leaves the thread's default event loop open on purpose
    (for the next run); a program's exit closes it, a test must, or a later test's garbage
    collection reports it unclosed."""
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loop = policy.get_event_loop()  # the one run_sync set (or a new one, closed at once)
    loop.close()
    policy.set_event_loop(None)


def test_the_doc_has_one_runnable_example_per_adapter() -> None:
    for _, adapter_module in FRAMEWORKS.values():
        assert REQUEST in _block(adapter_module)


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_example_runs_against_the_loopback_server(
    framework: str, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs, adapter_module = FRAMEWORKS[framework]
    pytest.importorskip(needs, reason=f"the extra for {framework} is not installed")
    script = AgentScript()
    llm_server.script(script)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("MODEL", "scripted")

    printed = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "__doc__"}
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(_block(adapter_module), str(DOC), "exec"), namespace)
    finally:
        _close_run_sync_loop()

    assert "test_login failed" in printed.getvalue()
    compaction = namespace["compaction"]
    made = getattr(compaction, "processor", compaction).compactions
    assert made >= 2 and f"{made} compactions" in printed.getvalue()
    tokens = check_requests(llm_server.requests)
    assert max(tokens) <= 4_000
    assert script.summaries == made  # summary_model="agent": the scripted model wrote them
    with History() as history:  # record_to=True: the default history ($COMPACTION_LAB_DB)
        runs = history.runs()
    assert len(runs) == made
