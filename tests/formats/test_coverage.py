"""No silent emptiness (issue 35): an import that reads nothing of a file is an error, one that
reads little of it is a warning, both naming the records (line, type) whose text is missing;
auto-detection gives way to a format that reads more."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from format_helpers import DATA

from compaction.errors import FormatError
from compaction.formats import Conversation, load_conversations
from compaction.formats import coverage as coverage_module
from compaction.formats import detect as detect_module
from compaction.formats.coverage import MIN_READ_SHARE, measure
from compaction.formats.source import parse_text, read_source


def test_a_claude_code_like_file_with_gemini_parts_is_never_read_as_empty_messages() -> None:
    # Qwen Code's records wear Claude Code's envelope; Claude Code's importer used to turn them
    # into empty messages without a word (37 of them for an 855 KB session).
    path = DATA / "qwen_code_session.jsonl"
    conversation = load_conversations(path)[0]
    assert conversation.format == "qwen-code"
    assert all(m.get("content") or m.get("tool_calls") for m in conversation.messages)
    # Forced through Claude Code's importer, the file is refused for what it holds.
    with pytest.raises(FormatError, match=r"Gemini-style `message.parts`"):
        load_conversations(path, format="claude-code")


def test_an_import_whose_messages_are_empty_is_an_error_naming_the_records(tmp_path: Path) -> None:
    # Claude Code's sniffer accepts the file (one record has `message.content`), but every
    # record's text sits where the importer does not look.
    records: list[dict[str, Any]] = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "message": {"role": "user", "content": []},
        },
        *[
            {
                "type": "assistant",
                "uuid": f"a{n}",
                "parentUuid": "u1" if n == 1 else f"a{n - 1}",
                "message": {"role": "assistant", "id": f"m{n}", "body": f"answer {n} " * 30},
            }
            for n in range(1, 4)
        ],
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(FormatError) as caught:
        load_conversations(path)
    message = str(caught.value)
    assert "read nothing of this file" in message
    assert "'assistant' ×3 (lines 2, 3, 4)" in message
    assert str(path) in message


def test_an_import_that_reads_little_of_a_file_warns_naming_what_it_left(tmp_path: Path) -> None:
    base = {"sessionId": "s", "cwd": "/w"}
    request = "Please rename the helper in utils.py to parse_row."
    reply = [{"type": "text", "text": "Done."}]
    records = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": request}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"role": "assistant", "id": "m1", "content": reply}},
    ]  # fmt: skip
    # Records Claude Code counts as not conversation, holding most of the file's text.
    for n in range(5):
        records.append(
            {**base, "type": "system", "subtype": "notes", "uuid": f"s{n}", "parentUuid": "a1",
             "content": f"note {n}: " + "the build log says something long here " * 10}
        )  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (conversation,) = load_conversations(path)
    warning = conversation.warnings[0]
    assert warning.startswith("only ")
    assert "'system/notes' ×5 (lines 3, 4, 5, 6, 7)" in warning
    coverage = measure(read_source(path), [conversation])
    assert coverage.share < MIN_READ_SHARE


def test_detection_gives_way_to_a_format_that_reads_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A format that claims every file and reads nothing is tried first; the file's own format
    # (Qwen Code) is kept, and the import says which one read it and why.
    def load(doc: Any) -> list[Conversation]:
        return [Conversation(messages=[{"role": "user", "content": ""}], format="greedy")]

    greedy = SimpleNamespace(NAME="greedy", sniff=lambda doc: (True, "claims all"), load=load)
    modules = (greedy, *detect_module.MODULES)
    monkeypatch.setattr(detect_module, "MODULES", modules)
    monkeypatch.setattr("compaction.formats.MODULES", modules)
    conversation = load_conversations(DATA / "qwen_code_session.jsonl")[0]
    assert conversation.format == "qwen-code"
    assert conversation.warnings[0].startswith(
        "read as qwen-code: the greedy importer, which recognised the file first, read 0%"
    )


def test_the_measure_reads_a_json_object_by_its_largest_array_whatever_the_importer_did() -> None:
    said = "The migration failed because the users table has a duplicate email index."
    value = {
        "info": {"title": "a title that is long enough to count as some text, but not a record"},
        "messages": [
            {"role": "user", "parts": [{"text": "  Why did   the migration fail?\n" * 3}]},
            {"role": "assistant", "parts": [{"text": said}], "id": "r1"},
            {"role": "assistant", "parts": [{"text": "An answer the importer never read " * 3}]},
            {"role": "assistant", "blob": "gAAAAABpkpypeq8jWQEyaq7os_MwuydQaeQ6IRqj1bRgpIcijRcC"},
        ],
    }
    document = parse_text(json.dumps(value, indent=2), name="export.json")
    # The importer stripped and re-spaced the user's words and rewrapped the answer.
    read = Conversation(
        messages=[
            {"role": "user", "content": "Why did the migration fail?\nWhy did the migration fail?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c", "type": "function",
                 "function": {"name": "say", "arguments": json.dumps({"text": said})}}]},
        ],
        format="x",
    )  # fmt: skip
    coverage = measure(document, [read])
    # Three records hold text (the base64 blob is not text); the third was not read.
    assert coverage.records == 3
    (unread,) = coverage.unread
    assert (unread.where, unread.kind) == (f"messages[2] (line {unread.line})", "assistant")
    assert document.text.splitlines()[unread.line - 1].strip().startswith('"text": "An answer')
    assert 0.5 < coverage.share < 1


def test_only_the_unread_records_of_a_json_file_are_searched_for_their_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Finding a record's line searches the file from its start: done for every record of a
    # 5,000-message JSON export, the check took 4 s of the CLI's 5 (20 s at 20,000 messages).
    said = [f"Answer number {n} explains the failing test in plain words." for n in range(40)]
    records = [{"role": "assistant", "content": text} for text in said]
    records.insert(17, {"role": "assistant", "note": "A note no importer reads, in words " * 2})
    document = parse_text(json.dumps(records, indent=1), name="export.json")
    read = Conversation(messages=[{"role": "assistant", "content": t} for t in said], format="x")
    searched: list[Any] = []
    real = coverage_module._line_of
    monkeypatch.setattr(
        coverage_module, "_line_of", lambda *args: searched.append(args[1]) or real(*args)
    )
    coverage = measure(document, [read])
    (unread,) = coverage.unread
    assert searched == [records[17]]
    assert unread.where == f"[17] (line {unread.line})"
    assert document.text.splitlines()[unread.line - 1].strip().startswith('"note": "A note')
    # Line numbers by bisection are the newline counts they replace, at every position.
    lines = coverage_module._Lines(document.text)
    for position in range(0, len(document.text) + 1, 7):
        assert lines.number(position) == document.text.count("\n", 0, position) + 1


def test_a_format_that_fails_on_the_file_does_not_stop_the_others_being_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def empty(doc: Any) -> list[Conversation]:
        return [Conversation(messages=[{"role": "user", "content": ""}], format="greedy")]

    def broken(doc: Any) -> list[Conversation]:
        raise KeyError("message")

    greedy = SimpleNamespace(NAME="greedy", sniff=lambda doc: (True, "claims all"), load=empty)
    fragile = SimpleNamespace(NAME="fragile", sniff=lambda doc: (True, "claims all"), load=broken)
    modules = (greedy, fragile, *detect_module.MODULES)
    monkeypatch.setattr(detect_module, "MODULES", modules)
    monkeypatch.setattr("compaction.formats.MODULES", modules)
    assert load_conversations(DATA / "qwen_code_session.jsonl")[0].format == "qwen-code"
