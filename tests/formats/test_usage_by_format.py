"""The provider's usage per call, per format: every corpus file with usage, against figures
computed here from the raw JSON alone (no importer code), and hand-made records for the traps
(streamed repeats, running totals, zero usage, synthetic responses)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
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


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return [
        (number, json.loads(text))
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if text.strip()
    ]


# -- Claude Code: one call per message.id, the last record's output ---------------------------


def _claude_expected(path: Path) -> list[tuple[str, int, int, int, int]]:
    """(id, prompt, cache read, cache write, output) per distinct message.id, in file order."""
    records = _lines(path)
    sidechain_file = all(r.get("isSidechain") for _, r in records if "uuid" in r)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for _, record in records:
        if record.get("type") != "assistant":
            continue
        if record.get("isSidechain") and not sidechain_file:
            continue
        if record["message"].get("model") == "<synthetic>":
            continue
        by_id.setdefault(record["message"]["id"], []).append(record["message"]["usage"])
    expected = []
    for message_id, usages in by_id.items():
        last = max(usages, key=lambda u: u["output_tokens"])
        read = last.get("cache_read_input_tokens", 0)
        write = last.get("cache_creation_input_tokens", 0)
        prompt = last["input_tokens"] + read + write
        if prompt == 0 and last["output_tokens"] == 0:
            continue
        expected.append((message_id, prompt, read, write, last["output_tokens"]))
    return expected


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
    assert got == _claude_expected(path)
    for call in conversation.calls:
        assert conversation.messages[call.position]["role"] == "assistant"


def test_spotter_has_152_calls_and_40m_read_from_the_cache() -> None:
    conversation = load_conversations(_path(SPOTTER))[0]
    assert len(conversation.calls) == 152
    reads = sum(c.cache_read_tokens or 0 for c in conversation.calls)
    assert reads == sum(e[2] for e in _claude_expected(_path(SPOTTER)))
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


def _codex_expected(path: Path) -> tuple[list[tuple[int, int, int]], int]:
    """(prompt, cached, output) per new running total, after a forked thread's replay."""
    records = _lines(path)
    first = records[0][1]
    fork = datetime.fromisoformat(first["timestamp"].replace("Z", "+00:00"))
    own = 0
    if first["payload"].get("forked_from_id"):
        # The replayed parent history carries the fork's timestamp; its own work starts later.
        own = next(
            number
            for number, r in records
            if r["type"] == "event_msg"
            and r["payload"]["type"] == "task_started"
            and (datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")) - fork).seconds
        )
    expected, previous, window = [], None, 0
    for number, record in records:
        payload = record.get("payload", {})
        if number < own or record["type"] != "event_msg" or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not info:
            continue
        window = info["model_context_window"]
        if info["total_token_usage"] == previous:
            continue
        previous = info["total_token_usage"]
        last = info["last_token_usage"]
        if last["input_tokens"] or last["output_tokens"]:
            expected.append(
                (last["input_tokens"], last["cached_input_tokens"], last["output_tokens"])
            )
    return expected, window


@pytest.mark.parametrize("name", CODEX)
def test_codex_calls_are_last_token_usage_never_the_running_total(name: str) -> None:
    path = _path(name)
    conversation = load_conversation(path)
    expected, window = _codex_expected(path)
    got = [(c.input_tokens, c.cache_read_tokens, c.output_tokens) for c in conversation.calls]
    assert got == expected
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
    last: dict[str, dict[str, Any]] = {}
    for _, record in _lines(path):
        if record.get("type") == "gemini" and "tokens" in record:
            last[record["id"]] = record["tokens"]  # dict order: first-seen place, last value
    expected = [(t["input"], t["cached"], t["output"] + t["thoughts"]) for t in last.values()]
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
