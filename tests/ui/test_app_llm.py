"""AppTest of the LLM path against the loopback OpenAI-compatible server: on request only,
streamed, summarised into the 13 cards, falling back plainly, and the key never leaves the session.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import click, open_app, section_headers
from llm_server import LLMServer
from streamlit.testing.v1 import AppTest

from compaction.summary import SECTION_NAMES

SECRET = "sk-test-secret-key-4242"


def _llm_app(server: LLMServer) -> AppTest:
    at = open_app(
        sample="orphans",
        p_summarizer="llm",
        p_llm_model="openai/test-model",
        p_llm_api_base=server.base_url,
    )
    at.text_input(key="llm_api_key").set_value(SECRET)
    at.run()
    return at


def test_llm_runs_only_on_request_and_fills_the_cards(
    llm_server: LLMServer, _history_db: Path
) -> None:
    at = _llm_app(llm_server)
    click(at, "step_1")
    click(at, "step_2")
    assert llm_server.requests == []  # phases 1-2 need no model
    click(at, "step_3")
    assert len(llm_server.requests) == 1
    assert llm_server.requests[0].model == "test-model"
    assert section_headers(at) == list(SECTION_NAMES)
    cards = " ".join(str(t.value) for t in at.text)  # section bodies are plain text
    assert "Fix the failing login test." in cards  # the server's summary, section by section

    click(at, "step_4")
    click(at, "step_5")
    assert len(llm_server.requests) == 1  # stepping on does not call the model again
    assert SECRET not in str(dict(at.query_params))
    assert _history_db.exists() and SECRET.encode() not in _history_db.read_bytes()

    at.slider(key="p_tail_token_ratio").set_value(0.5)
    at.run()
    assert len(llm_server.requests) == 1  # a parameter change never calls the model
    assert any("click Phase 3" in str(i.value) for i in at.info)


def test_llm_failure_shows_the_fallback(llm_server: LLMServer) -> None:
    llm_server.fail(401, "invalid api key")
    at = _llm_app(llm_server)
    click(at, "step_all")
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "Fallback used: **static**" in warnings


def test_a_model_without_credentials_is_flagged_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "COMPACTION_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    at = open_app(sample="orphans", p_summarizer="llm", p_llm_model="gpt-4o")
    notes = [str(w.value) for w in at.warning if "No credentials for gpt-4o" in str(w.value)]
    assert len(notes) == 1 and "OPENAI_API_KEY" in notes[0]
    # A key in the password field settles it, and is never shown back.
    at.text_input(key="llm_api_key").set_value(SECRET)
    at.run()
    assert not any("No credentials" in str(w.value) for w in at.warning)
