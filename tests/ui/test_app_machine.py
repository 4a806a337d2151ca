"""AppTest of the loader's "On this machine" source: the table, opening a session, following it."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import click, open_app
from claude_records import append, record, write_live_session

from compaction.formats.local_sessions import ROOTS


@pytest.fixture
def live_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code session under a temporary root; every other agent's root is empty."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for root in ROOTS:
        monkeypatch.setenv(root.variable, str(tmp_path / "roots" / root.agent))
    return write_live_session(tmp_path / "roots" / "claude-code" / "-home-me-live-project")


def test_a_session_on_this_machine_opens_and_is_followed_as_it_grows(live_session: Path) -> None:
    at = open_app()
    assert any(
        "/home/me/live-project" in list(frame.value.get("project", [])) for frame in at.dataframe
    )
    at.text_input(key="machine_query").set_value("live-project")
    at.run()
    assert at.selectbox(key="machine_pick").value == str(live_session)
    click(at, "machine_count")
    table = at.dataframe[0].value
    assert list(table["messages"]) == [2]
    click(at, "machine_open")
    assert at.session_state["_machine_followed"][0] == str(live_session)
    assert at.session_state["loaded_conversation"].title == "start the live task"
    at.toggle(key="machine_follow").set_value(True)
    at.run()
    assert not at.exception
    assert any("2 messages): no change since it was opened" in str(c.value) for c in at.caption)
    # The agent writes a new turn: the next run (the fragment's poll) reloads the session.
    append(live_session, record("user", "c", "b", "and now the follow-up"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    loaded = at.session_state["loaded_conversation"]
    assert [m["content"] for m in loaded.messages][-1] == "and now the follow-up"
    assert any("3 messages" in str(metric.value) or metric.value == "3" for metric in at.metric)
    # The status says what following saw, not the stale "no change since it was loaded".
    at.run()
    statuses = [str(c.value) for c in at.caption if "Following" in str(c.value)]
    assert statuses and "2 → 3 messages); no change since." in statuses[0], statuses


def test_no_sessions_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for root in ROOTS:
        monkeypatch.setenv(root.variable, str(tmp_path / "nothing" / root.agent))
    at = open_app()
    assert any("No agent sessions were found on this machine" in str(i.value) for i in at.info)


def test_sessions_whose_agent_compacted_are_flagged_and_can_be_picked_out(
    live_session: Path,
) -> None:
    import json

    compacted = live_session.parent / "compacted.jsonl"
    records = [
        record("user", "a", None, "first request"),
        record("assistant", "b", "a", "done"),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "c",
            "parentUuid": None,
            "logicalParentUuid": "b",
            "sessionId": "live",
            "compactMetadata": {"trigger": "manual", "preTokens": 1234},
        },
        {
            **record(
                "user",
                "d",
                "c",
                "This session is being continued from a previous "
                "conversation that ran out of context. Summary: …",
            ),
            "isCompactSummary": True,
        },
        record("user", "e", "d", "second request"),
    ]
    compacted.write_text("".join(json.dumps(r) + "\n" for r in records))
    at = open_app()
    click(at, "machine_count")
    table = at.dataframe[0].value
    flags = dict(zip(table["path"], table["agent compacted"], strict=True))
    assert flags == {str(compacted): "★ 1", str(live_session): "—"}
    at.checkbox(key="machine_compacted").check()
    at.run()
    assert list(at.dataframe[0].value["path"]) == [str(compacted)]


def test_a_session_link_to_a_file_outside_the_session_folders_is_refused(
    live_session: Path, tmp_path: Path
) -> None:
    # A crafted link must not make the app read (and show) any file the process can read.
    secret = tmp_path / "elsewhere" / "secrets.jsonl"
    secret.parent.mkdir()
    secret.write_text(live_session.read_text(encoding="utf-8"), encoding="utf-8")
    sneaky = live_session.parent / ".." / ".." / ".." / "elsewhere" / "secrets.jsonl"
    for path in (secret, sneaky):
        at = open_app(session=str(path))
        shown = [str(e.value).replace("\\", "") for e in at.error]  # Markdown-escaped
        refusals = [text for text in shown if "not in an agent's session folder" in text]
        assert refusals, shown
        assert "COMPACTION_LAB_SESSION_DIRS" in refusals[0]
        if "loaded_conversation" in at.session_state:  # the landing example, if anything
            assert not at.session_state["loaded_conversation"].source.startswith("local:")


def test_a_session_link_opens_a_file_of_an_agent_or_of_a_configured_folder(
    live_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_app(session=str(live_session))
    assert not [e.value for e in at.error]
    assert at.session_state["loaded_conversation"].source == f"local:{live_session}"

    mine = tmp_path / "my-exports" / "session.jsonl"
    mine.parent.mkdir()
    mine.write_text(live_session.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("COMPACTION_LAB_SESSION_DIRS", str(mine.parent))
    at = open_app(session=str(mine))
    assert not [e.value for e in at.error]
    assert at.session_state["loaded_conversation"].source == f"local:{mine}"
