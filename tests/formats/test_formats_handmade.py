"""Each importer on a small hand-written file per format (FORMATS.md), message by message."""

from __future__ import annotations

import json

from format_helpers import DATA, assert_paired, roles

from compaction.formats import detect_format, load_conversation, load_conversations
from compaction.summary import SUMMARY_PREFIX


def test_codex_rollout_rebuilds_turns_and_pairs_calls_by_call_id() -> None:
    conversation = load_conversation(DATA / "codex_rollout.jsonl")
    assert conversation.format == "codex"
    assert roles(conversation) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    system, user, calls, out_a, out_b, last = conversation.messages
    assert system["content"] == "You are Codex, a coding agent."
    assert user["content"] == "Run the tests and fix the failure."
    # Two consecutive calls are one assistant turn; the custom call's free text is wrapped.
    assert [c["id"] for c in calls["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(calls["tool_calls"][1]["function"]["arguments"]) == {
        "input": "tools.exec_command({cmd: 'git status'})"
    }
    assert calls["reasoning"] == "Start by running pytest."
    assert (out_a["tool_call_id"], out_a["content"]) == ("call_a", "1 failed, 4 passed")
    assert (out_b["tool_call_id"], out_b["content"]) == ("call_b", "On branch main")
    # The last call has no output in the source, so it stays unanswered.
    assert last["content"] == "One test fails in test_parse.py; fixing it now."
    assert [c["id"] for c in last["tool_calls"]] == ["call_c"]
    defined, answered = assert_paired(conversation.messages)
    assert defined - answered == {"call_c"}
    assert conversation.metadata["model"] == "gpt-5-codex"
    assert conversation.metadata["session_id"] == "sess-1"
    assert any("line 5" in w and "encrypted reasoning" in w for w in conversation.warnings)
    assert any("lines 4, 10" in w and "event_msg" in w for w in conversation.warnings)


def test_hermes_session_prepends_system_prompt_and_keeps_previous_summary() -> None:
    conversation = load_conversation(DATA / "hermes_session.json")
    assert conversation.format == "hermes"
    assert roles(conversation) == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert conversation.messages[0]["content"] == "You are Hermes, a helpful agent."
    assert conversation.messages[1]["content"].startswith(SUMMARY_PREFIX.split("]")[0])
    assert conversation.metadata["previous_summary_indices"] == [1]
    # hermes' in-session summary is a compaction its agent made, recorded as such.
    (compaction,) = conversation.compactions
    assert (compaction.position, compaction.agent, compaction.trigger) == (1, "hermes", "unknown")
    assert compaction.summary == conversation.messages[1]["content"].split("\n", 1)[1]
    assert conversation.metadata["deduplicated_tool_outputs"] == 1
    assistant = conversation.messages[3]
    assert assistant["reasoning"] == "Use df."
    assert "codex_reasoning_items" not in assistant and "finish_reason" not in assistant
    assert assistant["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"command": "df -h"}'},
        }
    ]
    assert [t["function"]["name"] for t in conversation.tools] == ["terminal"]
    assert any("codex_reasoning_items" in w for w in conversation.warnings)


def test_sharegpt_parses_tags_and_takes_ids_from_responses() -> None:
    first, second = load_conversations(DATA / "sharegpt_hermes.jsonl")
    assert first.format == "sharegpt"
    assert roles(first) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = first.messages[2]["tool_calls"]
    assert [c["id"] for c in calls] == ["qwen_tc_0", "qwen_tc_1"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"city": "Paris"},
        {"city": "Rome"},
    ]
    assert first.messages[2]["reasoning"] == "I need two lookups."
    assert first.messages[2]["content"] is None
    assert json.loads(first.messages[4]["content"]) == {"temp": 24}
    assert first.messages[-1]["content"] == "Paris is 18°C and Rome is 24°C."
    assert [t["function"]["name"] for t in first.tools] == ["get_weather"]
    assert_paired(first.messages)
    # No ids anywhere: synthesised from positions, identical on every import.
    assert second.messages[1]["tool_calls"][0]["id"] == "sharegpt_1_0"
    assert second.messages[2]["tool_call_id"] == "sharegpt_1_0"
    again = load_conversations(DATA / "sharegpt_hermes.jsonl")[1]
    assert again.messages == second.messages


