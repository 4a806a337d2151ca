"""Cursor's "Export chat" Markdown: the corpus file (Cursor 2.6.19) and hand-made edge cases."""

from __future__ import annotations

import re

from format_helpers import corpus_file, roles

from compaction.formats import detect_format, load_conversation
from compaction.messages import last_user_index, tool_calls

CURSOR = "cursor-magnitude__cursor-chat.md"


def test_the_corpus_export_is_its_turns_with_no_tool_calls() -> None:
    path = corpus_file(CURSOR)
    text = path.read_text()
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "cursor"
    speakers = re.findall(r"^\*\*(User|Cursor)\*\*$", text, re.MULTILINE)
    assert roles(conversation) == ["user" if s == "User" else "assistant" for s in speakers]
    assert len(conversation.messages) == 30
    assert conversation.messages[0]["content"] == (
        "How do i build / run this from source with a goal?"
    )
    # Every turn opens after a `---`; the other rules are inside turns, and kept there.
    rules = sum(1 for line in text.splitlines() if line.strip() == "---")
    kept = sum(m["content"].count("\n---\n") for m in conversation.messages)
    assert kept == rules - len(speakers) > 0
    last = text.rstrip().splitlines()[-1]
    assert conversation.messages[-1]["content"].endswith(last)
    assert not any(tool_calls(m) for m in conversation.messages)
    assert any("keeps no tool calls" in w for w in conversation.warnings)
    assert conversation.title == "Building and running from source"
    assert conversation.metadata["version"] == "2.6.19"
    assert last_user_index(conversation.messages) == 28


def test_a_speaker_line_inside_code_or_without_a_rule_does_not_start_a_turn() -> None:
    text = (
        "# Fenced\n_Exported on 1/2/2026 at 10:00:00 GMT from Cursor (2.6.19)_\n\n---\n\n"
        "**User**\n\nShow me the template.\n\n---\n\n**Cursor**\n\nHere it is:\n\n"
        "```markdown\n---\n\n**User**\n\nnot a turn\n```\n\n**User** is how a turn opens.\n\n"
        "---\n\n**User**\n\nThanks.\n"
    )
    conversation = load_conversation(text)
    assert roles(conversation) == ["user", "assistant", "user"]
    assert "not a turn" in conversation.messages[1]["content"]
    assert conversation.messages[2]["content"] == "Thanks."
