"""The user's own words in a user turn: what the summary may quote as the user's request, rules
and questions.

A user-role message carries much the user never wrote, and a summary that quotes it as theirs
states a falsehood ("Constraints: Do not use it." from a pasted build log). This module is the
one place that says what, in a user turn, is the user speaking:

- **Transport tags** are the harness's envelope, not words: `<USER_REQUEST>…</USER_REQUEST>`
  (Antigravity), `<user_query>`, Cline's `<task>` hold the user's words and are unwrapped;
  `<system-reminder>`, `<ADDITIONAL_METADATA>`, `<environment_details>` and the other blocks a
  harness adds to the turn are dropped whole.
- **A slash command** (`<command-name>/create-checkpoint</command-name>` with its
  `<command-args>`) is the user's request, written back as `/create-checkpoint ARGS`; the
  command's expansion that follows it (the command file's text, which the harness sends in the
  user's place) is part of the request (`request_text`) but not the user's words (`own_words`):
  its "never …" lines are the command author's, not a rule this user set.
- **Pasted material** is not the user's rules either: code blocks, lines that read as a tool's
  output or a file's content (line-numbered `19: …` or `  19→…`, shell prompts, log lines that
  open with a symbol or a level, tracebacks, JSON, diff and table rows), and a pasted agent
  transcript (three or more lines in an agent's voice: "Thinking:", "Let me …", "I'll …") of
  which only the last paragraph, the user's own framing, is kept.
- **Sentences are whole**: a hard-wrapped paragraph is one run of text (`prose_sentences`), so a
  rule is never cut at a line break of the pasted text it came in.

`messages.is_user_request` says which user-role messages are the user's requests at all: the
user's own turns and their slash commands, never hook output, reminders or an earlier summary.
"""

from __future__ import annotations

import re

from compaction.messages import (
    INJECTED_KEY,
    SLASH_COMMAND,
    Message,
    content_text,
    is_user_request,
)

#: Tags whose content is the user's words inside a harness's envelope: unwrapped.
_ENVELOPES = ("USER_REQUEST", "user_query", "user_request", "userRequest", "task", "user_message")
#: Blocks a harness adds to a user turn: dropped with their content.
_HARNESS_BLOCKS = (
    "system-reminder",
    "ADDITIONAL_METADATA",
    "USER_SETTINGS_CHANGE",
    "EPHEMERAL_MESSAGE",
    "environment_details",
    "environment_context",
    "user_instructions",
    "local-command-caveat",
    "local-command-stdout",
    "local-command-stderr",
    "command-message",
    "context_update",
    "session_context",
    "hook_context",
    "ide_selection",
    "ide_opened_file",
    "ide_context",
    "user-prompt-submit-hook",
    "task-notification",
)
#: Material a harness quotes inside the user's turn: an issue's text in a benchmark's task
#: prompt is the issue author's, not rules the user set. Kept in the request, not in the words.
_QUOTED_BLOCKS = ("issue_description", "pr_description", "problem_statement", "uploaded_files")
_QUOTED = re.compile(r"<(" + "|".join(_QUOTED_BLOCKS) + r")>.*?(?:</\1>|\Z)", re.S)
_BLOCK = re.compile(r"<(" + "|".join(_HARNESS_BLOCKS) + r")(?:\s[^>]*)?>.*?(?:</\1>|\Z)", re.S)
_ENVELOPE = re.compile(r"</?(?:" + "|".join(_ENVELOPES) + r")(?:\s[^>]*)?>")
_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.S)
_COMMAND_TAGS = re.compile(r"<(command-name|command-args)>.*?</\1>", re.S)