def test_gemini_stream_json_concatenates_deltas_and_pairs_tool_ids() -> None:
    conversation = load_conversation(DATA / "gemini_stream.jsonl")
    assert conversation.format == "gemini-cli"
    assert roles(conversation) == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    streamed = conversation.messages[1]
    assert streamed["content"] == "I'll read the file."
    assert streamed["tool_calls"][0]["id"] == "read-1"
    assert conversation.messages[2]["content"] == "# Project\nA demo."
    assert "denied" in conversation.messages[6]["content"]
    assert conversation.messages[-1]["content"] == "Permission was denied."
    assert len(conversation.metadata["runs"]) == 2
    assert_paired(conversation.messages)


def test_gemini_chat_recording_emits_embedded_results_after_the_call() -> None:
    conversation = load_conversation(DATA / "gemini_chat.json")
    assert conversation.format == "gemini-cli"
    assert roles(conversation) == ["user", "assistant", "tool", "assistant"]
    assistant = conversation.messages[1]
    assert [c["id"] for c in assistant["tool_calls"]] == ["run-1", "run-2"]
    assert assistant["reasoning"] == "Plan: Run python --version."
    assert conversation.messages[2]["content"] == "Python 3.11.9"
    defined, answered = assert_paired(conversation.messages)
    assert defined - answered == {"run-2"}  # cancelled in the source, so no result
    assert any("messages[2]" in w and "'info'" in w for w in conversation.warnings)


def test_anthropic_blocks_become_tool_calls_and_tool_messages() -> None:
    conversation = load_conversation(DATA / "anthropic_messages.json")
    assert conversation.format == "anthropic"
    assert roles(conversation) == ["system", "user", "assistant", "tool", "user", "assistant"]
    assert conversation.messages[0]["content"] == "You are a careful research assistant."
    assistant = conversation.messages[2]
    assert assistant["content"] == "Searching."
    assert assistant["reasoning"] == "Search first."
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "query": "Lyon population"
    }
    assert conversation.messages[3] == {
        "role": "tool",
        "tool_call_id": "toolu_1",
        "content": "Lyon: 522,250 (2021)",
    }
    assert conversation.messages[4]["content"] == "Also give the year."
    assert_paired(conversation.messages)


def test_openai_jsonl_one_message_per_line() -> None:
    conversation = load_conversation(DATA / "openai_messages.jsonl")
    assert conversation.format == "openai"
    assert roles(conversation) == ["system", "user", "assistant", "tool", "assistant"]
    assert_paired(conversation.messages)


def test_every_hand_made_file_is_detected_with_a_reason() -> None:
    expected = {
        "codex_rollout.jsonl": "codex",
        "hermes_session.json": "hermes",
        "sharegpt_hermes.jsonl": "sharegpt",
        "gemini_stream.jsonl": "gemini-cli",
        "gemini_chat.json": "gemini-cli",
        "anthropic_messages.json": "anthropic",
        "openai_messages.jsonl": "openai",
    }
    for name, fmt in expected.items():
        detection = detect_format(DATA / name)
        assert detection.name == fmt, name
        assert detection.reason
        # Content, not the file name: the same bytes passed without a name are recognised too.
        assert detect_format((DATA / name).read_bytes()).name == fmt


def test_import_never_mutates_a_parsed_value() -> None:
    value = json.loads((DATA / "hermes_session.json").read_text())
    snapshot = json.dumps(value, sort_keys=True)
    load_conversation(value)
    assert json.dumps(value, sort_keys=True) == snapshot
