"""The Gemini CLI importer on the real recordings in ../shared/corpus and on hand-written ones.

Expected numbers come from reading the raw records with plain json, not from the importer.
"""

from __future__ import annotations

import json
from typing import Any

from format_helpers import DATA, assert_paired, corpus_file, roles

import compaction
from compaction.formats import detect_format, load_conversation
from compaction.messages import content_text, tool_calls
from compaction.provider_rules.problems import errors

JSONL = "gemini-vibecodingtracker__test_conversation_gemini.jsonl"
JSON = "gemini-vibecodingtracker__test_conversation_gemini.json"
CANONICAL = {"system", "user", "assistant", "tool"}


def _parts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if "text" in part)


def _assert_compresses_validly(messages: list[dict[str, Any]]) -> None:
    result = compaction.compress(messages, compaction.CompactionConfig(context_length=32000))
    for provider in ("openai", "anthropic"):
        assert errors(compaction.validate(result.messages, provider)) == [], provider


def _assert_thread(conversation: Any, thread: list[dict[str, Any]]) -> None:
    """The conversation holds exactly the thread's user/gemini messages, calls and results."""
    users = [m for m in thread if m["type"] == "user"]
    geminis = [m for m in thread if m["type"] == "gemini"]
    calls = [c["id"] for m in geminis for c in m.get("toolCalls") or []]
    results = [c["id"] for m in geminis for c in m.get("toolCalls") or [] if c.get("result")]
    assert set(roles(conversation)) <= CANONICAL
    assert roles(conversation).count("user") == len(users)
    assert roles(conversation).count("assistant") == len(geminis)
    assert [c["id"] for m in conversation.messages for c in tool_calls(m)] == calls
    assert [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"] == results
    assert len(conversation.messages) == len(users) + len(geminis) + len(results)
    defined, answered = assert_paired(conversation.messages)
    assert defined == answered == set(calls)
    last_user = [m for m in conversation.messages if m["role"] == "user"][-1]
    assert content_text(last_user) == _parts(users[-1]["content"])
    # Each embedded result is the tool message's text.
    outputs = {
        c["id"]: c["result"][0]["functionResponse"]["response"]["output"]
        for m in geminis
        for c in m.get("toolCalls") or []
        if c.get("result")
    }
    for message in conversation.messages:
        if message["role"] == "tool":
            assert message["content"] == outputs[message["tool_call_id"]]


def test_jsonl_recording_keeps_the_last_version_of_each_message() -> None:
    path = corpus_file(JSONL)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "gemini-cli"
    header, records = lines[0], lines[1:]
    assert "sessionId" in header and "type" not in header
    messages = [r for r in records if "id" in r]
    updates = [r for r in records if "$set" in r]
    last: dict[str, dict[str, Any]] = {}
    for record in messages:
        last[record["id"]] = record  # the recorder rewrites a message under the same id
    order = list(dict.fromkeys(r["id"] for r in messages))
    thread = [last[i] for i in order if last[i]["type"] in ("user", "gemini")]
    notices = [last[i] for i in order if last[i]["type"] not in ("user", "gemini")]
    rewritten = len(messages) - len(order)
    assert (len(lines), len(updates), rewritten, len(notices)) == (28, 11, 5, 2)
    _assert_thread(conversation, thread)
    assert len([c for m in thread for c in m.get("toolCalls") or []]) == 12

    report = conversation.report
    assert report is not None
    assert report.records == len(lines)
    assert report.imported + report.skipped_total == report.records
    assert report.imported == len(thread)
    assert report.skipped["metadata update"].count == len(updates)
    assert report.skipped["superseded message version"].count == rewritten
    assert report.skipped["info"].count == len(notices)
    assert report.skipped["session header"].lines == [1]
    assert conversation.metadata["lastUpdated"] == updates[-1]["$set"]["lastUpdated"]
    assert conversation.metadata["sessionId"] == header["sessionId"]
    assert conversation.metadata["models"] == list(
        dict.fromkeys(m["model"] for m in thread if m.get("model"))
    )
    # Thoughts go to `reasoning`, never into the content.
    with_thoughts = [m for m in thread if m["type"] == "gemini" and m.get("thoughts")]
    assert sum(1 for m in conversation.messages if m.get("reasoning")) == len(with_thoughts)
    assert conversation.title == _parts(thread[0]["displayContent"])  # "/init", as typed
    assert conversation.compactions == []
    _assert_compresses_validly(conversation.messages)


def test_json_recording_imports_every_call_and_result() -> None:
    path = corpus_file(JSON)
    value = json.loads(path.read_text())
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "gemini-cli"
    _assert_thread(conversation, value["messages"])
    assert len([c for m in value["messages"] for c in m.get("toolCalls") or []]) == 7
    assert len(conversation.messages) == 11
    report = conversation.report
    assert report is not None
    assert (report.records, report.imported, report.skipped_total) == (4, 4, 0)
    assert conversation.metadata["model"] == value["messages"][1]["model"]
    assert conversation.metadata["kind"] == value["kind"]
    thoughts = value["messages"][2]["thoughts"]
    assert conversation.messages[5]["reasoning"].startswith(thoughts[0]["subject"])
    _assert_compresses_validly(conversation.messages)


# -- hand-written recordings -----------------------------------------------------------------

T = "2026-04-23T12:00:00.000Z"
HEADER = {"sessionId": "s-1", "projectHash": "p", "startTime": T, "lastUpdated": T, "kind": "main"}


def _jsonl(*records: Any) -> str:
    return "\n".join(json.dumps(record) for record in records) + "\n"


def _m(id_: str, type_: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "timestamp": T, "type": type_, "content": content, **extra}


def _call(call_id: str, output: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {
        "id": call_id,
        "name": "run_shell_command",
        "args": {"command": "ls"},
        "status": "executing" if output is None else "success",
    }
    if output is not None:
        call["result"] = [
            {
                "functionResponse": {
                    "id": call_id,
                    "name": "run_shell_command",
                    "response": {"output": output},
                }
            }
        ]
    return call


def test_handmade_jsonl_with_updates_rewrites_and_a_notice() -> None:
    text = _jsonl(
        HEADER,
        _m("i0", "info", "Empty GEMINI.md created."),
        {"$set": {"lastUpdated": "2026-04-23T12:00:01.000Z"}},
        _m("u1", "user", [{"text": "List the files."}], displayContent=[{"text": "ls please"}]),
        _m(
            "g1",
            "gemini",
            "",
            thoughts=[{"subject": "Plan", "description": "Run ls."}],
            toolCalls=[_call("c1")],
        ),
        {"$set": {"lastUpdated": "2026-04-23T12:00:02.000Z"}},
        _m(
            "g1",
            "gemini",
            "",
            thoughts=[{"subject": "Plan", "description": "Run ls."}],
            toolCalls=[_call("c1", "a.txt\nb.txt")],
            model="gemini-3-flash-preview",
        ),
        _m("g2", "gemini", "Two files."),
        _m("w1", "warning", "Slow response."),
        _m("u2", "user", [{"text": "Thanks."}]),
        {"$set": {"lastUpdated": "2026-04-23T12:00:09.000Z", "summary": "Listing files"}},
    )
    assert detect_format(text).name == "gemini-cli"
    conversation = load_conversation(text)
    assert roles(conversation) == ["user", "assistant", "tool", "assistant", "user"]
    assert conversation.messages[1]["reasoning"] == "Plan: Run ls."
    assert conversation.messages[1]["content"] is None
    assert conversation.messages[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "a.txt\nb.txt",
    }
    assert conversation.title == "ls please"
    assert conversation.metadata["lastUpdated"] == "2026-04-23T12:00:09.000Z"
    assert conversation.metadata["summary"] == "Listing files"
    assert conversation.metadata["model"] == "gemini-3-flash-preview"
    assert_paired(conversation.messages)
    report = conversation.report
    assert report is not None
    assert report.records == 11 and report.imported == 4
    assert report.skipped["metadata update"].lines == [3, 6, 11]
    assert report.skipped["superseded message version"].lines == [5]
    assert report.skipped["info"].lines == [2]
    assert report.skipped["warning"].lines == [9]
    assert report.imported + report.skipped_total == report.records


def test_handmade_compression_is_recorded_with_its_snapshot() -> None:
    snapshot = "<state_snapshot>\n<overall_goal>List the files.</overall_goal>\n</state_snapshot>"
    text = _jsonl(
        HEADER,
        _m("u1", "user", [{"text": "List the files."}]),
        _m("g1", "gemini", "Two files.", tokens={"input": 7000, "output": 10, "total": 7010}),
        _m("i1", "info", "Chat history compressed from 9,000 to 1,200 tokens."),
        {
            "$set": {
                "messages": [
                    _m("x1", "user", [{"text": snapshot}]),
                    _m("x2", "gemini", [{"text": "Got it. Thanks for the additional context!"}]),
                ]
            }
        },
        _m("u2", "user", [{"text": "Now count them."}]),
        _m("g2", "gemini", "2"),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["user", "assistant", "user", "user", "assistant"]
    [recorded] = conversation.compactions
    assert (recorded.position, recorded.agent, recorded.line) == (2, "gemini-cli", 4)
    assert (recorded.tokens_before, recorded.summary) == (9000, snapshot)
    assert conversation.messages[2]["content"] == snapshot
    assert "Got it" not in json.dumps(conversation.messages)
    assert any("line 4: Gemini CLI compressed the chat here" in w for w in conversation.warnings)
    report = conversation.report
    assert report is not None
    assert report.imported + report.skipped_total == report.records == 7
    assert report.skipped["info"].lines == [4]


def test_handmade_rewind_drops_the_rewound_messages() -> None:
    text = _jsonl(
        HEADER,
        _m("u1", "user", [{"text": "keep"}]),
        _m("g1", "gemini", "kept"),
        _m("u2", "user", [{"text": "rewound"}]),
        _m("g2", "gemini", "rewound answer"),
        {"$rewindTo": "u2"},
        {"$rewindTo": "nope"},
        _m("u3", "user", [{"text": "after"}]),
    )
    conversation = load_conversation(text)
    assert [content_text(m) for m in conversation.messages] == ["keep", "kept", "after"]
    report = conversation.report
    assert report is not None
    assert report.skipped["rewound message"].lines == [4, 5]
    assert report.skipped["rewind"].lines == [6, 7]
    assert report.imported + report.skipped_total == report.records == 8


def test_a_user_state_snapshot_in_a_json_recording_is_a_compaction() -> None:
    snapshot = "<state_snapshot>\n<overall_goal>Fix CI.</overall_goal>\n</state_snapshot>"
    value = {
        "sessionId": "s-2",
        "projectHash": "p",
        "startTime": T,
        "lastUpdated": T,
        "messages": [
            _m("u0", "user", snapshot),
            _m("g0", "gemini", "Got it. Thanks for the additional context!"),
            _m("u1", "user", [{"text": "Continue fixing CI."}]),
            _m("g1", "gemini", "Done."),
        ],
    }
    conversation = load_conversation(json.dumps(value))
    assert roles(conversation) == ["user", "assistant", "user", "assistant"]
    [recorded] = conversation.compactions
    assert (recorded.position, recorded.summary, recorded.agent) == (0, snapshot, "gemini-cli")
    assert conversation.title == "Continue fixing CI."


def test_stream_json_still_detected_and_reported() -> None:
    path = DATA / "gemini_stream.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    conversation = load_conversation(path)
    assert detect_format(path).reason.endswith("(init/message/tool_use/tool_result/result)")
    report = conversation.report
    assert report is not None
    assert report.records == len(events)
    assert report.skipped["init"].count == sum(1 for e in events if e["type"] == "init")
    assert report.imported + report.skipped_total == report.records
