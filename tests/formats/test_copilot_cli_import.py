"""GitHub Copilot CLI event logs: the real corpus session and hand-written minimal ones.

Expected numbers are read from the raw events with plain json, not from the importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_helpers import DATA, annotated, assert_paired, corpus_file, roles

import compaction
from compaction.formats import copilot_cli, detect_format, load_conversation
from compaction.formats.source import parse_text
from compaction.messages import INJECTED_KEY, content_text, is_injected, last_user_index, tool_calls
from compaction.provider_rules import errors, validate

CORPUS_NAME = "copilotcli-vibecodingtracker__test_conversation_copilot.jsonl"


def _event(kind: str, data: Any, n: int, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "data": data,
        "id": f"e{n}",
        "timestamp": f"2026-05-01T10:00:{n:02d}.000Z",
        "parentId": f"e{n - 1}" if n > 1 else None,
        **extra,
    }


def _jsonl(events: list[Any], tail: str = "") -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n" + tail


def test_corpus_session() -> None:
    path = corpus_file(CORPUS_NAME)
    lines = path.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "copilot-cli"

    requests = [
        r["toolCallId"]
        for e in events
        if e["type"] == "assistant.message"
        for r in e["data"].get("toolRequests") or []
    ]
    completes = [e["data"]["toolCallId"] for e in events if e["type"] == "tool.execution_complete"]
    assert len(requests) == len(completes) == 11
    calls = [c["id"] for m in annotated(conversation) for c in tool_calls(m)]
    assert calls == requests  # every call, in source order
    results = [m["tool_call_id"] for m in annotated(conversation) if m["role"] == "tool"]
    assert sorted(results) == sorted(completes)
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == set(requests)

    assistant_events = [e for e in events if e["type"] == "assistant.message"]
    assert roles(conversation).count("assistant") == len(assistant_events) == 6
    typed = [e for e in events if e["type"] == "user.message" and e["data"]["content"].strip()]
    own = [m for m in annotated(conversation) if m["role"] == "user" and not is_injected(m)]
    assert len(own) == len(typed) == 1
    # The CLI's text around the typed words (the time before, a reminder after): marked context.
    wrappers = [m for m in annotated(conversation) if m.get(INJECTED_KEY)]
    assert [m[INJECTED_KEY] for m in wrappers] == ["context", "context"]
    assert wrappers[0]["content"].startswith("<current_datetime>")
    assert wrappers[1]["content"].startswith("<reminder>")
    # One system prompt (the second system.message repeats it) plus the autopilot nudge, a
    # user.message with no typed text.
    prompts = {e["data"]["content"] for e in events if e["type"] == "system.message"}
    assert len(prompts) == 1
    assert annotated(conversation)[0] == {"role": "system", "content": prompts.pop()}
    assert roles(conversation).count("system") == 2
    assert len(annotated(conversation)) == 2 + 3 * len(typed) + len(assistant_events) + len(
        completes
    )
    assert set(roles(conversation)) <= {"system", "user", "assistant", "tool"}

    # The last real user request is exactly what the user typed; with the CLI's text around it,
    # it is everything the model was sent (but the whitespace at the seams).
    assert own[-1]["content"] == typed[-1]["data"]["content"].strip()
    sent = "\n\n".join([wrappers[0]["content"], own[-1]["content"], wrappers[1]["content"]])
    assert sent == typed[-1]["data"]["transformedContent"]
    assert last_user_index(annotated(conversation)) == annotated(conversation).index(own[-1])
    assert conversation.title is not None
    assert conversation.title.startswith(typed[0]["data"]["content"][:20])

    # Reasoning stays out of content.
    reasoned = [
        e["data"]["reasoningText"] for e in assistant_events if e["data"].get("reasoningText")
    ]
    assert [m["reasoning"] for m in annotated(conversation) if m.get("reasoning")] == reasoned
    assert not any(r[:40] in content_text(m) for r in reasoned for m in annotated(conversation))

    start = events[0]["data"]
    assert conversation.metadata["session_id"] == start["sessionId"]
    assert conversation.metadata["version"] == start["copilotVersion"] == "1.0.34"
    assert conversation.metadata["cwd"] == start["context"]["cwd"]
    assert conversation.metadata["model"] == "claude-sonnet-4.6"

    report = conversation.report
    assert report is not None
    assert report.records == len(lines) == 51
    assert report.imported + report.skipped_total == report.records
    kinds = {e["type"] for e in events}
    assert set(report.skipped) <= kinds
    assert report.skipped["assistant.turn_start"].count == sum(
        e["type"] == "assistant.turn_start" for e in events
    )
    assert report.skipped["tool.execution_start"].count == len(requests)
    assert report.skipped["system.message"].count == 1

    result = compaction.compress(
        annotated(conversation), compaction.CompactionConfig(context_length=32000)
    )
    for provider in ("openai", "anthropic"):
        assert errors(validate(result.messages, provider)) == []
    small = compaction.compress(
        annotated(conversation), compaction.CompactionConfig(context_length=8000)
    )
    for provider in ("openai", "anthropic"):
        assert errors(validate(small.messages, provider)) == []


def _handmade() -> str:
    events: list[Any] = [
        _event(
            "session.start",
            {
                "sessionId": "s-1",
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": "1.0.40",
                "context": {"cwd": "/repo", "branch": "main"},
            },
            1,
        ),
        _event("session.model_change", {"newModel": "gpt-5.2"}, 2),
        _event("system.message", {"role": "system", "content": "You are Copilot."}, 3),
        _event(
            "user.message",
            {
                "content": "Fix the failing test",
                "transformedContent": "<current_datetime>now</current_datetime>\n\n"
                "Fix the failing test",
                "attachments": [],
            },
            4,
        ),
        _event("assistant.turn_start", {"turnId": "0"}, 5),
        _event(
            "assistant.message",
            {
                "messageId": "m1",
                "content": "Let me look.",
                "reasoningText": "Check the tests first.",
                "reasoningOpaque": "b64==",
                "toolRequests": [
                    {"toolCallId": "c1", "name": "bash", "arguments": {"command": "pytest"}},
                    {"toolCallId": "c2", "name": "view", "arguments": {"path": "/repo/x.py"}},
                ],
            },
            6,
        ),
        _event("tool.execution_start", {"toolCallId": "c1", "toolName": "bash"}, 7),
        _event("tool.execution_start", {"toolCallId": "c2", "toolName": "view"}, 8),
        _event(
            "tool.execution_complete",
            {"toolCallId": "c2", "success": False, "error": {"message": "no such file"}},
            9,
        ),
        _event(
            "tool.execution_complete",
            {"toolCallId": "c1", "success": True, "result": {"content": "1 failed"}},
            10,
        ),
        _event("assistant.turn_end", {"turnId": "0"}, 11),
        _event("session.hologram_beamed", {"strength": 3}, 12),
        {"type": "user.message", "data": "not an object", "id": "e13"},
        _event(
            "assistant.message",
            {"messageId": "sub", "content": "sub-agent text", "toolRequests": []},
            14,
            agentId="agent-1",
        ),
        _event("assistant.message", {"messageId": "m2", "content": "Fixed it."}, 15),
    ]
    return _jsonl(events, tail='{"type": "assistant.mess')


def test_handmade_session() -> None:
    text = _handmade()
    conversation = load_conversation(text)
    assert conversation.format == "copilot-cli"
    assert roles(conversation) == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    time, user, call_turn = annotated(conversation)[1:4]
    assert time == {
        "role": "user",
        "content": "<current_datetime>now</current_datetime>",
        INJECTED_KEY: "context",
    }
    assert user == {"role": "user", "content": "Fix the failing test"}
    assert conversation.title == "Fix the failing test"
    assert call_turn["content"] == "Let me look."
    assert call_turn["reasoning"] == "Check the tests first."
    assert [c["function"]["name"] for c in tool_calls(call_turn)] == ["bash", "view"]
    assert json.loads(tool_calls(call_turn)[0]["function"]["arguments"]) == {"command": "pytest"}
    # Results follow their calls in call order, though c2 completed first.
    assert [m["tool_call_id"] for m in annotated(conversation)[4:6]] == ["c1", "c2"]
    assert annotated(conversation)[4]["content"] == "1 failed"
    assert "Error: no such file" in annotated(conversation)[5]["content"]
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == {"c1", "c2"}
    assert annotated(conversation)[-1]["content"] == "Fixed it."
    assert conversation.metadata["session_id"] == "s-1"
    assert conversation.metadata["version"] == "1.0.40"
    assert conversation.metadata["cwd"] == "/repo"
    assert conversation.metadata["model"] == "gpt-5.2"

    report = conversation.report
    assert report is not None
    assert report.records == len(text.splitlines()) == 16
    assert report.imported + report.skipped_total == report.records
    assert report.skipped["assistant.turn_start"].reason == "turn marker, not conversation"
    assert report.skipped["session.hologram_beamed"].lines == [12]
    assert report.skipped["malformed"].lines == [13]
    assert report.skipped["assistant.message (sub-agent)"].lines == [14]
    assert report.skipped["unreadable line"].lines == [16]
    warnings = "\n".join(conversation.warnings)
    assert "line 13" in warnings and "malformed" in warnings
    assert "line 12" in warnings and "session.hologram_beamed" in warnings
    assert "line 16" in warnings
    assert "line 6" in warnings and "encrypted reasoning" in warnings
    assert "line 14: 1 sub-agent event(s) left out" in warnings


def test_cut_off_session_and_compaction() -> None:
    events = [
        _event("session.start", {"sessionId": "s-2", "copilotVersion": "1.0.41"}, 1),
        _event("user.message", {"content": "Refactor the parser"}, 2),
        _event(
            "assistant.message",
            {
                "messageId": "m1",
                "content": "",
                "toolRequests": [{"toolCallId": "a", "name": "bash", "arguments": "ls -la"}],
            },
            3,
        ),
        _event("tool.execution_complete", {"toolCallId": "zzz", "success": True}, 4),
        _event(
            "session.compaction_complete",
            {
                "success": True,
                "trigger": "threshold",
                "preCompactionTokens": 150000,
                "summaryContent": "Summary: the user wants the parser refactored.",
            },
            5,
        ),
        _event("user.message", {"content": "", "transformedContent": "Keep working."}, 6),
        _event("assistant.message", {"messageId": "m2", "content": "Continuing."}, 7),
    ]
    conversation = load_conversation(_jsonl(events))
    assert roles(conversation) == ["user", "assistant", "user", "system", "assistant"]
    # A custom tool's raw text arguments become a JSON object.
    call = tool_calls(annotated(conversation)[1])[0]
    assert json.loads(call["function"]["arguments"]) == {"input": "ls -la"}
    (compacted,) = conversation.compactions
    assert compacted.position == 2 and compacted.trigger == "auto"
    assert compacted.tokens_before == 150000 and compacted.line == 5
    assert annotated(conversation)[2]["content"] == compacted.summary
    warnings = "\n".join(conversation.warnings)
    assert "line 4" in warnings  # the result of a call never made
    assert "no tool.execution_complete result" in warnings and "a" in warnings
    assert "autopilot" in warnings
    report = conversation.report
    assert report is not None and report.imported + report.skipped_total == report.records == 7


def test_sniff_is_content_based_and_leaves_other_formats_alone() -> None:
    document = parse_text(_handmade())
    assert copilot_cli.sniff(document)[0]
    for path in sorted(Path(DATA).glob("*")):
        if path.name.startswith("copilot-"):
            continue
        if path.suffix in (".json", ".jsonl"):
            assert not copilot_cli.sniff(parse_text(path.read_text()))[0], path.name
    matched, reason = copilot_cli.sniff(parse_text('{"type": "message", "role": "user"}\n'))
    assert not matched and reason
