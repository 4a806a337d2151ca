"""Cline, Roo Code and Kilo Code task folders (hand-made in data/ from the documented shapes): a
Cline 3.x task with native tool use answered by `[tool] Result:` text, and an older XML-tool
Roo Code task with a condensed context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from format_helpers import DATA, annotated, assert_paired, roles

from compaction import CompactionConfig, compress
from compaction.errors import FormatError
from compaction.formats import detect_format, load_conversation, load_conversations
from compaction.messages import content_text, last_user_index, tool_calls
from compaction.provider_rules import errors, validate

CLINE = DATA / "cline_task"
ROO = DATA / "roo_task_xml"


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_every_native_call_is_answered_by_the_result_text_that_follows_it() -> None:
    history = _json(CLINE / "api_conversation_history.json")
    conversation = load_conversation(CLINE)
    assert conversation.format == "cline"
    uses = [b for m in history for b in m["content"] if b.get("type") == "tool_use"]
    calls = [c for m in annotated(conversation) for c in tool_calls(m)]
    assert [c["id"] for c in calls] == [u["id"] for u in uses]
    results = {
        m["tool_call_id"]: m["content"] for m in annotated(conversation) if m["role"] == "tool"
    }
    # The read's result is the block after its `[read_file for 'src/cli.ts'] Result:` header.
    assert results["toolu_01A"] == history[2]["content"][1]["text"]
    # The call Cline refused to run is answered by its refusal.
    assert results["toolu_03C"].startswith("Tool [execute_command] was not executed")
    defined, answered = assert_paired(annotated(conversation))
    assert defined - answered == {"toolu_06F"}  # the task ended on this call
    # Valid for both providers once compacted (the issue: 231 calls, 0 results, invalid).
    result = compress(annotated(conversation), CompactionConfig(context_length=32_000))
    assert errors(validate(result.messages, "openai")) == []
    assert errors(validate(result.messages, "anthropic")) == []


def test_the_users_words_are_split_from_the_task_wrapper_and_environment_details() -> None:
    conversation = load_conversation(CLINE)
    first = annotated(conversation)[0]
    assert first == {
        "role": "user",
        "content": "Add a --verbose flag to the CLI in src/cli.ts that prints each step.",
    }
    assert annotated(conversation)[1]["injected"] == "context"
    assert annotated(conversation)[1]["content"].startswith("<environment_details>")
    # Feedback given on attempt_completion is the user's own message, after the results.
    feedback = next(
        i for i, m in enumerate(annotated(conversation)) if "README.md, under Usage" in str(m)
    )
    assert annotated(conversation)[feedback] == {
        "role": "user",
        "content": "Also document the flag in README.md, under Usage.",
    }
    assert annotated(conversation)[feedback - 1]["role"] == "tool"
    assert "<feedback>" not in annotated(conversation)[feedback - 1]["content"]
    assert last_user_index(annotated(conversation)) == feedback
    assert conversation.metadata["cwd"] == "/home/dev/tool"


def test_usage_model_and_version_come_from_the_ui_rows_and_task_metadata() -> None:
    rows = _json(CLINE / "ui_messages.json")
    metadata = _json(CLINE / "task_metadata.json")
    conversation = load_conversation(CLINE)
    requests = [json.loads(r["text"]) for r in rows if r.get("say") == "api_req_started"]
    assert len(conversation.calls) == len(requests) == 5
    for call, request in zip(conversation.calls, requests, strict=True):
        # Anthropic counts the prompt without the cache reads and writes: the prompt is the sum.
        cached = request["cacheReads"] + request["cacheWrites"]
        assert call.input_tokens == request["tokensIn"] + cached
        assert (call.output_tokens, call.cost_usd) == (request["tokensOut"], request["cost"])
        assert annotated(conversation)[call.position]["role"] == "assistant"
    assert conversation.metadata["model"] == metadata["model_usage"][-1]["model_id"]
    assert conversation.metadata["version"] == "3.32.0"


@pytest.mark.parametrize("name", ["ui_messages.json", "task_metadata.json"])
def test_any_file_of_the_task_folder_opens_the_task(name: str) -> None:
    assert detect_format(CLINE / name).name == "cline"
    opened = load_conversation(CLINE / name)
    reference = load_conversation(CLINE)
    assert opened.messages == reference.messages
    assert opened.marks == reference.marks
    assert len(opened.calls) == 5


def test_a_ui_messages_file_alone_says_where_the_conversation_is(tmp_path: Path) -> None:
    lone = tmp_path / "ui_messages.json"
    lone.write_text((CLINE / "ui_messages.json").read_text())
    with pytest.raises(FormatError, match="the conversation is in api_conversation_history"):
        load_conversations(lone)


def test_xml_tool_calls_in_the_text_become_calls_with_their_parameters() -> None:
    history = _json(ROO / "api_conversation_history.json")
    conversation = load_conversation(ROO)
    calls = [c for m in annotated(conversation) for c in tool_calls(m)]
    assert [c["function"]["name"] for c in calls] == [
        "read_file",
        "apply_diff",
        "execute_command",
        "attempt_completion",
    ]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "app.py"}
    diff = json.loads(calls[1]["function"]["arguments"])["diff"]
    assert diff.startswith("<<<<<<< SEARCH") and diff.endswith(">>>>>>> REPLACE")
    # The prose around a call stays the assistant's text; the XML is the call.
    assert (
        annotated(conversation)[2]["content"]
        == "<thinking>\nI need to see the handler.\n</thinking>"
    )
    defined, answered = assert_paired(annotated(conversation))
    assert defined - answered == {calls[-1]["id"]}
    assert any("written as XML" in w for w in conversation.warnings)
    assert roles(conversation).count("assistant") == len(
        [m for m in history if m["role"] == "assistant"]
    )


def test_a_condensed_context_is_a_recorded_compaction_with_its_size_and_cost() -> None:
    rows = _json(ROO / "ui_messages.json")
    conversation = load_conversation(ROO)
    (compaction,) = conversation.compactions
    condense = next(r for r in rows if r.get("say") == "condense_context")["contextCondense"]
    assert compaction.tokens_before == condense["prevContextTokens"]
    summary = annotated(conversation)[compaction.position]
    assert summary["role"] == "assistant"
    assert content_text(summary).startswith("## 1. Previous Conversation")
    (call,) = [c for c in conversation.calls if c.position == compaction.position]
    assert (call.cost_usd, call.input_tokens) == (condense["cost"], None)
    # The resumption's own words are the user's; the rest of it is the harness's.
    resumed = next(
        i for i, m in enumerate(annotated(conversation)) if m.get("content") == "Now run the tests."
    )
    assert annotated(conversation)[resumed - 1]["injected"] == "continuation"
    assert last_user_index(annotated(conversation)) == resumed
    # No provider recorded: the Anthropic reading, said aloud.
    assert any("read the Anthropic way" in w for w in conversation.warnings)
    assert conversation.metadata["cwd"] == "/srv/lambda"


def test_a_result_no_call_waits_for_is_still_the_tools_text_not_the_users(tmp_path: Path) -> None:
    # An XML tool this importer does not know is left in the text; its result then answers no
    # call, and must not read as the user's latest request.
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nTidy the repo.\n</task>"}]},
        {"role": "assistant", "content": "<tidy_up>\n<path>.</path>\n</tidy_up>"},
        {"role": "user", "content": [{"type": "text", "text": "[tidy_up for '.'] Result:\nDone."}]},
    ]
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    conversation = load_conversation(tmp_path)
    assert annotated(conversation)[-1]["injected"] == "tool-result"
    assert last_user_index(annotated(conversation)) == 0


def test_a_call_left_without_result_is_answered_before_the_users_words(tmp_path: Path) -> None:
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<task>\nCheck both files.\n</task>"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "read_file", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "b", "name": "read_file", "input": {"path": "b.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[read_file for 'a.py'] Result:\nprint('a')"},
                {"type": "text", "text": "[Response interrupted by user]"},
            ],
        },
        {"role": "assistant", "content": "Stopping here."},
    ]
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    conversation = load_conversation(tmp_path)
    assert roles(conversation) == ["user", "assistant", "tool", "tool", "user", "assistant"]
    assert annotated(conversation)[3]["content"] == "(no result recorded for this call)"
    assert annotated(conversation)[4]["injected"] == "interruption"
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == {"a", "b"}
    assert any("had no result in the next user message" in w for w in conversation.warnings)


def test_the_command_line_opens_a_task_folder() -> None:
    from click.testing import CliRunner

    from compaction.cli import main

    inspected = CliRunner().invoke(main, ["inspect", str(CLINE)])
    assert inspected.exit_code == 0, inspected.output
    assert "Add a --verbose flag" in inspected.output
    audited = CliRunner().invoke(main, ["audit", str(ROO)])
    assert audited.exit_code == 0, audited.output
    assert "compaction 1: Cline, unknown, at message 8" in audited.output
    refused = CliRunner().invoke(main, ["validate", str(DATA)])
    assert refused.exit_code == 2
    assert "neither a Cline/Roo/Kilo task folder" in refused.output
