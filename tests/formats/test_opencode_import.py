"""OpenCode: `opencode export` JSON (the corpus's 1.2.5 files and a hand-made 1.17 one), the
storage layout of 1.1 and the `opencode.db` of 1.2 on; expected values come from the raw JSON."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from format_helpers import DATA, annotated, assert_paired, corpus_file, roles

from compaction.errors import FormatError
from compaction.formats import detect_format, load_conversation, load_conversations
from compaction.formats.local_sessions import list_sessions
from compaction.lab.audit import audit
from compaction.messages import content_text, last_user_index, tool_calls
from compaction.tokens import RoughCounter

EXPORT = DATA / "opencode_export.json"
CURIOUS = "opencode-dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json"
NIMBLE = "opencode-dark-factory__session__nimble-pixel__ses_39b4c1891ffezxPVc5OPmcqF33.json"


def _parts(export: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for m in export["messages"] for p in m["parts"] if p["type"] == kind]


def test_an_export_becomes_steps_tool_results_and_injected_harness_text() -> None:
    export = json.loads(EXPORT.read_text())
    conversation = load_conversation(EXPORT)
    assert detect_format(EXPORT).name == conversation.format == "opencode"
    assert roles(conversation) == [
        "user", "user", "assistant", "tool", "assistant", "tool", "tool",
        "user", "assistant", "user", "assistant", "tool",
    ]  # fmt: skip
    tools = _parts(export, "tool")
    assert [c["id"] for m in annotated(conversation) for c in tool_calls(m)] == [
        p["callID"] for p in tools
    ]
    results = {
        m["tool_call_id"]: m["content"] for m in annotated(conversation) if m["role"] == "tool"
    }
    assert results["toolu_01"] == tools[0]["state"]["output"]
    assert results["toolu_03"] == tools[2]["state"]["error"]  # already says "Error: …"
    assert results["toolu_04"] == "Error: [Tool execution was interrupted]"  # still running
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered
    # The @-file's synthetic parts are the harness's; the user's words stay theirs.
    words, read = annotated(conversation)[0], annotated(conversation)[1]
    assert words["content"] == export["messages"][0]["parts"][0]["text"]
    assert read["injected"] == "context" and read["content"].startswith("Called the Read tool")
    assert annotated(conversation)[2]["reasoning"] == _parts(export, "reasoning")[0]["text"]
    assert annotated(conversation)[9]["injected"] == "continuation"  # OpenCode's "Continue if…"
    assert last_user_index(annotated(conversation)) == 0
    assert conversation.metadata["cwd"] == "/home/dev/api"
    assert conversation.title == "Rate-limit the login endpoint"


def test_an_exports_compaction_is_recorded_where_its_summary_is() -> None:
    export = json.loads(EXPORT.read_text())
    conversation = load_conversation(EXPORT)
    (compaction,) = conversation.compactions
    summary = next(m for m in export["messages"] if m["info"].get("summary") is True)
    text = next(p["text"] for p in summary["parts"] if p["type"] == "text")
    assert (compaction.agent, compaction.trigger, compaction.summary) == ("opencode", "auto", text)
    assert content_text(annotated(conversation)[compaction.position]) == text
    request = annotated(conversation)[compaction.position - 1]
    assert (request["content"], request["injected"]) == ("What did we do so far?", "compaction")
    # The context before it: the prompt and output of the last call before the compaction.
    last = _parts(export, "step-finish")[1]["tokens"]
    cached = last["cache"]["read"] + last["cache"]["write"]
    assert compaction.tokens_before == last["input"] + cached + last["output"]
    assert compaction.line is not None
    line = EXPORT.read_text().splitlines()[compaction.line - 1]
    assert _parts(export, "compaction")[0]["id"] in line


def test_each_step_finish_is_a_call_with_the_whole_prompt_and_its_cost() -> None:
    export = json.loads(EXPORT.read_text())
    conversation = load_conversation(EXPORT)
    finishes = _parts(export, "step-finish")
    assert len(conversation.calls) == len(finishes) == 4
    for call, finish in zip(conversation.calls, finishes, strict=True):
        tokens = finish["tokens"]
        cache = tokens["cache"]
        assert call.input_tokens == tokens["input"] + cache["read"] + cache["write"]
        assert (call.cache_read_tokens, call.cache_write_tokens) == (cache["read"], cache["write"])
        # 1.17 counts reasoning apart from output (`total` says so): it is added back.
        assert call.output_tokens == tokens["output"] + tokens["reasoning"]
        assert call.reasoning_tokens == tokens["reasoning"]
        assert call.cost_usd == finish["cost"]
        assert annotated(conversation)[call.position]["role"] == "assistant"
    assert [c.position for c in conversation.calls] == [2, 4, 8, 10]


def test_the_corpus_session_with_a_compaction() -> None:
    path = corpus_file(CURIOUS)
    export = json.loads(path.read_text())
    conversation = load_conversation(path)
    tools = _parts(export, "tool")
    calls = [c for m in annotated(conversation) for c in tool_calls(m)]
    assert [c["id"] for c in calls] == [p["callID"] for p in tools] and len(calls) == 47
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered
    assert len(conversation.calls) == len(_parts(export, "step-finish")) == 35
    # 1.2.5 writes `total` = input + output + cache: the output already holds the reasoning.
    first = _parts(export, "step-finish")[0]["tokens"]
    assert conversation.calls[0].output_tokens == first["output"]
    (compaction,) = conversation.compactions
    assert (compaction.trigger, compaction.position) == ("manual", len(annotated(conversation)) - 1)
    assert compaction.tokens_before == 118_210  # the last call's tokens.total before it
    typed = [
        p["text"]
        for m in export["messages"]
        if m["info"]["role"] == "user"
        for p in m["parts"]
        if p["type"] == "text" and not p.get("synthetic")
    ]
    assert (
        content_text(annotated(conversation)[last_user_index(annotated(conversation))]) == typed[-1]
    )
    assert conversation.metadata["cwd"] == export["info"]["directory"]
    (event,) = audit(conversation, RoughCounter()).events
    assert (event.agent, event.trigger, event.tokens_before) == ("opencode", "manual", 118_210)
    assert event.kept_by_agent is not None


def test_the_corpus_session_with_an_aborted_response() -> None:
    path = corpus_file(NIMBLE)
    conversation = load_conversation(path)
    assert len(conversation.calls) == 5
    assert any("MessageAbortedError" in w for w in conversation.warnings)
    assert roles(conversation).count("assistant") == 5  # the aborted one is not sent again


# -- OpenCode's own storage: JSON files (1.1) and opencode.db (1.2 on) ---------------------------


def _storage(root: Path) -> tuple[Path, dict[str, Any]]:
    export = json.loads(EXPORT.read_text())
    info = export["info"]
    storage = root / "storage"
    for entry in export["messages"]:
        message = entry["info"]
        _write(storage / "message" / info["id"] / f"{message['id']}.json", message)
        for part in entry["parts"]:
            _write(storage / "part" / message["id"] / f"{part['id']}.json", part)
    _write(storage / "session" / info["projectID"] / f"{info['id']}.json", info)
    return storage, info


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def _database(path: Path) -> dict[str, Any]:
    """The export in the tables OpenCode 1.2+ writes (message and part `data` without ids)."""
    export = json.loads(EXPORT.read_text())
    info = export["info"]
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(
        "create table session (id text primary key, project_id text not null, parent_id text,"
        " slug text not null, directory text not null, title text not null, version text not"
        " null, time_created integer, time_updated integer);"
        "create table message (id text primary key, session_id text not null, time_created"
        " integer, time_updated integer, data text not null);"
        "create table part (id text primary key, message_id text not null, session_id text not"
        " null, time_created integer, time_updated integer, data text not null);"
    )
    row = (info["id"], info["projectID"], None, info["slug"], info["directory"], info["title"])
    times = (info["time"]["created"], info["time"]["updated"])
    connection.execute(
        "insert into session values (?,?,?,?,?,?,?,?,?)", (*row, info["version"], *times)
    )
    connection.execute(  # a subagent's session: never listed or opened on its own
        "insert into session values (?,?,?,?,?,?,?,?,?)",
        ("ses_child", info["projectID"], info["id"], "c", "/", "sub", "1.17.4", 1, 1),
    )
    for entry in export["messages"]:
        message = {k: v for k, v in entry["info"].items() if k not in ("id", "sessionID")}
        created = entry["info"]["time"]["created"]
        connection.execute(
            "insert into message values (?,?,?,?,?)",
            (entry["info"]["id"], info["id"], created, created, json.dumps(message)),
        )
        for part in entry["parts"]:
            data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
            connection.execute(
                "insert into part values (?,?,?,?,?,?)",
                (part["id"], entry["info"]["id"], info["id"], 0, 0, json.dumps(data)),
            )
    connection.commit()
    connection.close()
    return info


def _same_as_export(conversation: Any) -> None:
    exported = load_conversation(EXPORT)
    assert conversation.messages == exported.messages
    assert conversation.marks == exported.marks
    assert [c.to_dict() | {"line": None} for c in conversation.calls] == [
        c.to_dict() | {"line": None} for c in exported.calls
    ]
    assert [c.summary for c in conversation.compactions] == [
        c.summary for c in exported.compactions
    ]


def test_the_storage_folder_a_session_file_a_message_file_and_an_id_open_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, info = _storage(tmp_path / "opencode")
    session_file = next(storage.glob("session/*/*.json"))
    message_file = next(storage.glob("message/*/*.json"))
    monkeypatch.setenv("COMPACTION_LAB_OPENCODE_DIR", str(tmp_path / "opencode"))
    for source in (tmp_path / "opencode", storage, session_file, message_file, info["id"]):
        _same_as_export(load_conversation(source))
    with pytest.raises(FormatError, match="no OpenCode session ses_missing on this machine"):
        load_conversations("ses_missing")


def test_a_storage_session_file_away_from_its_storage_says_what_to_open(tmp_path: Path) -> None:
    lone = tmp_path / "ses_4a1b2c3d4e5fAbCdEfGhIjKlMn.json"
    lone.write_text(json.dumps(json.loads(EXPORT.read_text())["info"]))
    with pytest.raises(FormatError, match="open the storage folder, or export the session"):
        load_conversations(lone)


def test_opencode_db_opens_read_only_and_its_sessions_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "opencode" / "opencode.db"
    info = _database(db)
    before = (db.read_bytes(), sorted(os.listdir(db.parent)))
    for source in (db, db.parent, f"{db}#{info['id']}"):
        _same_as_export(load_conversation(source))
    assert (db.read_bytes(), sorted(os.listdir(db.parent))) == before  # nothing written
    monkeypatch.setenv("COMPACTION_LAB_OPENCODE_DIR", str(db.parent))
    (listed,) = list_sessions(("opencode",))  # the subagent's session is not listed
    assert str(listed.path) == f"{db}#{info['id']}"
    assert listed.project == info["directory"]
    assert listed.modified == info["time"]["updated"] / 1000
    _same_as_export(load_conversation(listed.path))
    _same_as_export(load_conversation(info["id"]))


def test_a_sqlite_file_that_is_not_opencodes_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    sqlite3.connect(other).execute("create table note (body text)").connection.commit()
    with pytest.raises(FormatError, match="not an OpenCode database"):
        load_conversations(other)
