"""Claude Code 2.x sessions: every record kind of OBSERVED_FORMATS.md section 1, by hand and real.

The hand-written sessions are minimal: each holds one record kind that broke the old chain walk
(an attachment or a progress record inside the chain, a compact boundary, a split response, a
fork, subagents). The corpus checks compute what each file holds with plain `json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from format_helpers import CORPUS, assert_paired, corpus_file, roles

from compaction import CompactionConfig, compress, validate
from compaction.formats import load_conversation, load_conversations
from compaction.messages import content_text, tool_calls

SESSION = "0000aaaa-1111-2222-3333-444455556666"


class Session:
    """Builds a session's records, each linked to the previous one unless told otherwise."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.count = 0

    def _add(self, record: dict[str, Any], parent: str | bool | None = True) -> str:
        self.count += 1
        uuid = f"u{self.count:03d}"
        if parent is True:
            parent = self.last_uuid()
        envelope = {
            "parentUuid": parent,
            "isSidechain": False,
            "sessionId": SESSION,
            "version": "2.1.39",
            "cwd": "/work",
            "uuid": uuid,
            "timestamp": f"2026-01-01T00:00:{self.count:02d}Z",
        }
        self.records.append({**envelope, **record})
        return uuid

    def last_uuid(self) -> str | None:
        keyed = [r["uuid"] for r in self.records if "uuid" in r]
        return keyed[-1] if keyed else None

    def user(self, text: Any, parent: str | bool | None = True, **extra: Any) -> str:
        return self._add(
            {"type": "user", "message": {"role": "user", "content": text}, **extra}, parent
        )

    def result(self, call_id: str, text: str, parent: str | bool | None = True) -> str:
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
        return self.user([block], parent)

    def assistant(
        self, blocks: list[dict[str, Any]], message_id: str, parent: str | bool | None = True
    ) -> str:
        message = {
            "role": "assistant",
            "id": message_id,
            "model": "claude-opus-4-6",
            "content": blocks,
        }
        return self._add({"type": "assistant", "message": message}, parent)

    def text(self, text: str, message_id: str, parent: str | bool | None = True) -> str:
        return self.assistant([{"type": "text", "text": text}], message_id, parent)

    def call(self, call_id: str, message_id: str, parent: str | bool | None = True) -> str:
        block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}
        return self.assistant([block], message_id, parent)

    def progress(self, kind: str = "hook_progress", parent: str | bool | None = True) -> str:
        return self._add({"type": "progress", "data": {"type": kind}, "toolUseID": "t"}, parent)

    def attachment(self, attachment: dict[str, Any]) -> str:
        return self._add({"type": "attachment", "attachment": attachment})

    def system(self, subtype: str, parent: str | bool | None = True, **extra: Any) -> str:
        return self._add({"type": "system", "subtype": subtype, **extra}, parent)

    def outside(self, kind: str) -> None:
        self.records.append({"type": kind, "messageId": "x", "snapshot": {}})

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


def _load(session: Session, tmp_path: Path) -> Any:
    return load_conversation(session.write(tmp_path / f"{SESSION}.jsonl"))


def _accounted(conversation: Any, lines: int) -> None:
    report = conversation.report
    assert report is not None
    assert report.records == lines
    assert report.imported + report.skipped_total == report.records


def test_attachments_inside_the_chain_keep_it_whole(tmp_path: Path) -> None:
    s = Session()
    s.records.append({"type": "permission-mode", "permissionMode": "default", "sessionId": SESSION})
    s.user("fix the build")
    s.attachment(
        {
            "type": "deferred_tools_delta",
            "addedNames": ["Cron"],
            "addedLines": ["Cron"],
            "removedNames": [],
        }
    )
    s.attachment(
        {
            "type": "skill_listing",
            "content": "- deploy: ship it",
            "skillCount": 1,
            "isInitial": True,
        }
    )
    s.call("c1", "m1")
    s.result("c1", "ok")
    s.user([{"type": "text", "text": "Base directory for this skill: /s"}], isMeta=True)
    s.attachment({"type": "command_permissions", "allowedTools": []})
    s.text("built", "m2")
    conversation = _load(s, tmp_path)
    assert roles(conversation) == ["user", "assistant", "tool", "assistant"]
    prompt = conversation.messages[0]["content"]
    # The listing the model saw travels in the user turn it followed; the request comes first.
    assert prompt.startswith("fix the build")
    assert "- deploy: ship it" in prompt and "Cron" in prompt
    # The skill body joined the tool turn it was sent with: the request stays the last user turn.
    assert "Base directory for this skill" in conversation.messages[2]["content"]
    skipped = conversation.report.skipped
    assert skipped["attachment/command_permissions"].count == 1
    assert skipped["permission-mode"].count == 1
    _accounted(conversation, len(s.records))


