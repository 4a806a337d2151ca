"""The audit of compactions an agent made in its own session: real sessions and a planted one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction.cli import main
from compaction.formats import load_conversation
from compaction.formats.conversation import Conversation, RecordedCompaction
from compaction.lab.audit import audit

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SPOTTER = CORPUS / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = (
    CORPUS / "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl"
)


def _corpus(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    return path


def _planted() -> Conversation:
    """A session whose agent summary drops a written file and an error it met."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the billing export. Never touch migrations/."},
    ]
    for step in range(6):
        call = f"call_{step}"
        path = "src/billing/export_csv.py" if step == 2 else f"src/notes_{step}.py"
        output = "ok\n" * 200
        if step == 4:
            output = "Traceback (most recent call last):\nsqlite3.IntegrityError: UNIQUE failed"
        messages += [
            {
                "role": "assistant",
                "content": f"Step {step}.",
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {
                            "name": "write_file",
                            "arguments": json.dumps({"path": path, "content": "x = 1\n" * 80}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": output},
        ]
    summary = (
        "This session is being continued from a previous conversation that ran out of context. "
        "The user asked to fix the billing export; several notes files were written."
    )
    position = len(messages)
    messages += [
        {"role": "user", "content": summary},
        {"role": "assistant", "content": "Continuing."},
        {"role": "user", "content": "What is left?"},
    ]
    return Conversation(
        messages=messages,
        format="claude-code",
        compactions=[RecordedCompaction(position, "claude-code", "auto", 9_000, summary, line=40)],
        metadata={"cwd": "/work/shop"},
    )


def test_the_agents_summary_dropping_a_file_and_an_error_is_shown_and_ours_keeps_them() -> None:
    (event,) = audit(_planted()).events
    assert (event.agent, event.trigger, event.tokens_before) == ("claude-code", "auto", 9_000)
    assert event.tokens_before_recorded and event.window_source == "assumed"
    forgotten = {(fact.kind, fact.text): fact for fact in event.forgotten}
    written = forgotten[("files", "src/billing/export_csv.py")]
    assert written.message_index == 6 and written.kept_by_pipeline
    error = next(f for (kind, _), f in forgotten.items() if kind == "errors")
    assert "IntegrityError" in error.text and error.kept_by_pipeline
    assert event.kept_by_agent is not None and event.kept_by_pipeline is not None
    assert event.kept_by_pipeline > event.kept_by_agent
    assert event.kept_at_agent_size is not None
    assert "the agent's context after it was" in event.verdict()
    assert "; ours at the same size (" in event.verdict()


def test_a_file_named_relative_to_the_project_or_by_name_counts_as_remembered() -> None:
    conversation = _planted()
    position = conversation.compactions[0].position
    summary = str(conversation.messages[position]["content"]) + " Wrote export_csv.py."
    conversation.compactions[0].summary = summary
    (event,) = audit(conversation).events
    assert "src/billing/export_csv.py" not in {fact.text for fact in event.forgotten}


def test_the_claude_code_auto_compaction_is_audited() -> None:
    conversation = load_conversation(_corpus(SPOTTER))
    (event,) = audit(conversation).events
    assert (event.position, event.trigger, event.tokens_before, event.line) == (
        229,
        "auto",
        167_094,
        1256,
    )
    assert event.summary is not None and event.summary_tokens and event.summary_tokens > 1_000
    assert event.facts_before > 50
    assert event.kept_by_agent is not None and event.kept_by_agent < event.facts_before
    assert event.kept_at_agent_size is not None
    assert event.kept_at_agent_size > event.kept_by_agent
    assert len(event.forgotten) == event.facts_before - event.kept_by_agent


def test_codex_s_encrypted_compaction_is_reported_as_unreadable() -> None:
    conversation = load_conversation(_corpus(CODEX))
    (event,) = audit(conversation).events
    assert (event.agent, event.position, event.tokens_before) == ("codex", 25, 227_252)
    assert event.summary is None and event.kept_by_agent is None and event.forgotten == []
    assert event.kept_by_pipeline is not None
    assert "not readable" in event.verdict()
    # Compared at the right size: the context Codex carried on with, as the provider counted
    # it at the next call (ours was left out: "nothing left to summarise").
    assert event.agent_tokens_after_source == "recorded usage"
    assert event.agent_tokens_after is not None and event.agent_tokens_after < 227_252
    assert event.kept_at_agent_size is not None and event.pipeline_summary is not None
    assert f"ours at the same size ({event.tokens_at_agent_size:,} tokens)" in event.verdict()


def test_a_message_number_is_not_a_forgotten_identifier() -> None:
    conversation = _planted()
    conversation.messages[2] = {
        **conversation.messages[2],
        "content": str(conversation.messages[2].get("content") or "")
        + " As in message #1, see issue #4242.",
    }
    (event,) = audit(conversation).events
    identifiers = {fact.text for fact in event.forgotten if fact.kind == "identifiers"}
    assert "#1" not in identifiers and "#4242" in identifiers


def test_the_audit_command_prints_each_compaction_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(
        main, ["audit", str(_corpus(SPOTTER)), "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "compaction 1: Claude Code, auto, at message 229 (line 1256)" in result.output
    assert "tokens before      167,094 (as recorded)" in result.output
    assert "forgotten" in result.output and "verdict" in result.output
    data = json.loads(out.read_text())
    assert data["format"] == "claude-code"
    (event,) = data["events"]
    for key in (
        "agent",
        "position",
        "trigger",
        "tokens_before",
        "summary",
        "summary_tokens",
        "facts_before",
        "kept_by_agent",
        "kept_by_pipeline",
        "forgotten",
    ):
        assert key in event
    assert {"kind", "text", "message_index", "kept_by_pipeline"} <= set(event["forgotten"][0])


def test_a_session_with_no_recorded_compaction_says_so(tmp_path: Path) -> None:
    session = tmp_path / "plain.json"
    session.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    )
    result = CliRunner().invoke(main, ["audit", str(session), "--json", "-"])
    assert result.exit_code == 0
    assert json.loads(result.output)["events"] == []
    plain = CliRunner().invoke(main, ["audit", str(session)])
    assert plain.exit_code == 0 and "no compaction recorded" in plain.output
