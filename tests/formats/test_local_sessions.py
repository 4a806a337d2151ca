"""`compaction sessions` and the library behind it, against a temporary home with one session of
each agent (never the real ~/.claude or ~/.codex of the machine running the tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from format_helpers import DATA

from compaction.cli import main
from compaction.formats.local_sessions import (
    ROOTS,
    FactsCache,
    describe,
    list_sessions,
    modified_since,
)


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _claude(root: Path) -> Path:
    def record(kind: str, uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message["id"] = f"m-{uuid}"
        return {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "s1",
            "cwd": "/home/me/shop",
            "message": message,
        }

    folder = root / "-home-me-shop"
    session = _jsonl(
        folder / "s1.jsonl",
        [
            record("user", "a", None, "add a cart"),
            record("assistant", "b", "a", [{"type": "text", "text": "cart added"}]),
        ],
    )
    # A 2.0.x subagent file beside it is part of the session, not a session of its own.
    _jsonl(
        folder / "agent-1234abcd.jsonl",
        [{**record("user", "x", None, "sub"), "isSidechain": True, "agentId": "1234abcd"}],
    )
    return session


def _codex(root: Path) -> Path:
    def item(role: str, text: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        }

    return _jsonl(
        root / "2026" / "03" / "12" / "rollout-2026-03-12T10-00-00-abc.jsonl",
        [
            {"type": "session_meta", "payload": {"id": "abc", "cwd": "/home/me/api"}},
            item("user", "fix the login"),
            item("assistant", "fixed"),
        ],
    )


def _gemini(root: Path) -> Path:
    path = root / "5f3a9c" / "chats" / "session-2026-03-27.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "sessionId": "g1",
                "projectHash": "5f3a9c",
                "messages": [
                    {"id": "1", "type": "user", "content": [{"text": "explain the parser"}]},
                    {"id": "2", "type": "gemini", "content": "it parses"},
                ],
            }
        )
    )
    return path


def _hermes(root: Path) -> Path:
    path = root / "20260301_101010_ab12.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "session_id": "h1",
                "system_prompt": "You are Hermes.",
                "messages": [
                    {"role": "user", "content": "hello"},
                    {"role": "assistant", "content": "hi"},
                ],
            }
        )
    )
    return path


def _copilot(root: Path) -> Path:
    return _jsonl(
        root / "c0ffee" / "events.jsonl",
        [
            {
                "type": "session.start",
                "id": "e1",
                "parentId": None,
                "data": {"sessionId": "c0ffee", "context": {"cwd": "/home/me/cli"}},
            },
            {
                "type": "user.message",
                "id": "e2",
                "parentId": "e1",
                "data": {"content": "list files"},
            },
            {
                "type": "assistant.message",
                "id": "e3",
                "parentId": "e2",
                "data": {"messageId": "m1", "content": "here they are", "toolRequests": []},
            },
        ],
    )


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


def _qwen(root: Path) -> Path:
    return _copy(DATA / "qwen_code_session.jsonl", root / "-home-dev-shop" / "chats" / "q1.jsonl")


def _iflow(root: Path) -> Path:
    name = "session-041101e6-2a7f-4dfd-90b0-57888a353f6a.jsonl"
    return _copy(DATA / "iflow_session.jsonl", root / "-Users-dev-Code-notes" / name)


def _opencode(root: Path) -> Path:
    """The export fixture laid out as OpenCode 1.1's storage (one file per session, message,
    part)."""
    export = json.loads((DATA / "opencode_export.json").read_text())
    info = export["info"]
    storage = root / "storage"
    for entry in export["messages"]:
        message = entry["info"]
        _write(storage / "message" / info["id"] / f"{message['id']}.json", message)
        for part in entry["parts"]:
            _write(storage / "part" / message["id"] / f"{part['id']}.json", part)
    return _write(storage / "session" / info["projectID"] / f"{info['id']}.json", info)


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def _task(folder: str) -> Any:
    def build(root: Path) -> Path:
        for name in ("api_conversation_history.json", "ui_messages.json", "task_metadata.json"):
            if (DATA / folder / name).exists():
                _copy(DATA / folder / name, root / "1768208531000" / name)
        return root / "1768208531000" / "api_conversation_history.json"

    return build


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A temporary root per agent (through the override variables) and a temporary cache."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    builders = {
        "claude-code": _claude,
        "codex": _codex,
        "gemini-cli": _gemini,
        "hermes": _hermes,
        "copilot-cli": _copilot,
        "qwen-code": _qwen,
        "iflow": _iflow,
        "opencode": _opencode,
        "cline": _task("cline_task"),
        "roo-code": _task("roo_task_xml"),
        "kilo-code": _task("cline_task"),
    }
    sessions = {}
    for age, root in enumerate(ROOTS):
        base = tmp_path / "roots" / root.agent
        base.mkdir(parents=True)
        monkeypatch.setenv(root.variable, str(base))
        path = builders[root.agent](base)
        stamp = 1_700_000_000 + age * 60  # later roots are newer
        os.utime(path, (stamp, stamp))
        sessions[root.agent] = path
    return sessions


def test_every_agents_sessions_are_listed_newest_first(home: dict[str, Path]) -> None:
    found = list_sessions()
    assert [s.agent for s in found] == [root.agent for root in reversed(ROOTS)]
    assert {s.agent: s.path for s in found} == home
    projects = {s.agent: s.project for s in found}
    assert projects["claude-code"] == "/home/me/shop"  # the recorded cwd, not the folder name
    assert projects["codex"] == "/home/me/api"
    assert projects["gemini-cli"] == "5f3a9c"
    assert projects["copilot-cli"] == "c0ffee"
    assert projects["qwen-code"] == "/home/dev/shop"
    assert projects["iflow"] == "/Users/dev/Code/notes"
    assert projects["opencode"] == "/home/dev/api"  # the session's directory
    for session in found:  # every listed session opens, as its agent's format
        facts = describe(session)
        assert facts.error is None and facts.messages, (session.agent, facts)
    assert [s.agent for s in list_sessions(("codex",))] == ["codex"]


def test_facts_are_counted_once_and_cached_by_path_and_mtime(
    home: dict[str, Path], tmp_path: Path
) -> None:
    cache = FactsCache(tmp_path / "facts.json")
    claude = next(s for s in list_sessions() if s.agent == "claude-code")
    facts = describe(claude, cache)
    assert (facts.messages, facts.compactions, facts.error) == (2, 0, None)
    assert facts.tokens is not None and facts.tokens > 0
    cache.save()
    # A fresh cache from the file answers without importing: the file now holds garbage, but
    # its size and mtime are unchanged, so the cached facts stand.
    original = claude.path.read_bytes()
    claude.path.write_bytes(b"x" * len(original))
    os.utime(claude.path, (claude.modified, claude.modified))
    again = describe(claude, FactsCache(tmp_path / "facts.json"))
    assert again == facts
    # Once it changes, it is counted again (and an unreadable session says why).
    os.utime(claude.path, (claude.modified + 5, claude.modified + 5))
    changed = next(s for s in list_sessions() if s.agent == "claude-code")
    assert modified_since(claude.path, claude.modified, claude.size)
    assert describe(changed, FactsCache(tmp_path / "facts.json")).error is not None


def test_the_sessions_command_lists_counts_and_json(home: dict[str, Path]) -> None:
    result = CliRunner().invoke(main, ["sessions"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["modified", "agent", "size"]
    for path in home.values():
        assert str(path) in result.output
    claude_row = next(line for line in lines if "claude-code" in line)
    assert "/home/me/shop" in claude_row and claude_row.split()[5] == "2"  # messages
    as_json = CliRunner().invoke(main, ["sessions", "--json", "--agent", "codex"])
    (record,) = [json.loads(line) for line in as_json.output.splitlines()]
    assert record["agent"] == "codex" and record["messages"] == 2
    assert record["project"] == "/home/me/api" and record["error"] is None


def test_no_sessions_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for root in ROOTS:
        monkeypatch.setenv(root.variable, str(tmp_path / "missing" / root.agent))
    result = CliRunner().invoke(main, ["sessions"])
    assert result.exit_code == 0
    assert "no agent sessions found under" in result.output
    assert "COMPACTION_LAB_CLAUDE_DIR" in result.output
