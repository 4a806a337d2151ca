"""The provider's usage per call, per format: every corpus file with usage, against figures
computed here from the raw JSON alone (no importer code), and hand-made records for the traps
(streamed repeats, running totals, zero usage, synthetic responses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import usage_by_hand as by_hand
from corpus_paths import corpus_path

from compaction.formats import load_conversation, load_conversations

SPOTTER = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CLAUDE = [
    SPOTTER,
    "claudecode-claudereliability-py2rust__transcript.jsonl",
    "claudecode-yatra__claude-session.jsonl",
    "claudecode-agenticwallet__claude-session.jsonl",
    "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d__subagents__agent-a881341.jsonl",
]
CODEX = [
    "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl",
    "codex-empireofbits__codex-session.jsonl",
]


def _path(name: str) -> Path:
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")
    return path


@pytest.mark.parametrize("name", CLAUDE)
def test_claude_code_calls_match_the_records_read_by_hand(name: str) -> None:
    path = _path(name)
    conversation = load_conversations(path)[0]
    got = [
        (
            c.call_id,
            c.input_tokens,
            c.cache_read_tokens or 0,
            c.cache_write_tokens or 0,
            c.output_tokens,
        )
        for c in sorted(conversation.calls, key=lambda c: c.line or 0)
    ]
    assert got == [
        (h.call_id, h.prompt, h.read, h.write, h.output) for h in by_hand.claude_code(path)
    ]
    for call in conversation.calls:
        assert conversation.messages[call.position]["role"] == "assistant"


def test_spotter_has_152_calls_and_40m_read_from_the_cache() -> None:
    conversation = load_conversations(_path(SPOTTER))[0]
    assert len(conversation.calls) == 152
    reads = sum(c.cache_read_tokens or 0 for c in conversation.calls)
    assert reads == sum(h.read for h in by_hand.claude_code(_path(SPOTTER)))
    # The whole 1-hour write is priced apart: every write of this 2.1.39 session is at 1 h.
    assert all(c.cache_write_1h_tokens == c.cache_write_tokens for c in conversation.calls)
    assert "152 model call(s)" in conversation.usage_line()


def test_a_proxy_that_records_zero_usage_gives_no_calls_and_says_so() -> None:
    conversation = load_conversation(_path("claudecode-bastion__claude-session.jsonl"))
    assert conversation.calls == []
    assert "all zeros" in conversation.usage_line()


def _claude_record(message_id: str, usage: dict[str, Any], uuid: str, parent: str | None) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {
                "id": message_id,
                "role": "assistant",
                "model": "claude-sonnet-4-6" if message_id != "syn" else "<synthetic>",
                "content": [{"type": "text", "text": f"reply {uuid}"}],
                "usage": usage,
            },
        }
    )


def test_streamed_records_are_one_call_with_the_final_output_and_synthetic_is_none() -> None:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900}
    lines = [
        json.dumps(
            {
                "type": "user",
                "uuid": "u0",
                "parentUuid": None,
                "sessionId": "s",
                "message": {"role": "user", "content": "hi"},
            }
        ),
        _claude_record("m1", {**usage, "output_tokens": 10}, "a1", "u0"),
        _claude_record("m1", {**usage, "output_tokens": 441}, "a2", "a1"),
        _claude_record("syn", {"input_tokens": 0, "output_tokens": 0}, "a3", "a2"),
    ]
    conversation = load_conversation("\n".join(lines).encode())
    (call,) = conversation.calls
    assert (call.input_tokens, call.output_tokens, call.position) == (1003, 441, 1)
    assert "`<synthetic>` model" in conversation.usage_line()


# -- Codex: last_token_usage per call, never the running total ----------------------------------


@pytest.mark.parametrize("name", CODEX)
def test_codex_calls_are_last_token_usage_never_the_running_total(name: str) -> None:
    path = _path(name)
    conversation = load_conversation(path)
    expected, window = by_hand.codex(path)
    got = [(c.input_tokens, c.cache_read_tokens, c.output_tokens) for c in conversation.calls]
    assert got == [(h.prompt, h.read, h.output) for h in expected]
    assert conversation.metadata["model_context_window"] == window
    # A context is never larger than the window Codex worked with; the running total is.
    assert all(c.input_tokens is not None and c.input_tokens <= window for c in conversation.calls)
    for compaction in conversation.compactions:
        assert compaction.tokens_before is not None and compaction.tokens_before <= window


def test_codex_compaction_tokens_never_come_from_the_running_total() -> None:
    def count(last: int, total: int) -> str:
        usage = {"input_tokens": last, "cached_input_tokens": 0, "output_tokens": 5}
        totals = {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 5}
        info = {"last_token_usage": usage, "total_token_usage": totals}
        info["model_context_window"] = 258_400
        return json.dumps(
            {
                "timestamp": "t",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": info},
            }
        )

    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    reply = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    lines = [
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}}),
        json.dumps({"timestamp": "t", "type": "response_item", "payload": item}),
        json.dumps({"timestamp": "t", "type": "response_item", "payload": reply}),
        count(200_000, 10_701_960),
        count(200_000, 10_701_960),  # written again: no new call
        count(0, 10_701_960),  # after a compaction: input 0, running total only
        json.dumps({"timestamp": "t", "type": "compacted", "payload": {"message": ""}}),
    ]
    conversation = load_conversation("\n".join(lines).encode(), format="codex")
    assert [c.input_tokens for c in conversation.calls] == [200_000]
    assert conversation.compactions[0].tokens_before == 200_000


# -- Gemini CLI: one call per gemini message id, input holds the cache --------------------------


def test_gemini_json_calls_match_the_tokens_read_by_hand() -> None:
    path = _path("gemini-vibecodingtracker__test_conversation_gemini.json")
    raw = json.loads(path.read_text())
    expected = [
        (
            m["tokens"]["input"],
            m["tokens"]["cached"],
            m["tokens"]["output"] + m["tokens"]["thoughts"],
        )
        for m in raw["messages"]
        if m["type"] == "gemini" and "tokens" in m
    ]
    conversation = load_conversation(path)
    assert [(c.input_tokens, c.cache_read_tokens, c.output_tokens) for c in conversation.calls] == (
        expected
    )


def test_gemini_jsonl_counts_a_rewritten_message_once_with_its_last_version() -> None:
    path = _path("gemini-vibecodingtracker__test_conversation_gemini.jsonl")
    expected = [(h.prompt, h.read, h.output) for h in by_hand.gemini_jsonl(path)]
    conversation = load_conversation(path)
    assert [(c.input_tokens, c.cache_read_tokens, c.output_tokens) for c in conversation.calls] == (
        expected
    )
    assert len(conversation.calls) == 6


# -- hermes: no usage in its session file, and it says so -----------------------------------------


def test_hermes_says_its_session_file_holds_no_usage() -> None:
    data = Path(__file__).resolve().parent / "data" / "hermes_session.json"
    conversation = load_conversation(data)
    assert conversation.calls == []
    assert "state database" in conversation.usage_line()


def test_hermes_reads_a_usage_object_where_a_message_has_one() -> None:
    session = {
        "session_id": "s",
        "model": "gpt-4o",
        "system_prompt": "be brief",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "hello",
                "usage": {
                    "prompt_tokens": 1200,
                    "completion_tokens": 7,
                    "prompt_tokens_details": {"cached_tokens": 1024},
                },
            },
        ],
    }
    conversation = load_conversation(json.dumps(session).encode(), format="hermes")
    (call,) = conversation.calls
    assert (call.position, call.input_tokens, call.cache_read_tokens) == (2, 1200, 1024)
    assert conversation.messages[call.position]["role"] == "assistant"