#: A message longer than this, with AGENT_VOICE_LINES lines in an agent's voice, is a pasted
#: transcript: only its last paragraph is the user's.
PASTE_CHARS = 2_000
AGENT_VOICE_LINES = 3
_AGENT_VOICE = re.compile(
    r"^\s*(?:Thinking:|(?:Now,? |OK,? |Okay,? |Actually,? )?(?:let me|i'll|i will|i'm going to|"
    r"i need to check|i should)\b)",
    re.I | re.M,
)
_CODE_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
# A line that reads as a tool's output or a file's content rather than a person typing.
_LEVELS = r"(?:INFO|WARN(?:ING)?|ERROR|DEBUG|TRACE|FATAL|NOTICE)"
_PASTED_LINE = re.compile(
    r"^(?:\s*\d{1,6}(?:→|\t|\||: | {2,})"  # numbered: `19: …`, `   19→…` (cat -n, grep -n)
    r"|\s*(?:\$|❯|➜|>>>|%|PS [A-Z]:\\)\s"  # a shell or REPL prompt
    r"|\s*>\s"  # a quotation: someone else's words
    r"|\s*[^\x00-\x7f\w\s•“”‘’«»]"  # opens with a symbol: ⚠ ✓ ✗ ● │ ├ └ ▲ ⨯ ○ ℹ → …
    r"|\s*(?:\[" + _LEVELS + r"\]|(?i:" + _LEVELS + r"):)"  # a log line
    r"|\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d"  # a timestamped line
    r"|\s+at [\w.$<>]+ ?\(|\s+at \S+:\d+:\d+|\s*File \"[^\"]+\", line \d+"  # stack frames
    r"|\s*(?:Traceback \(|Caused by: |npm (?:ERR|WARN)|E {2,})"
    r"|\s*[{}\[\]][\s,]*$|\s*\"[\w.-]+\"\s*:"  # JSON
    r"|[+-]{3} |@@ |[+-](?![-+\s])"  # a diff
    r"|\s*\|.*\|\s*$"  # a table row
    r"| {4,}(?![-*•]\s|\d{1,3}[.)]\s)|\t)",  # indented code (not a nested list item)
    re.M,
)
# Lines left blank (or only spaces) where blocks were taken out: one paragraph break.
_BLANK_RUN = re.compile(r"[ \t]*\n(?:[ \t]*\n)+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: A line at least this long that ends mid-sentence was broken by a hard wrap (typical wraps
#: are at 72–100 characters); a shorter one is a title or a line of its own.
WRAPPED_LINE_CHARS = 50
_JOINS_NEXT = re.compile(r"[\w,;\-–—(/'\"`]$")


def collapse(text: str) -> str:
    return " ".join(text.split())


def slash_command(text: str) -> str | None:
    """`/name args` when `text` is a slash command's wrapper, else None."""
    if "<command-name>" not in text:
        return None
    name = _COMMAND_NAME.search(text)
    if name is None or not name.group(1).strip():
        return None
    command = name.group(1).strip()
    if not command.startswith("/"):
        command = "/" + command
    args = _COMMAND_ARGS.search(text)
    return f"{command} {args.group(1).strip()}".strip() if args else command


def unwrapped(text: str) -> str:
    """`text` without the harness's blocks and envelopes; a slash command as `/name args`
    followed by whatever else the turn holds (its expansion)."""
    if "<" not in text:
        return text.replace("\u2019", "'").strip()
    command = slash_command(text)
    if command is not None:
        rest = _COMMAND_TAGS.sub(" ", text)
        text = command + "\n\n" + rest
    text = _BLOCK.sub("\n", text)
    text = _ENVELOPE.sub("", text)
    text = _BLANK_RUN.sub("\n\n", text)
    return text.replace("\u2019", "'").strip()


def request_text(message: Message) -> str:
    """The request as the summary's Active Task and Goal quote it: the turn's text without the
    harness's envelope, a slash command written as `/name args` with its expansion after it."""
    return unwrapped(content_text(message))


def own_words(message: Message, mark: str | object | None = ...) -> str:
    """What the user typed in this turn: `request_text` without a slash command's expansion,
    without pasted material (code blocks, output-like lines), and of a pasted transcript only
    its last paragraph. "" for a message that is not a user request. `mark` is the message's
    mark (messages.Marks); left out, its own `injected` key."""
    kind = message.get(INJECTED_KEY) if mark is ... else mark
    if not is_user_request(message, kind):
        return ""
    text = content_text(message)
    command = slash_command(text)
    if command is not None:
        return command  # what follows the wrapper is the command's expansion, not typed
    if kind == SLASH_COMMAND:
        return ""  # an expansion sent without its command's wrapper
    return typed_text(unwrapped(text))


def typed_text(text: str) -> str:
    """`text` without what reads as pasted (see the module docstring)."""
    if "```" in text or "~~~" in text:
        text = _CODE_FENCE.sub("\n\n", text)
    if "<" in text:
        text = _QUOTED.sub("\n\n", text)
    if len(text) > PASTE_CHARS and len(_AGENT_VOICE.findall(text)) >= AGENT_VOICE_LINES:
        paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        text = paragraphs[-1] if paragraphs else ""
        lines = text.splitlines()
        # The last paragraph of a transcript may still end in its last lines: keep the lines
        # after the last one in an agent's voice.
        for position in range(len(lines) - 1, -1, -1):
            if _AGENT_VOICE.match(lines[position]):
                text = "\n".join(lines[position + 1 :])
                break
    kept = [line for line in text.splitlines() if not _PASTED_LINE.match(line)]
    return "\n".join(kept).strip()


def prose_sentences(text: str) -> list[str]:
    """The sentences of `text`, whole, each collapsed to one line.

    A hard wrap breaks a paragraph into lines that are one sentence's parts, so lines are joined
    into runs first: a line continues the one before when it starts in lower case, or when the
    one before is a wrapped line (long, ending mid-sentence). A blank line, a heading, a bold
    title, a list item or a short line ("Objective:") starts a new run; so does anything after a
    list item but its indented continuation."""
    runs: list[str] = []
    current: list[str] = []
    in_item = False
    for raw in text.splitlines():
        line = raw.strip()
        item = _LIST_ITEM.match(raw) is not None
        starts_new = not line or item or line.startswith(("#", ">", "**", "__"))
        continues = False
        if current and line:
            previous = current[-1]
            wrapped = len(previous) >= WRAPPED_LINE_CHARS and _JOINS_NEXT.search(previous)
            continues = bool(wrapped or (line[:1].islower() and _JOINS_NEXT.search(previous)))
            if in_item and not raw[:1].isspace():
                continues = False
        if current and (starts_new or not continues):
            runs.append(" ".join(current))
            current = []
        if line:
            if not current:
                in_item = item
            current.append(line)
    if current:
        runs.append(" ".join(current))
    return [collapse(piece) for run in runs for piece in _SENTENCE_END.split(run) if piece.strip()]
