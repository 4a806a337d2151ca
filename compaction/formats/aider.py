"""Aider chat history Markdown (`.aider.chat.history.md`), one conversation per session.

Aider appends every session to the same file. `#### ` lines are the user's prompts, blockquoted
lines (`> `) are aider's own console output (commands, file adds, token reports, `/run` output),
and everything else is the assistant's reply. There are no structured tool calls, so console
output is kept as `system` messages in place: it is what the user saw, and dropping it would hide
command results the assistant went on to use.
"""

from __future__ import annotations

import re

from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "aider"
SESSION = re.compile(r"^# aider chat started at (.*)$")
PROMPT = "#### "


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "text":
        return False, "not plain text"
    lines = doc.text.splitlines()
    if any(SESSION.match(line) for line in lines[:50]):
        return True, "Markdown with `# aider chat started at` session headers"
    if any(line.startswith(PROMPT) for line in lines):
        return True, "Markdown with `#### ` user prompts (aider's chat history)"
    return False, "no `# aider chat started at` header or `#### ` prompt lines"


def load(doc: Document) -> list[Conversation]:
    sessions: list[tuple[int, str | None, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] = []
    started: str | None = None
    start_line = 1
    for number, line in enumerate(doc.text.splitlines(), start=1):
        match = SESSION.match(line)
        if match:
            if started is not None or any(text.strip() for _, text in current):
                sessions.append((start_line, started, current))
            current, started, start_line = [], match.group(1).strip(), number
            continue
        current.append((number, line))
    sessions.append((start_line, started, current))
    conversations = []
    empty: list[int] = []
    for start, when, lines in sessions:
        messages, startup = _session_messages(lines)
        if not any(m["role"] in ("user", "assistant") for m in messages):
            empty.append(start)
            continue
        metadata: dict[str, object] = {"started_at": when, "line": start}
        model = re.search(r"^Main model: (\S+)", startup, re.MULTILINE)
        if model:
            metadata["model"] = model.group(1)
        conversations.append(
            Conversation(
                messages=messages,
                format=NAME,
                title=f"aider session {when}" if when else "aider session",
                metadata=metadata,
            )
        )
    if empty and conversations:
        conversations[0].warnings.append(
            f"line(s) {', '.join(map(str, empty))}: skipped {len(empty)} session(s) with no "
            "prompt or reply"
        )
    return conversations


def _session_messages(lines: list[tuple[int, str]]) -> tuple[list[Message], str]:
    """Messages of one session, plus the startup console text before its first prompt."""
    messages: list[Message] = []
    kind: str | None = None
    buffer: list[str] = []
    startup = ""

    def flush() -> None:
        nonlocal startup
        text = "\n".join(buffer).strip("\n")
        buffer.clear()
        if kind is None or not text.strip():
            return
        role = {"prompt": "user", "console": "system", "reply": "assistant"}[kind]
        if role == "system" and not messages:
            startup = text
        if messages and messages[-1]["role"] == role and role != "assistant":
            messages[-1]["content"] += "\n" + text
        else:
            messages.append({"role": role, "content": text})

    for _, line in lines:
        if line.startswith(PROMPT) or line.rstrip() == "####":
            this, text = "prompt", line[len(PROMPT) :]
        elif line.startswith(">"):
            this, text = "console", line[1:].removeprefix(" ")
        else:
            this, text = "reply", line
        # Blank lines belong to the current block; they never start one.
        if not line.strip() and kind is not None:
            buffer.append("")
            continue
        if this != kind:
            flush()
            kind = this
        # Aider ends prompt and console lines with two spaces (a Markdown line break).
        buffer.append(text.rstrip() if this != "reply" else text)
    flush()
    return messages, startup
