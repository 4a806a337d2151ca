"""From an agent's exported spans to the lab: a Pydantic AI agent instrumented with its own
OpenTelemetry capability (content included) compacts with ours; the spans go to an OTLP JSON file
(OtlpJsonFileExporter); the file opens as a conversation whose compactions are the spans'
(tokens before as the compactor counted them), audits, and shows on the app's Timeline and Audit
pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_script import CONFIG, REQUEST, AgentScript, page_text
from llm_server import LLMServer

pytest.importorskip("pydantic_ai", reason="the [pydantic-ai] extra is not installed")
pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed")

from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from compaction import load_conversation
from compaction.integrations.otlp_file import OtlpJsonFileExporter
from compaction.integrations.pydantic_ai import compaction_capability
from compaction.lab.audit import audit
from compaction.telemetry import CAPTURE_CONTENT_VARIABLE

ROOT = Path(__file__).resolve().parents[2]


def _spans_file(server: LLMServer, path: Path, span_sinks: list[Any]) -> int:
    span_sinks.append(OtlpJsonFileExporter(path))
    capability = compaction_capability(CONFIG)
    model = OpenAIChatModel(
        "scripted", provider=OpenAIProvider(base_url=server.base_url, api_key="x")
    )
    agent = Agent(
        model,
        system_prompt="You are a build assistant.",
        capabilities=[Instrumentation(settings=InstrumentationSettings()), capability],
    )

    @agent.tool_plain
    def read_page(page: int) -> str:
        """Read one page of the build log."""
        return page_text(page)

    agent.run_sync(REQUEST)
    return capability.processor.compactions  # type: ignore[attr-defined]


@pytest.fixture
def spans_file(
    llm_server: LLMServer, tmp_path: Path, span_sinks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, int]:
    monkeypatch.setenv(CAPTURE_CONTENT_VARIABLE, "true")
    llm_server.script(AgentScript())
    path = tmp_path / "agent-spans.jsonl"
    compactions = _spans_file(llm_server, path, span_sinks)
    assert compactions >= 2
    return path, compactions


def test_the_exported_spans_open_as_a_conversation_with_its_compactions(
    spans_file: tuple[Path, int],
) -> None:
    path, compactions = spans_file
    conversation = load_conversation(path)
    assert conversation.format == "otel"
    assert len(conversation.compactions) == compactions
    assert all(c.tokens_before and c.tokens_source == "agent" for c in conversation.compactions)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    recorded = [
        a["value"]["intValue"]
        for doc in lines
        for rs in doc["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
        if span["name"] == "compact_messages"
        for a in span["attributes"]
        if a["key"] == "compaction.tokens_before"
    ]
    assert [str(c.tokens_before) for c in conversation.compactions] == recorded
    assert any(m.get("content") == REQUEST for m in conversation.messages)
    assert all(c.summary and "## Active Task" in c.summary for c in conversation.compactions)
    events = audit(conversation).events
    assert len(events) == compactions
    # Each event audits what came since the one before it: the script's later turns add a
    # page of log each, so only the first compaction is sure to have facts to lose.
    assert events[0].facts_before > 0
    assert all(e.tokens_before_recorded and e.summary for e in events)
    assert [e.tokens_before for e in events] == [c.tokens_before for c in conversation.compactions]
    # The window is the one the compactor worked in, read off the spans' settings.
    assert conversation.metadata["model_context_window"] == CONFIG.context_length
    assert all(e.window == CONFIG.context_length for e in events)
    assert {e.window_source for e in events} == {"recorded by the agent"}


def test_the_app_shows_the_spans_compactions_on_the_timeline_and_in_audit(
    spans_file: tuple[Path, int],
) -> None:
    from streamlit.testing.v1 import AppTest

    path, compactions = spans_file
    timeline = AppTest.from_file(str(ROOT / "app_pages" / "timeline.py"), default_timeout=90)
    timeline.run()
    timeline.file_uploader(key="load_upload").set_value(
        (path.name, path.read_bytes(), "text/plain")
    )
    timeline.run()
    assert not timeline.exception, [e.value for e in timeline.exception]
    chart = next(c for c in timeline.get("plotly_chart") if "sawtooth" in str(c.proto.id))
    figure = json.loads(chart.proto.spec)
    (marker,) = [t for t in figure["data"] if t.get("name", "").startswith("recorded by")]
    assert marker["name"] == f"recorded by the agent ({compactions})"

    page = AppTest.from_file(str(ROOT / "app_pages" / "audit.py"), default_timeout=90)
    page.run()
    page.file_uploader(key="load_upload").set_value((path.name, path.read_bytes(), "text/plain"))
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    label = page.selectbox(key="audit_event").format_func(0)
    assert len(page.selectbox(key="audit_event").options) == compactions
    assert label.startswith("1. pydantic-ai compacted at message ")
    assert "(auto, " in label
