"""A conversation's title as a person reads it (issue 33): a Codex session's title showed as raw
Markdown with its Windows path's backslashes doubled, another's as a bare URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import load_conversation
from compaction.formats.titles import readable_title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("**Fix** the `login` bug\nmore", "Fix the login bug"),
        ("# Task: port [the parser](https://x.y/z)", "Task: port the parser"),
        ("Build it in C:\\\\Users\\\\me\\\\proj now", "Build it in C:\\Users\\me\\proj now"),
        ("https://github.com/a/b\n\nMake it work", "Make it work"),
        ("https://github.com/santifer/career-ops/", "github.com/santifer/career-ops"),
        ("snake_case_name and 2*3*4", "snake_case_name and 2*3*4"),
        ("> quoted *emphasis* here", "quoted emphasis here"),
        ("   \n\n", None),
        ("x" * 100, "x" * 79 + "…"),
    ],
)
def test_a_title_is_the_users_words_without_their_markup(text: str, title: str | None) -> None:
    assert readable_title(text) == title


def test_an_imported_codex_session_is_titled_in_plain_words(tmp_path: Path) -> None:
    records = [
        {"type": "session_meta", "payload": {"id": "s", "cwd": "C:\\proj"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "## **Fix** `C:\\\\Users\\\\me\\\\app.py`\n\nIt crashes.",
                    }
                ],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Looking."}],
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert load_conversation(path).title == "Fix C:\\Users\\me\\app.py"
