"""The settings the lab chose, as code for each framework adapter: valid Python that, run with
the framework installed, builds the adapter with exactly those settings and puts it in an agent."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from compaction import CompactionConfig
from compaction.integrations.recording import HistoryRecorder
from compaction.lab.adapter_snippets import ADAPTERS, adapter_snippets
from compaction.lab.sweep.frontier import config_snippets, non_default_fields

CONFIG = CompactionConfig(context_length=40000, tail_token_ratio=0.3, orphan_strategy="strip")
CHANGED = non_default_fields(CONFIG.to_dict())


@pytest.mark.parametrize("agent_model_summary", [False, True])
def test_every_adapter_snippet_is_python_naming_the_changed_settings(
    agent_model_summary: bool,
) -> None:
    snippets = adapter_snippets(CHANGED, agent_model_summary=agent_model_summary, focus="tests")
    assert list(snippets) == list(ADAPTERS)
    for kind, code in snippets.items():
        tree = ast.parse(code)  # raises on anything that is not Python
        compile(tree, kind, "exec")
        (config_call,) = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "CompactionConfig"
        ]
        named = {k.arg: ast.literal_eval(k.value) for k in config_call.keywords}
        assert named == CHANGED, kind
        assert ('summary_model="agent"' in code) is agent_model_summary
        assert "focus='tests'" in code and "record_to=True" in code


def test_defaults_give_an_empty_config_and_a_peer_point_gives_no_adapter_code() -> None:
    snippets = config_snippets(CompactionConfig())
    for kind in ADAPTERS:
        assert "(CompactionConfig(), record_to=True)" in snippets[kind]
    from compaction.lab.sweep.frontier import recommendation_snippets

    peer = recommendation_snippets({"params": {"hermes.protect_last_n": 20}, "config": {}})
    assert not set(ADAPTERS) & set(peer)
    point = recommendation_snippets({"config": CONFIG.to_dict()})
    assert point == config_snippets(CONFIG)


def _run(code: str, namespace: dict[str, Any]) -> dict[str, Any]:
    exec(compile(code, "snippet", "exec"), namespace)
    return namespace


def _check(adapter: Any) -> None:
    settings = adapter.settings
    assert settings.config.to_dict() == CONFIG.to_dict()
    assert settings.focus == "tests"
    assert isinstance(settings.recorder, HistoryRecorder)
    assert settings.summarizer is not None  # summary_model="agent"


def test_the_langchain_snippet_builds_an_agent_with_the_middleware() -> None:
    pytest.importorskip("langchain", reason="the [langchain] extra is not installed")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    code = config_snippets(CONFIG, agent_model_summary=True, focus="tests")["langchain"]
    done = _run(code, {"model": GenericFakeChatModel(messages=iter([])), "tools": []})
    _check(done["compaction"])
    assert done["agent"] is not None


def test_the_pydantic_ai_snippet_builds_an_agent_with_the_capability() -> None:
    pytest.importorskip("pydantic_ai", reason="the [pydantic-ai] extra is not installed")
    from pydantic_ai.models.test import TestModel

    code = config_snippets(CONFIG, agent_model_summary=True, focus="tests")["pydantic_ai"]
    done = _run(code, {"model": TestModel(), "tools": []})
    processor = done["compaction"].processor
    _check(processor)
    # The agent runs the processor: a run (TestModel, no network) opens its conversation's view.
    assert done["agent"].run_sync("Say hello.").output
    assert len(list(processor.views)) == 1


def test_the_openai_agents_snippet_builds_a_run_config_with_the_filter() -> None:
    pytest.importorskip("agents", reason="the [openai-agents] extra is not installed")
    code = config_snippets(CONFIG, agent_model_summary=True, focus="tests")["openai_agents"]
    done = _run(code, {"model": "gpt-4o", "tools": []})
    _check(done["compaction"])
    assert done["run_config"].call_model_input_filter is done["compaction"]
    assert done["agent"].model == "gpt-4o"
