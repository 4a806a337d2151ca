"""Exporters: Anthropic rules, OpenAI cleanliness, and round trips that keep the conversation."""

from __future__ import annotations

import copy
import json

import pytest
from format_helpers import DATA, corpus_file

from compaction.formats import dump_conversation, load_conversation, load_conversations
from compaction.messages import Message, content_text, tool_calls
from compaction.provider_rules import errors, validate


def _essence(messages: list[Message]) -> list[tuple[object, ...]]:
    """What a round trip must keep: roles, text, calls (id, name, parsed args), result ids."""
    return [
        (
            m["role"],
            content_text(m),
            tuple(
                (c["id"], c["function"]["name"], json.dumps(json.loads(c["function"]["arguments"])))
                for c in tool_calls(m)
            ),
            m.get("tool_call_id"),
        )
        for m in messages
    ]


def test_anthropic_export_follows_anthropic_rules() -> None:
    messages = load_conversation(DATA / "codex_rollout.jsonl").messages
    before = copy.deepcopy(messages)
    exported = dump_conversation(messages, "anthropic")
    assert messages == before  # input untouched
    assert exported["system"] == "You are Codex, a coding agent."
    turns = exported["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    uses = [b for b in turns[1]["content"] if b["type"] == "tool_use"]
    assert uses[0] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "exec_command",
        "input": {"cmd": "pytest -q", "workdir": "/repo"},
    }
    results = turns[2]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in results] == [
        ("tool_result", "call_a"),
        ("tool_result", "call_b"),
    ]
    assert all("reasoning" not in json.dumps(t) for t in turns)


def test_consecutive_same_role_messages_merge_with_results_first() -> None:
    messages: list[Message] = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": "not json"}}
            ],
        },
        {"role": "tool", "tool_call_id": "x", "content": "out"},
        {"role": "user", "content": "next"},
        {"role": "system", "content": "late note"},
    ]
    turns = dump_conversation(messages, "anthropic", system="Be brief.")
    assert turns["system"] == "Be brief."
    assert [t["role"] for t in turns["messages"]] == ["user", "assistant", "user"]
    assert [b["text"] for b in turns["messages"][0]["content"]] == ["a", "b"]
    assert turns["messages"][1]["content"][0]["input"] == {"_raw": "not json"}
    last = turns["messages"][2]["content"]
    assert last[0]["type"] == "tool_result"
    assert last[2] == {"type": "text", "text": "[system] late note"}


def test_openai_export_keeps_only_api_keys() -> None:
    messages = load_conversation(DATA / "hermes_session.json").messages
    exported = dump_conversation(messages, "openai", system="Extra system.")
    assert exported["messages"][0] == {"role": "system", "content": "Extra system."}
    for message in exported["messages"]:
        assert set(message) <= {"role", "content", "name", "tool_calls", "tool_call_id"}
    with pytest.raises(ValueError, match="unknown export format 'xml'"):
        dump_conversation(messages, "xml")


@pytest.mark.parametrize(
    "name",
    [
        "codex_rollout.jsonl",
        "anthropic_messages.json",
        "sharegpt_hermes.jsonl",
        "gemini_chat.json",
        "openai_messages.jsonl",
    ],
)
def test_round_trip_openai_anthropic_openai(name: str) -> None:
    original = load_conversation(DATA / name).messages
    anthropic = dump_conversation(original, "anthropic")
    back = load_conversation(anthropic, format="anthropic").messages
    openai = dump_conversation(back, "openai")
    again = load_conversation(openai).messages
    assert _essence(again) == _essence(original)


def test_round_trip_on_tau_bench_conversations() -> None:
    path = corpus_file("taubench__gpt-4o-airline.json")
    for conversation in load_conversations(path)[:20]:
        anthropic = dump_conversation(conversation.messages, "anthropic")
        back = load_conversation(anthropic, format="anthropic").messages
        assert _essence(back) == _essence(conversation.messages)


def test_a_system_only_anthropic_export_reads_back_and_is_flagged() -> None:
    # `--to anthropic` of a conversation that is only a system prompt writes an empty messages
    # list. Our importer reads it back; validate then says why Anthropic rejects it.
    exported = dump_conversation([{"role": "system", "content": "Be brief."}], "anthropic")
    assert exported == {"system": "Be brief.", "messages": []}
    conversation = load_conversation(json.dumps(exported))
    assert conversation.format == "anthropic"
    assert conversation.messages == [{"role": "system", "content": "Be brief."}]
    assert [p.rule for p in errors(validate(conversation.messages, "anthropic"))] == ["system-only"]