def test_progress_records_as_parents_are_linked_around(tmp_path: Path) -> None:
    s = Session()
    s.user("run both")
    first = s.assistant(
        [{"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "a"}}], "m1"
    )
    second = s.assistant(
        [{"type": "tool_use", "id": "c2", "name": "Bash", "input": {"command": "b"}}], "m1"
    )
    s.progress("bash_progress", parent=first)
    s.result("c1", "a done")  # its parent is the progress record
    s.progress("bash_progress", parent=second)
    s.result("c2", "b done")
    s.progress("hook_progress")
    s.text("both ran", "m2")  # its parent is a hook progress record
    conversation = _load(s, tmp_path)
    assert roles(conversation) == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in tool_calls(conversation.messages[1])] == ["c1", "c2"]
    assert conversation.messages[-1]["content"] == "both ran"
    assert conversation.report.skipped["progress/bash_progress"].count == 2
    _accounted(conversation, len(s.records))


def test_a_compact_boundary_continues_the_history_and_is_recorded(tmp_path: Path) -> None:
    s = Session()
    s.user("first request")
    s.call("c1", "m1")
    last_before = s.result("c1", "x" * 50)
    s.system(
        "compact_boundary",
        parent=None,
        logicalParentUuid=last_before,
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 167094},
    )
    summary = "This session is being continued from a previous conversation. Summary: …"
    s.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.progress("hook_progress")
    s.text("carrying on", "m2")
    s.user("second request")
    s.text("done", "m3")
    conversation = _load(s, tmp_path)
    assert [content_text(m) for m in conversation.messages if m["role"] == "user"] == [
        "first request",
        summary,
        "second request",
    ]
    assert len(conversation.messages) == 7
    (compaction,) = conversation.compactions
    assert compaction.position == 3
    assert conversation.messages[compaction.position]["content"] == summary
    assert (compaction.agent, compaction.trigger, compaction.tokens_before) == (
        "claude-code",
        "auto",
        167094,
    )
    assert compaction.summary == summary
    assert compaction.line == 4
    # Listed in compactions (the CLI's `note:` lines), never as a warning (issue 33).
    assert not any("compacted" in w for w in conversation.warnings)
    assert conversation.compaction_lines() == [
        "message 3: claude-code, auto, 167,094 tokens before (counted by the agent); "
        "summary readable, line 4"
    ]
    _accounted(conversation, len(s.records))


def test_a_split_response_is_one_assistant_message(tmp_path: Path) -> None:
    s = Session()
    s.user("look")
    s.assistant([{"type": "thinking", "thinking": "hmm", "signature": "[REDACTED]"}], "m1")
    s.text("Let me look.", "m1")
    a = s.call("c1", "m1")
    b = s.call("c2", "m1")
    s.result("c1", "one", parent=a)
    s.result("c2", "two", parent=b)
    s.text("seen", "m2")
    conversation = _load(s, tmp_path)
    assert roles(conversation) == ["user", "assistant", "tool", "tool", "assistant"]
    merged = conversation.messages[1]
    assert merged["content"] == "Let me look."
    assert merged["reasoning"] == "hmm"
    assert len(tool_calls(merged)) == 2
    assert_paired(conversation.messages)


def test_a_resumed_session_keeps_the_branch_of_the_last_record(tmp_path: Path) -> None:
    s = Session()
    root = s.user("start")
    s.text("old answer", "m1")
    s.user("abandoned follow-up")
    s.user("new follow-up", parent=root)  # the session was resumed from the first prompt
    s.text("new answer", "m2")
    conversation = _load(s, tmp_path)
    assert [content_text(m) for m in conversation.messages] == [
        "start",
        "new follow-up",
        "new answer",
    ]
    assert conversation.report.skipped["off-branch"].count == 2
    assert any("branch that does not lead to the last message" in w for w in conversation.warnings)
    _accounted(conversation, len(s.records))


