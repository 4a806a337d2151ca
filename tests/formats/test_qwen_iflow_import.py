"""Qwen Code and iFlow CLI: Claude-Code-like records with Gemini parts or Gemini tool results
(hand-made files in data/ following the documented record shapes; docs/formats.md)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from format_helpers import DATA, annotated, assert_paired, roles

from compaction.formats import detect_format, load_conversation
from compaction.lab.audit import audit
from compaction.messages import content_text, last_user_index, tool_calls
from compaction.tokens import RoughCounter

QWEN = DATA / "qwen_code_session.jsonl"
IFLOW = DATA / "iflow_session.jsonl"


def _records(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_qwen_code_parts_become_messages_with_paired_calls_and_reasoning() -> None:
    records = _records(QWEN)
    conversation = load_conversation(QWEN)
    assert detect_format(QWEN).name == conversation.format == "qwen-code"
    parts = [p for r in records if r["type"] == "assistant" for p in r["message"]["parts"]]
    call_ids = [p["functionCall"]["id"] for p in parts if "functionCall" in p]
    assert [c["id"] for m in annotated(conversation) for c in tool_calls(m)] == call_ids
    responses = [
        p["functionResponse"]["id"]
        for r in records
        if r["type"] == "tool_result"
        for p in r["message"]["parts"]
    ]
    assert [m["tool_call_id"] for m in annotated(conversation) if m["role"] == "tool"] == responses
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == set(call_ids)
    first = annotated(conversation)[1]
    assert first["reasoning"] == parts[0]["text"]  # the `thought: true` part
    assert first["content"] == parts[1]["text"]
    rejected = annotated(conversation)[5]
    assert rejected["content"].startswith("Error: User rejected this change")
    assert conversation.metadata["cwd"] == "/home/dev/shop"
    assert conversation.metadata["model"] == "qwen3-coder-plus"


def test_qwen_code_splits_the_users_words_from_the_referenced_files() -> None:
    conversation = load_conversation(QWEN)
    words, files = annotated(conversation)[7], annotated(conversation)[8]
    assert words["content"] == (
        "Run the tests first, then apply the fix. The expected values are in @tests/test_cart.py"
    )
    assert "injected" not in words
    assert files["injected"] == "context"
    assert files["content"].startswith("--- Content from referenced files ---")
    assert "assert total(items, coupon) == 90.0" in files["content"]
    assert last_user_index(annotated(conversation)) == 7


def test_qwen_code_chat_compression_is_a_recorded_compaction_the_audit_finds() -> None:
    records = _records(QWEN)
    conversation = load_conversation(QWEN)
    (compaction,) = conversation.compactions
    payload = next(r for r in records if r.get("subtype") == "chat_compression")["systemPayload"]
    snapshot = payload["compressedHistory"][0]["parts"][0]["text"]
    assert (compaction.agent, compaction.trigger, compaction.line) == ("qwen-code", "manual", 12)
    assert compaction.tokens_before == payload["info"]["originalTokenCount"] == 13_510
    assert compaction.summary == snapshot
    summary = annotated(conversation)[compaction.position]
    assert (summary["content"], summary["injected"]) == (snapshot, "compaction")
    (event,) = audit(conversation, RoughCounter()).events
    assert (event.agent, event.position, event.tokens_before) == ("qwen-code", 6, 13_510)
    assert event.kept_by_agent is not None


def test_qwen_code_usage_comes_from_telemetry_at_the_message_each_call_produced() -> None:
    records = _records(QWEN)
    conversation = load_conversation(QWEN)
    events = [
        (number, r["systemPayload"]["uiEvent"])
        for number, r in enumerate(records, start=1)
        if r.get("subtype") == "ui_telemetry"
        and r["systemPayload"]["uiEvent"]["event.name"].endswith("api_response")
    ]
    assert [(c.line, c.input_tokens, c.output_tokens) for c in conversation.calls] == [
        (line, e["input_token_count"], e["output_token_count"]) for line, e in events
    ]
    assert [c.cache_read_tokens for c in conversation.calls] == [
        e["cached_content_token_count"] for _, e in events
    ]
    # Each call at the assistant message it produced; the compression's own call at the point
    # where it ran (the summary's place).
    assert [c.position for c in conversation.calls] == [1, 4, 6, 9, 11, 13]
    for call in conversation.calls:
        if call.position != 6:
            assert annotated(conversation)[call.position]["role"] == "assistant"


def test_qwen_code_without_telemetry_takes_usage_from_the_assistant_records(tmp_path: Any) -> None:
    kept = [r for r in _records(QWEN) if r.get("subtype") != "ui_telemetry"]
    for previous, record in itertools.pairwise(kept):
        record["parentUuid"] = previous["uuid"]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    conversation = load_conversation(path)
    usage = [r["usageMetadata"] for r in kept if r["type"] == "assistant"]
    assert [(c.input_tokens, c.output_tokens) for c in conversation.calls] == [
        (u["promptTokenCount"], u["candidatesTokenCount"]) for u in usage
    ]
    assert [c.position for c in conversation.calls] == [1, 4, 9, 11, 13]


def test_iflow_tool_results_are_the_function_responses_output() -> None:
    records = _records(IFLOW)
    conversation = load_conversation(IFLOW)
    assert detect_format(IFLOW).name == conversation.format == "iflow"
    assert roles(conversation) == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    outputs = []
    for record in records:
        for block in record["message"]["content"] if record["type"] == "user" else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                holder = block["content"].get("responseParts", block["content"])
                outputs.append(holder["functionResponse"]["response"]["output"])
    assert [m["content"] for m in annotated(conversation) if m["role"] == "tool"] == outputs
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == {"call_-7848967933605705235", "call_5521"}
    assert conversation.metadata["cwd"] == "/Users/dev/Code/notes"
    assert content_text(annotated(conversation)[0]).startswith("List the notes folder")


def test_iflow_usage_of_zero_is_no_usage() -> None:
    conversation = load_conversation(IFLOW)
    (call,) = conversation.calls  # the two 0/0 usages are a proxy that reported none
    assert (call.position, call.input_tokens, call.output_tokens) == (5, 16_472, 224)
    assert (call.model, call.line, call.call_id) == ("glm-4.7", 6, "msg-3")


def test_iflow_usage_metadata_is_read_when_there_is_no_anthropic_usage(tmp_path: Any) -> None:
    records = _records(IFLOW)
    last = records[-1]["message"]
    del last["usage"]
    records[-1]["usageMetadata"] = {
        "promptTokenCount": 16472,
        "candidatesTokenCount": 224,
        "cachedContentTokenCount": 16000,
        "totalTokenCount": 16696,
    }
    path = tmp_path / "session-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (call,) = load_conversation(path).calls
    assert (call.position, call.input_tokens, call.cache_read_tokens) == (5, 16_472, 16_000)


def test_qwen_code_calls_a_cancelled_turn_left_open_are_answered_before_it_goes_on(
    tmp_path: Any,
) -> None:
    # The shell call's result was never recorded (a cancelled call) and the model went on.
    kept = [r for r in _records(QWEN) if r["uuid"] != "00000000-0000-4000-8000-000000000018"]
    for previous, record in itertools.pairwise(kept):
        record["parentUuid"] = previous["uuid"]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    conversation = load_conversation(path)
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered
    closed = next(m for m in annotated(conversation) if m.get("tool_call_id") == "call_shell_1")
    assert closed["content"] == "(no result recorded for this call)"
    assert any("a cancelled turn" in w for w in conversation.warnings)
