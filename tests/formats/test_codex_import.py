"""The Codex rollout importer on the real rollouts in ../shared/corpus and on hand-written ones.

Expected numbers come from reading the raw records with plain json, not from the importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_helpers import assert_paired, corpus_file, roles

import compaction
from compaction.formats import detect_format, load_conversation
from compaction.messages import content_text, tool_calls
from compaction.provider_rules.problems import errors

FORKED = "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl"
DESKTOP = "codex-empireofbits__codex-session.jsonl"
CANONICAL = {"system", "user", "assistant", "tool"}
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _text(payload: dict[str, Any]) -> str:
    return "\n".join(part["text"] for part in payload["content"] if "text" in part)


def _expected_roles(records: list[dict[str, Any]]) -> list[str]:
    """The roles the rollout's items should become: base instructions and developer messages
    before the conversation as one system message, a run of calls (with the assistant message
    before it) as one assistant turn, each output a tool message."""
    expected = ["system"]
    previous = None
    for record in records:
        if record["type"] != "response_item":
            continue
        payload = record["payload"]
        item = payload["type"]
        if item == "message" and payload["role"] == "developer":
            if any(role != "system" for role in expected):
                expected.append("system")
            previous = "developer"
        elif item == "message":
            expected.append(payload["role"])
            previous = payload["role"]
        elif item in CALLS:
            if previous not in ("assistant", "call"):
                expected.append("assistant")
            previous = "call"
        elif item in OUTPUTS:
            expected.append("tool")
            previous = "tool"
    return expected


def _assert_compresses_validly(messages: list[dict[str, Any]]) -> None:
    result = compaction.compress(messages, compaction.CompactionConfig(context_length=32000))
    for provider in ("openai", "anthropic"):
        assert errors(compaction.validate(result.messages, provider)) == [], provider


def _assert_report_complete(conversation: Any, line_count: int) -> None:
    report = conversation.report
    assert report is not None
    assert report.records == line_count
    assert report.imported + report.skipped_total == report.records
    assert all(entry.reason for entry in report.skipped.values())


# -- the forked subagent thread (Codex CLI 0.114) --------------------------------------------


def test_forked_subagent_thread_imports_only_its_own_part() -> None:
    path = corpus_file(FORKED)
    records = _records(path)
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "codex"
    own_meta, parent_meta = records[0]["payload"], records[1]["payload"]
    assert own_meta["forked_from_id"] == parent_meta["id"]
    # The replay ends with the synthetic output of the spawn_agent call that created this
    # thread; the task it handed over is the thread's first real user message.
    spawn_output = next(
        index
        for index, r in enumerate(records)
        if r["payload"].get("type") == "function_call_output"
        and r["payload"]["output"].startswith("You are the newly spawned agent")
    )
    spawn_call = next(
        r["payload"]
        for r in records
        if r["payload"].get("call_id") == records[spawn_output]["payload"]["call_id"]
        and r["payload"].get("type") == "function_call"
    )
    task = json.loads(spawn_call["arguments"])["message"]
    own = records[spawn_output + 1 :]
    replayed = len(records[1 : spawn_output + 1])  # the parent's meta .. the spawn output
    assert replayed == 556

    report = conversation.report
    assert report is not None
    _assert_report_complete(conversation, len(records))
    assert report.skipped["replayed parent history"].count == replayed
    assert report.skipped["replayed parent history"].lines[:2] == [2, 3]
    assert any("556 record(s) of the parent thread's history" in w for w in conversation.warnings)

    assert set(roles(conversation)) <= CANONICAL
    assert roles(conversation) == _expected_roles(own)
    items = [r["payload"] for r in own if r["type"] == "response_item"]
    calls = [p["call_id"] for p in items if p["type"] in CALLS]
    results = [p["call_id"] for p in items if p["type"] in OUTPUTS]
    assert [c["id"] for m in conversation.messages for c in tool_calls(m)] == calls
    assert [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"] == results
    assert (len(calls), len(results)) == (47, 47)
    defined, answered = assert_paired(conversation.messages)
    assert defined == answered

    # System: the thread's own base instructions plus its own permissions (developer) message.
    system = conversation.messages[0]
    assert system["content"].startswith(own_meta["base_instructions"]["text"])
    assert _text(own[0]["payload"]) in system["content"]
    users = [m for m in conversation.messages if m["role"] == "user"]
    own_users = [p for p in items if p["type"] == "message" and p["role"] == "user"]
    assert [content_text(m) for m in users] == [_text(p) for p in own_users]
    assert content_text(users[1]) == task  # the handed-over task, after its AGENTS.md context
    assert content_text(users[-1]) == _text(own_users[-1])  # the last real request
    assert conversation.title is not None and conversation.title.startswith("Implement Batch 2")
    parent_texts = {
        _text(r["payload"])
        for r in records[2:spawn_output]
        if r["payload"].get("type") == "message"
        and r["payload"]["role"] == "user"
        and not _text(r["payload"]).startswith("# AGENTS.md")
    }
    assert not parent_texts & {content_text(m) for m in users}

    metadata = conversation.metadata
    assert metadata["session_id"] == own_meta["id"]
    assert metadata["forked_from_id"] == parent_meta["id"]
    assert (metadata["agent_nickname"], metadata["agent_role"]) == ("Kepler", "worker")
    assert (metadata["model"], metadata["cli_version"]) == ("gpt-5.4", "0.114.0")
    assert metadata["originator"] == "codex_cli_rs"
    assert metadata["cwd"] == own_meta["cwd"]

    # Encrypted reasoning never becomes text; it is counted.
    encrypted = [p for p in items if p["type"] == "reasoning" and not p["summary"]]
    assert report.skipped["response_item/reasoning (encrypted)"].count == len(encrypted)
    assert not any("gAAAA" in content_text(m) for m in conversation.messages)
    _assert_compresses_validly(conversation.messages)


def test_forked_thread_records_codex_compaction() -> None:
    path = corpus_file(FORKED)
    records = _records(path)
    conversation = load_conversation(path)
    index = next(i for i, r in enumerate(records) if r["type"] == "compacted")
    line = index + 1
    assert records[index]["payload"]["message"] == ""
    assert records[index]["payload"]["replacement_history"][-1]["type"] == "compaction"
    token_counts = [
        r["payload"]["info"]
        for r in records[:index]
        if r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ]
    start = next(
        i
        for i, r in enumerate(records)
        if r["payload"].get("type") == "function_call_output"
        and r["payload"]["output"].startswith("You are the newly spawned agent")
    )
    before = _expected_roles(records[start + 1 : index])

    assert len(conversation.compactions) == 1
    recorded = conversation.compactions[0]
    assert recorded.agent == "codex"
    assert recorded.line == line == 620
    assert recorded.position == len(before)
    assert recorded.tokens_before == token_counts[-1]["last_token_usage"]["input_tokens"] == 227252
    assert recorded.summary is None
    assert recorded.trigger == "auto"
    # The compacted context begins with the user message that follows the record.
    after = next(
        r["payload"]
        for r in records[index:]
        if r["payload"].get("type") == "message" and r["payload"]["role"] == "user"
    )
    assert content_text(conversation.messages[recorded.position]) == _text(after)
    # The agent's own compaction is what the session holds, not a warning (issue 33).
    assert not any("compacted" in w for w in conversation.warnings)
    assert conversation.compaction_lines()[0].endswith(f"summary encrypted, line {line}")
    report = conversation.report
    assert report is not None
    assert report.skipped["compacted"].lines == [line]
    assert report.skipped["event_msg/context_compacted"].count == 1


# -- Codex Desktop 0.122 ---------------------------------------------------------------------


def test_desktop_session_merges_developer_parts_into_the_system_prompt() -> None:
    path = corpus_file(DESKTOP)
    records = _records(path)
    conversation = load_conversation(path)
    assert conversation.format == "codex"
    _assert_report_complete(conversation, len(records))
    assert set(roles(conversation)) <= CANONICAL
    assert roles(conversation) == _expected_roles(records)
    meta = records[0]["payload"]
    developer = [
        r["payload"]
        for r in records
        if r["payload"].get("type") == "message" and r["payload"]["role"] == "developer"
    ]
    assert len(developer) == 1 and len(developer[0]["content"]) == 5
    system = [m for m in conversation.messages if m["role"] == "system"]
    assert len(system) == 1 and conversation.messages[0] is system[0]
    assert system[0]["content"].startswith(meta["base_instructions"]["text"])
    for part in developer[0]["content"]:
        assert part["text"] in system[0]["content"]

    items = [r["payload"] for r in records if r["type"] == "response_item"]
    calls = [p["call_id"] for p in items if p["type"] in CALLS]
    results = [p["call_id"] for p in items if p["type"] in OUTPUTS]
    assert (len(calls), len(results)) == (20, 19)
    assert [c["id"] for m in conversation.messages for c in tool_calls(m)] == calls
    assert [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"] == results
    defined, answered = assert_paired(conversation.messages)
    assert defined - answered == {calls[-1]}  # the session ends on a call with no output

    user_items = [p for p in items if p["type"] == "message" and p["role"] == "user"]
    users = [m for m in conversation.messages if m["role"] == "user"]
    assert [content_text(m) for m in users] == [_text(p) for p in user_items]
    assert content_text(users[-1]) == _text(user_items[-1])
    assert conversation.title == _text(user_items[-1]).splitlines()[0].strip()[:80]

    report = conversation.report
    assert report is not None
    events: dict[str, int] = {}
    for r in records:
        if r["type"] == "event_msg":
            key = f"event_msg/{r['payload']['type']}"
            events[key] = events.get(key, 0) + 1
    for kind, count in events.items():
        assert report.skipped[kind].count == count, kind
    assert report.skipped["event_msg/exec_command_end"].count == 18
    assert conversation.compactions == []

    metadata = conversation.metadata
    assert metadata["originator"] == "Codex Desktop"
    assert metadata["cli_version"] == meta["cli_version"]
    assert metadata["session_id"] == meta["id"]
    assert metadata["model"] == "gpt-5.4"
    assert [t["function"]["name"] for t in conversation.tools] == [
        t["name"] for t in meta["dynamic_tools"]
    ]
    _assert_compresses_validly(conversation.messages)


# -- hand-written rollouts -------------------------------------------------------------------


def _rollout(*records: dict[str, Any]) -> str:
    return "\n".join(json.dumps(record) for record in records) + "\n"


def _line(
    kind: str, payload: dict[str, Any], at: str = "2026-01-01T10:00:00.000Z"
) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def _meta(**extra: Any) -> dict[str, Any]:
    return _line(
        "session_meta",
        {
            "id": "sess",
            "cwd": "/repo",
            "originator": "codex_cli_rs",
            "cli_version": "0.114.0",
            "base_instructions": {"text": "You are Codex."},
            **extra,
        },
    )


def _msg(role: str, *texts: str, at: str = "2026-01-01T10:00:00.000Z") -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    content = [{"type": kind, "text": text} for text in texts]
    return _line("response_item", {"type": "message", "role": role, "content": content}, at)


def _fn(call_id: str, name: str = "exec_command", **arguments: Any) -> dict[str, Any]:
    return _line(
        "response_item",
        {
            "type": "function_call",
            "name": name,
            "arguments": json.dumps(arguments),
            "call_id": call_id,
        },
    )


def _out(call_id: str, output: Any, kind: str = "function_call_output") -> dict[str, Any]:
    return _line("response_item", {"type": kind, "call_id": call_id, "output": output})


def test_developer_messages_become_system_content() -> None:
    text = _rollout(
        _meta(),
        _msg(
            "developer",
            "<permissions instructions>sandboxed</permissions instructions>",
            "<collaboration_mode>Default</collaboration_mode>",
        ),
        _msg("user", "<environment_context><cwd>/repo</cwd></environment_context>"),
        _msg("user", "Fix the bug."),
        _msg("assistant", "Done."),
        _msg("developer", "<collaboration_mode>Plan Mode</collaboration_mode>"),
        _msg("user", "Now plan the next step."),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "user", "assistant", "system", "user"]
    assert conversation.messages[0]["content"] == (
        "You are Codex.\n\n<permissions instructions>sandboxed</permissions instructions>\n\n"
        "<collaboration_mode>Default</collaboration_mode>"
    )
    assert (
        conversation.messages[4]["content"] == "<collaboration_mode>Plan Mode</collaboration_mode>"
    )
    assert conversation.title == "Fix the bug."
    assert conversation.report is not None
    assert conversation.report.imported == 7 and conversation.report.skipped_total == 0


def test_a_developer_message_without_base_instructions_is_the_system_prompt() -> None:
    meta = _meta()
    del meta["payload"]["base_instructions"]
    conversation = load_conversation(
        _rollout(meta, _msg("developer", "Be brief."), _msg("user", "hi"))
    )
    assert roles(conversation) == ["system", "user"]
    assert conversation.messages[0]["content"] == "Be brief."
    assert conversation.report is not None
    assert conversation.report.skipped["session_meta"].count == 1


def test_tool_outputs_become_their_text() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"
    text = _rollout(
        _meta(),
        _msg(
            "user",
            "# Context from my IDE setup:\n\n## Open tabs:\n- a.py\n\n"
            "## My request for Codex:\nRead the file and patch it",
        ),
        _fn("c1", cmd="cat a.py"),
        _fn("c2", name="shell", command=["ls"]),
        _line(
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": patch,
                "call_id": "c3",
                "status": "completed",
            },
        ),
        _line(
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "c4",
                "status": "completed",
                "action": {"type": "exec", "command": ["pwd"]},
            },
        ),
        _out(
            "c1",
            [
                {"type": "input_text", "text": "line one"},
                {"type": "input_text", "text": "line two"},
            ],
        ),
        _out("c2", {"content": [{"type": "output_text", "text": "a.py"}], "success": True}),
        _out(
            "c3",
            json.dumps(
                {
                    "output": "Success. Updated the following files:\nA a.txt\n",
                    "metadata": {"exit_code": 0, "duration_seconds": 0.2},
                }
            ),
            kind="custom_tool_call_output",
        ),
        _out("c4", "/repo"),
        _msg("assistant", "Patched."),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == [
        "system",
        "user",  # the IDE's context, marked
        "user",  # the user's request under it
        "assistant",
        "tool",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    assert conversation.messages[2] == {"role": "user", "content": "Read the file and patch it"}
    calls = conversation.messages[3]["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "c2", "c3", "c4"]
    assert [c["function"]["name"] for c in calls] == [
        "exec_command",
        "shell",
        "apply_patch",
        "local_shell",
    ]
    assert json.loads(calls[2]["function"]["arguments"]) == {"input": patch}
    contents = [m["content"] for m in conversation.messages if m["role"] == "tool"]
    assert contents == [
        "line one\nline two",
        "a.py",
        "Exit code: 0 · Duration: 0.2s\nSuccess. Updated the following files:\nA a.txt\n",
        "/repo",
    ]
    assert conversation.title == "Read the file and patch it"
    defined, answered = assert_paired(conversation.messages)
    assert defined == answered


def test_an_output_after_an_interleaved_item_still_follows_its_call() -> None:
    text = _rollout(
        _meta(),
        _msg("user", "go"),
        _fn("a"),
        _fn("b"),
        _out("a", "A"),
        _msg("assistant", "waiting for b"),
        _out("b", "B"),
        _out("zzz", "orphan"),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m.get("tool_call_id") for m in conversation.messages[3:5]] == ["a", "b"]
    assert_paired(conversation.messages)
    assert conversation.report is not None
    assert conversation.report.skipped["response_item/function_call_output"].lines == [8]


def _forked(parent_task_call: bool) -> str:
    fork = "2026-01-01T10:00:00.100Z"
    own_meta = _meta(
        id="child",
        forked_from_id="parent",
        agent_nickname="Ada",
        agent_role="worker",
        source={
            "subagent": {
                "thread_spawn": {
                    "parent_thread_id": "parent",
                    "depth": 1,
                    "agent_nickname": "Ada",
                    "agent_role": "worker",
                }
            }
        },
    )
    own_meta["timestamp"] = fork
    parent_meta = _line(
        "session_meta",
        {"id": "parent", "cwd": "/repo", "base_instructions": {"text": "You are Codex."}},
        fork,
    )
    task = "Write the tests for parser.py in your forked workspace."
    replay = [
        parent_meta,
        _msg("developer", "<permissions instructions>parent</permissions instructions>", at=fork),
        _line("event_msg", {"type": "task_started", "turn_id": "t1"}, fork),
        _line("turn_context", {"turn_id": "t1", "model": "gpt-5.4"}, fork),
        _msg("user", "Parent request: improve coverage", at=fork),
        _msg("assistant", "I will spawn a worker.", at=fork),
    ]
    if parent_task_call:
        spawn = _fn("spawn1", name="spawn_agent", message=task, fork_context=True)
        spawn["timestamp"] = fork
        replay += [spawn, {**_out("spawn1", "You are the newly spawned agent."), "timestamp": fork}]
    later = "2026-01-01T10:00:02.000Z"
    own = [
        _msg("developer", "<permissions instructions>child</permissions instructions>", at=fork),
        _line("event_msg", {"type": "task_started", "turn_id": "t2"}, later),
        _line("turn_context", {"turn_id": "t2", "model": "gpt-5.4"}, later),
        _msg("user", task, at=later),
        _msg("assistant", "Tests written.", at=later),
    ]
    return _rollout(own_meta, *replay, *own)


def test_forked_thread_skips_the_replayed_parent_history() -> None:
    for with_spawn_call, replayed in ((True, 8), (False, 6)):
        conversation = load_conversation(_forked(with_spawn_call))
        assert roles(conversation) == ["system", "user", "assistant"], with_spawn_call
        system, user, assistant = conversation.messages
        assert system["content"] == (
            "You are Codex.\n\n<permissions instructions>child</permissions instructions>"
        )
        assert user["content"].startswith("Write the tests")
        assert assistant["content"] == "Tests written."
        report = conversation.report
        assert report is not None
        assert report.skipped["replayed parent history"].count == replayed
        assert report.skipped["replayed parent history"].lines[0] == 2
        assert report.imported + report.skipped_total == report.records == replayed + 6
        assert conversation.metadata["forked_from_id"] == "parent"
        assert conversation.metadata["agent_nickname"] == "Ada"
        assert conversation.metadata["session_id"] == "child"


def test_a_thread_forked_from_a_forked_thread_skips_the_whole_replay() -> None:
    # The parent was itself a forked subagent: its replayed part holds its own handed-over task.
    text = _forked(True)
    lines = text.splitlines()
    handed = _fn("spawn0", name="spawn_agent", message="Parent task: coordinate the batches.")
    inserted = [
        json.dumps(handed),
        json.dumps(_msg("user", "Parent task: coordinate the batches.")),
    ]
    text = "\n".join([*lines[:2], *inserted, *lines[2:]]) + "\n"
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "assistant"]
    assert conversation.messages[1]["content"].startswith("Write the tests")
    assert conversation.report is not None
    assert conversation.report.skipped["replayed parent history"].count == 10


def test_compacted_record_is_recorded_where_the_compacted_context_begins() -> None:
    usage = {"input_tokens": 5000, "output_tokens": 40, "total_tokens": 5040}
    compacted = _line(
        "compacted",
        {
            "message": "",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "go"}],
                },
                {"type": "compaction", "encrypted_content": "gAAAAB-opaque"},
            ],
        },
    )
    text = _rollout(
        _meta(),
        _msg("user", "go"),
        _fn("a"),
        _out("a", "A"),
        _line(
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": 90000}, "last_token_usage": usage},
            },
        ),
        compacted,
        _line("event_msg", {"type": "context_compacted"}),
        _msg("user", "continue"),
        _msg("assistant", "ok"),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "assistant", "tool", "user", "assistant"]
    [recorded] = conversation.compactions
    assert (recorded.position, recorded.agent, recorded.trigger) == (4, "codex", "auto")
    assert (recorded.tokens_before, recorded.summary, recorded.line) == (5000, None, 6)
    assert not any("compacted" in w for w in conversation.warnings)  # a note, not a warning
    assert not any("gAAAAB" in content_text(m) for m in conversation.messages)
    report = conversation.report
    assert report is not None
    assert report.skipped["compacted"].lines == [6]
    assert report.skipped["event_msg/context_compacted"].lines == [7]
    assert report.imported + report.skipped_total == report.records == 9


def test_a_readable_compaction_summary_and_a_compact_turn_of_its_own() -> None:
    text = _rollout(
        _meta(),
        _msg("user", "go"),
        _msg("assistant", "done"),
        _line("event_msg", {"type": "task_started", "turn_id": "t2"}),
        _line("compacted", {"message": "Summary: the user asked to go; it is done."}),
        _line("event_msg", {"type": "context_compacted"}),
        _line("event_msg", {"type": "task_complete", "turn_id": "t2"}),
        _msg("user", "next"),
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "assistant", "user", "user"]
    [recorded] = conversation.compactions
    assert recorded.position == 3 and recorded.trigger == "manual"
    assert recorded.summary == "Summary: the user asked to go; it is done."
    assert conversation.messages[3]["content"] == recorded.summary
    assert recorded.tokens_before is None  # no token_count before it
    assert conversation.report is not None
    assert conversation.report.imported + conversation.report.skipped_total == 8


def test_an_early_rollout_without_the_envelope() -> None:
    text = _rollout(
        {"id": "old-1", "timestamp": "2025-05-01T10:00:00Z", "instructions": "Be careful."},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": '{"output":"a.txt\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}',
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "One file."}],
        },
    )
    assert detect_format(text).name == "codex"
    conversation = load_conversation(text)
    assert roles(conversation) == ["system", "user", "assistant", "tool", "assistant"]
    assert conversation.messages[0]["content"] == "Be careful."
    assert conversation.messages[3]["content"] == "Exit code: 0 · Duration: 0.1s\na.txt\n"
    assert conversation.metadata["session_id"] == "old-1"
    report = conversation.report
    assert report is not None
    assert report.skipped["record_type/state"].lines == [2]
    assert report.imported + report.skipped_total == report.records == 6
