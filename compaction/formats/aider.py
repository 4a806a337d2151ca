"""Aider chat history Markdown (`.aider.chat.history.md`), one conversation per session.

Aider appends every session to the same file. `#### ` lines are the user's prompts, blockquoted
lines (`> `) are aider's own console output (commands, file adds, token reports, `/run` output),
and everything else is the assistant's reply. There are no structured tool calls, so console
output is kept as `system` messages in place: it is what the user saw, and dropping it would hide
command results the assistant went on to use. A prompt that is nothing but aider commands
(`/add`, `/run`, `!cmd`, `/exit`…) drives the tool rather than asking the model anything: it is
marked as a command (messages.INJECTED_KEY), so the latest request is the user's last real one.
"""

from __future__ import annotations

import re

from compaction.formats.common import mark_injected
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
    for message in messages:
        if message["role"] == "user" and _is_command(message["content"]):
            mark_injected(message, "command")
    return messages, startup


#: Aider runs every prompt line that opens with `/word` or `!` as a command (an unknown one only
#: prints "Invalid command"), and none of them reaches the model as a request, except these
#: four followed by text: they send that text on in the chosen mode.
MODE_SWITCHES = frozenset(("ask", "code", "architect", "context"))
COMMAND = re.compile(r"^/([A-Za-z][\w-]*)(?:\s+(.*))?$|^!\S")


def _is_command(text: str) -> bool:
    """True when every line of a prompt is an aider command (or `!cmd`, its shell shorthand):
    the user drove the tool, they did not ask the model anything."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    for line in lines:
        match = COMMAND.match(line)
        if match is None:
            return False
        name, rest = match.group(1), match.group(2)
        if name is not None and name.lower() in MODE_SWITCHES and rest and rest.strip():
            return False
    return True
