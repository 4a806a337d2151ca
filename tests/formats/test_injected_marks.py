"""Importers mark the user-role messages that are not the user speaking (messages.INJECTED_KEY):
hook output, system reminders, command wrappers, task notifications, stop-hook feedback and the
project context an agent sends as a user turn. The mark survives the pipeline and never leaves
through an exporter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from format_helpers import annotated, corpus_file

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.formats import dump_conversation, load_conversation
from compaction.formats.common import mark_injected_messages
from compaction.messages import INJECTED_KEY, INJECTED_KINDS, last_user_index
from compaction.text.patterns import injected_kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Stop hook feedback:\n[stop.sh]: commit first", "stop-hook"),
        ("<system-reminder>\nPostToolUse hook context\n</system-reminder>", "system-reminder"),
        ("<command-name>/compact</command-name>\n<command-args></command-args>", "command"),
        ("<local-command-stdout>Compacted</local-command-stdout>", "command"),
        ("<task-notification>\n<task-id>b0be39e</task-id>", "task-notification"),
        ("# AGENTS.md instructions for /repo\n\nUse uv.", "context"),
        ("<environment_context><cwd>/repo</cwd></environment_context>", "context"),
        ("[Request interrupted by user for tool use]", "interruption"),
        ("Fix the bug in <command-name> handling, please.", None),
        ("Please run the tests.", None),
    ],
)
def test_injected_kind(text: str, kind: str | None) -> None:
    assert injected_kind(text) == kind
    assert kind is None or kind in INJECTED_KINDS


def test_marking_skips_other_roles_and_keeps_an_importers_own_mark() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": "<system-reminder>x</system-reminder>"},
        {"role": "user", "content": "Base directory for this skill: /s", INJECTED_KEY: "hook"},
        {"role": "user", "content": "<task-notification>done</task-notification>"},
        {"role": "user", "content": "thanks"},
    ]
    assert mark_injected_messages(messages) == 1
    assert [m.get(INJECTED_KEY) for m in messages] == [None, "hook", "task-notification", None]
    # Reminders put before the user's words leave the turn the user's: readers strip them.
    before = [
        {"role": "user", "content": "<system-reminder>\nctx\n</system-reminder>\nShip it."},
        {"role": "user", "content": "<system-reminder>a</system-reminder><system-reminder>b"},
    ]
    assert mark_injected_messages(before) == 1
    assert [m.get(INJECTED_KEY) for m in before] == [None, "system-reminder"]
    assert last_user_index(messages) == 3
    # With nothing of the user's own in range, the latest user-role message still anchors.
    assert last_user_index(messages[:3]) == 2


def _record(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"role": kind, "id": f"m-{uuid}", "content": content}
    record = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "message": message,
    }
    return json.dumps({**record, **extra}) + "\n"


def test_claude_code_stop_hook_feedback_stays_apart_from_the_users_words(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        _record("user", "u", None, "Port it to Rust.")
        + _record("user", "m", "u", "Stop hook feedback:\nCommit first.", isMeta=True)
        + _record("assistant", "a", "m", [{"type": "text", "text": "Committing."}])
        + _record("user", "c", "a", "<command-name>/clear</command-name>")
        + _record("user", "h", "c", "Stop hook feedback:\nStill dirty.", isMeta=True)
    )
    messages = annotated(load_conversation(path))
    assert [(m["role"], m.get(INJECTED_KEY)) for m in messages] == [
        ("user", None),
        ("user", "stop-hook"),
        ("assistant", None),
        ("user", "command"),
        ("user", "stop-hook"),  # joined to other harness text, never to the user's words
    ]
    assert messages[0]["content"] == "Port it to Rust."
    assert last_user_index(messages) == 0


def test_the_mark_survives_compaction_beside_the_messages_never_in_them() -> None:
    """A list that still carries `injected` keys (an older import, a caller's own) is read at
    the door; the output carries provider fields only, its marks in `result.marks` (issue 30)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Build the release."}]
    for number in range(8):
        messages.append({"role": "assistant", "content": f"step {number} " + "x" * 400})
        messages.append({"role": "user", "content": f"<system-reminder>{number}</system-reminder>"})
        messages[-1][INJECTED_KEY] = "system-reminder"
    result = Compactor(CompactionConfig(context_length=2_000, protect_first_n=1)).compress(
        messages, force=True
    )
    assert result.summary is not None
    assert result.summary.sections["Active Task"] == "Build the release."
    assert not any(INJECTED_KEY in m for m in result.messages)
    assert result.marks and set(result.marks.values()) == {"system-reminder"}
    assert all(result.messages[i]["role"] == "user" for i in result.marks)
    for format in ("openai", "anthropic"):
        assert INJECTED_KEY not in json.dumps(dump_conversation(result.messages, format))


def test_codex_project_context_is_marked_on_the_corpus_session() -> None:
    path = corpus_file("codex-empireofbits__codex-session.jsonl")
    messages = annotated(load_conversation(path))
    marked = [m for m in messages if m.get(INJECTED_KEY)]
    assert marked, "the AGENTS.md / environment context user turns carry the mark"
    assert all(m["role"] == "user" for m in marked)
    latest = last_user_index(messages)
    assert latest is not None and not messages[latest].get(INJECTED_KEY)