def test_subagents_are_offered_as_their_own_conversations(tmp_path: Path) -> None:
    s = Session()
    s.user("research hooks")
    s.call("task1", "m1")
    task_result = {"type": "tool_result", "tool_use_id": "task1", "content": "hooks: …"}
    s.user([task_result], toolUseResult={"agentId": "a1b2c3d", "prompt": "What are hooks?"})
    s.call("task2", "m2")
    flat_result = {"type": "tool_result", "tool_use_id": "task2", "content": "layout: …"}
    s.user([flat_result], toolUseResult={"agentId": "9f8e7d6c", "prompt": "Which layout?"})
    s.text("answered", "m3")
    # A sidechain record in the main file (older versions): its own conversation too.
    s.records.append(
        {
            "type": "user",
            "isSidechain": True,
            "agentId": "inline1",
            "uuid": "side1",
            "parentUuid": None,
            "sessionId": SESSION,
            "message": {"role": "user", "content": "inline subagent task"},
        }
    )
    path = s.write(tmp_path / f"{SESSION}.jsonl")
    # 2.1.x layout: <session>/subagents/agent-<id>.jsonl, starting with the Task prompt.
    folder = tmp_path / SESSION / "subagents"
    folder.mkdir(parents=True)
    sub = [
        {
            "type": "user",
            "isSidechain": True,
            "agentId": "a1b2c3d",
            "uuid": "s1",
            "parentUuid": None,
            "sessionId": SESSION,
            "message": {"role": "user", "content": "What are hooks?"},
        },
        {
            "type": "assistant",
            "isSidechain": True,
            "agentId": "a1b2c3d",
            "uuid": "s2",
            "parentUuid": "s1",
            "sessionId": SESSION,
            "message": {
                "role": "assistant",
                "id": "sm1",
                "content": [{"type": "text", "text": "Hooks are …"}],
            },
        },
    ]
    (folder / "agent-a1b2c3d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in sub))
    # 2.0.x layout: a flat agent-<id>.jsonl beside the session, with no prompt record.
    flat = [
        {
            "type": "assistant",
            "isSidechain": True,
            "agentId": "9f8e7d6c",
            "uuid": "f1",
            "parentUuid": None,
            "sessionId": SESSION,
            "message": {
                "role": "assistant",
                "id": "fm1",
                "content": [{"type": "text", "text": "flat answer"}],
            },
        }
    ]
    (tmp_path / "agent-9f8e7d6c.jsonl").write_text(json.dumps(flat[0]) + "\n")
    (tmp_path / "agent-other.jsonl").write_text(
        json.dumps({**flat[0], "sessionId": "another-session"}) + "\n"
    )
    conversations = load_conversations(path)
    main, *subagents = conversations
    assert roles(main) == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert main.report.skipped["sidechain"].count == 1
    by_agent = {c.metadata["agentId"]: c for c in subagents}
    assert set(by_agent) == {"inline1", "a1b2c3d", "9f8e7d6c"}
    assert [m["content"] for m in by_agent["a1b2c3d"].messages] == [
        "What are hooks?",
        "Hooks are …",
    ]
    assert by_agent["a1b2c3d"].title == "subagent a1b2c3d: What are hooks?"
    assert by_agent["a1b2c3d"].source == str(folder / "agent-a1b2c3d.jsonl")
    # The flat file had no prompt: it is the parent's Task prompt, and says so.
    assert by_agent["9f8e7d6c"].messages[0] == {"role": "user", "content": "Which layout?"}
    assert any("Task prompt" in w for w in by_agent["9f8e7d6c"].warnings)
    assert any("3 subagent conversation(s)" in w for w in main.warnings)
    # Opened on its own, a subagent file is that subagent's conversation.
    alone = load_conversation(folder / "agent-a1b2c3d.jsonl")
    assert alone.metadata["agentId"] == "a1b2c3d" and len(alone.messages) == 2


# --- the real sessions -------------------------------------------------------------------------

CLAUDE_FILES = sorted(p.name for p in CORPUS.glob("claudecode-*.jsonl")) if CORPUS.is_dir() else []


def _expected(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What a file holds, read with plain json: one conversation, no forks in these files."""
    side = any(r.get("isSidechain") for r in records if r.get("type") in ("user", "assistant"))
    chat = [r for r in records if r.get("type") in ("user", "assistant")]
    assistants = [r for r in chat if r["type"] == "assistant"]
    blocks = [
        (r["type"], b)
        for r in chat
        if isinstance(r["message"].get("content"), list)
        for b in r["message"]["content"]
        if isinstance(b, dict)
    ]
    prompts = [
        r["message"]["content"]
        for r in chat
        if r["type"] == "user"
        and isinstance(r["message"]["content"], str)
        and not r.get("isMeta")
        and not r.get("isCompactSummary")
    ]
    return {
        "sidechain": side,
        "assistant_ids": {r["message"]["id"] for r in assistants},
        "calls": [b["id"] for kind, b in blocks if kind == "assistant" and b["type"] == "tool_use"],
        "results": [b["tool_use_id"] for kind, b in blocks if b.get("type") == "tool_result"],
        "prompts": prompts,
        "boundaries": [r for r in records if r.get("subtype") == "compact_boundary"],
        "meta": [content_text(r["message"]) for r in chat if r.get("isMeta")],
    }


@pytest.mark.parametrize("name", CLAUDE_FILES)
def test_every_claude_code_corpus_file_imports_completely(name: str) -> None:
    path = corpus_file(name)
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    expected = _expected(records)
    conversation = load_conversations(path)[0]
    assert set(roles(conversation)) <= {"system", "user", "assistant", "tool"}
    assert roles(conversation).count("assistant") == len(expected["assistant_ids"])
    calls = [c["id"] for m in conversation.messages for c in tool_calls(m)]
    results = [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"]
    assert calls == expected["calls"]
    assert results == expected["results"]
    assert_paired(conversation.messages)
    users = [content_text(m) for m in conversation.messages if m["role"] == "user"]
    if expected["prompts"]:
        # The last real request is the last user turn the person wrote (harness text the model
        # saw may follow it in the turn, or come after it as its own turn, e.g. stop-hook
        # feedback).
        requests = [u for u in users if any(u.startswith(p) for p in expected["prompts"])]
        assert requests[-1].startswith(expected["prompts"][-1])
        if not users[-1].startswith(expected["prompts"][-1]):
            assert users[-1] in expected["meta"]
    _accounted(conversation, len(records))
    assert len(conversation.compactions) == len(expected["boundaries"])
    for compaction, boundary in zip(conversation.compactions, expected["boundaries"], strict=True):
        assert compaction.tokens_before == boundary["compactMetadata"]["preTokens"]
        assert compaction.trigger == boundary["compactMetadata"]["trigger"]
        summary = conversation.messages[compaction.position]
        assert summary["role"] == "user" and summary["content"] == compaction.summary
        assert str(compaction.summary).startswith("This session is being continued")
    result = compress(conversation.messages, CompactionConfig(context_length=32_000))
    for provider in ("openai", "anthropic"):
        errors = [p for p in validate(result.messages, provider) if p.severity == "error"]
        assert errors == [], (provider, errors[:3])


def test_the_compacted_claude_code_session_imports_its_whole_logical_history() -> None:
    path = corpus_file("claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    conversation = load_conversation(path)
    assert len(conversation.messages) == 344  # 152 responses, 186 results, 6 user turns
    assert conversation.messages[0]["content"] == "Implement spotter-gqc"
    assert conversation.messages[-2]["content"] == "did you push?"
    (compaction,) = conversation.compactions
    assert (compaction.position, compaction.line) == (229, 1256)
    skipped = conversation.report.skipped
    assert skipped["progress/hook_progress"].count == 1032
    assert skipped["progress/bash_progress"].count == 293
    assert skipped["file-history-snapshot"].count == 28
    assert conversation.metadata["model"] == "claude-opus-4-6"


def test_inspect_prints_the_import_report_and_the_agents_compaction() -> None:
    from click.testing import CliRunner

    from compaction.cli import main

    path = corpus_file("claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    result = CliRunner().invoke(main, ["inspect", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert "import            1,863 record(s) read, 491 imported, 1,372 skipped" in result.output
    assert "  skipped         progress/hook_progress ×1,032: not conversation" in result.output
    assert (
        "agent compaction  message 229: claude-code, auto, 167,094 tokens before "
        "(counted by the agent); summary readable, line 1256"
    ) in result.output


def test_the_cli_prints_the_agents_own_compaction_as_a_note_not_a_warning(
    tmp_path: Path,
) -> None:
    """Issue 33: `compress` printed Claude Code's compact boundary as a `warning:` line, as if
    the file had a problem; it is what the session holds, printed once as a `note:`."""
    from click.testing import CliRunner

    from compaction.cli import main

    s = Session()
    s.user("first request")
    s.call("c1", "m1")
    last_before = s.result("c1", "x" * 50)
    s.system(
        "compact_boundary",
        parent=None,
        logicalParentUuid=last_before,
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 167094},
    )
    s.user("This session is being continued from a previous conversation.", isCompactSummary=True)
    s.text("carrying on", "m2")
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in s.records) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["compress", str(path), "-o", str(tmp_path / "out.json")], catch_exceptions=False
    )
    assert result.exit_code == 0
    assert "warning:" not in result.stderr
    assert (
        f"note: {path}: the agent compacted its context at message 3: claude-code, auto, "
        "167,094 tokens before (counted by the agent); summary readable, line 4"
    ) in result.stderr
