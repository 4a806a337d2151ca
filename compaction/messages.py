"""Helpers over canonical (OpenAI chat-completions) messages.

Checking and repairing a message list at the library's door is message_input.py's job.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compaction.summary import is_summary_text

Message = dict[str, Any]

ROLES = ("system", "developer", "user", "assistant", "tool")

#: The mark an importer puts on a user-role message that is not the user speaking: text the
#: agent's harness sent in a user turn. Its value says what sent it (one of INJECTED_KINDS).
#: The summariser reads it (Active Task, Goal, Constraints and Pending User Asks come from the
#: user's own words); the exporters keep only the keys a provider accepts, so it never leaves.
INJECTED_KEY = "injected"
INJECTED_KINDS = (
    "hook",  # hook output (Claude Code's PostToolUse/SessionStart context, Gemini's hooks)
    "stop-hook",  # a stop hook's feedback, sent back as a user turn to keep the agent going
    "system-reminder",  # <system-reminder> text, attachments, skill bodies, caveats
    "command",  # a local command's <command-name> wrapper and its <local-command-stdout>
    # A slash command the user invoked, with the expansion the harness sent in its place: the
    # harness's text, and still the user's request (is_user_request).
    "slash-command",
    "tool-result",  # a tool result carried in a user turn (old SWE-agent observations…)
    "task-notification",  # a background task's <task-notification>
    "context",  # project context the harness sends as a user turn (AGENTS.md, environment)
    "interruption",  # "[Request interrupted by user]"
    "compaction",  # an agent's own compaction handoff (Codex, Gemini CLI, Antigravity checkpoints)
    "continuation",  # the harness telling the model to go on ("System: Please continue.")
)
IMAGE_PART_TYPES = ("image_url", "image", "input_image")


def content_text(message: Message) -> str:
    """The text of a message's content (string, None, or a list of parts; images skipped)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return str(content)


def image_count(message: Message) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(
        1 for part in content if isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES
    )


def tool_calls(message: Message) -> list[dict[str, Any]]:
    """The tool calls of an assistant message (an empty list when it has none)."""
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def has_tool_calls(message: Message) -> bool:
    return message.get("role") == "assistant" and bool(tool_calls(message))


def call_name(call: dict[str, Any]) -> str:
    function = call.get("function")
    if isinstance(function, dict):
        name = function.get("name")
        if isinstance(name, str) and name:
            return name
    return "unknown"


def call_arguments(call: dict[str, Any]) -> str:
    function = call.get("function")
    if isinstance(function, dict):
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            return arguments
    return ""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: One strict decoder for every call: `json.loads(text, parse_constant=...)` builds a new
#: JSONDecoder each time, which cost more than parsing a typical tool call's arguments.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
#: Its scanner (C's, the one `decode` calls), which typeshed does not declare on the decoder.
_STRICT_SCAN: Callable[[str, int], tuple[Any, int]]
_STRICT_SCAN = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]


def loads_json(text: str) -> Any:
    """`json.loads` without NaN, Infinity and -Infinity, which no JSON parser but Python's accepts.

    Text holding them is invalid JSON for a provider; reading it leniently turns it into floats
    that `json.dumps` writes back as bare NaN, making the whole output file invalid.
    """
    if not isinstance(text, str) or text.startswith("\ufeff"):
        # What json.loads does besides decoding (bytes, the BOM error), word for word.
        return json.loads(text, parse_constant=_reject_constant)
    if text.startswith("{"):
        # An object from the first character to the last, as nearly every tool call's arguments
        # are: the scanner alone. `decode` adds two whitespace matches and two Python calls
        # around it, which cost as much as scanning a typical call's arguments. From "{" the
        # scanner raises what `decode` raises (it passes the scanner's errors on), but for a
        # value missing inside (StopIteration, which `decode` words); that and text after the
        # object (whitespace, extra data) go through `decode`, which says the rest.
        try:
            value, end = _STRICT_SCAN(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return _STRICT_DECODER.decode(text)


def has_non_finite_numbers(arguments: str) -> bool:
    """True when `arguments` parse only because Python's json accepts NaN/Infinity."""
    if "NaN" not in arguments and "Infinity" not in arguments:
        return False  # the cheap test first: nearly every argument string stops here
    try:
        loads_json(arguments)
    except ValueError:
        try:
            json.loads(arguments)
        except (ValueError, RecursionError):
            return False  # invalid for other reasons too
        return True
    except RecursionError:
        return False
    return False


def parse_arguments(arguments: str) -> dict[str, Any]:
    """Tool-call arguments as a dict; anything that is not a JSON object gives {}."""
    if not arguments:
        return {}
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def with_content(message: Message, content: Any) -> Message:
    """A copy of `message` with new content (the original is never touched)."""
    copy = dict(message)
    copy["content"] = content
    return copy


def append_text(content: Any, text: str, separator: str = "\n\n") -> Any:
    """Content with `text` appended, keeping a parts list a parts list."""
    if isinstance(content, list):
        return [*content, {"type": "text", "text": text}]
    base = content if isinstance(content, str) else ""
    return f"{base}{separator}{text}" if base else text


def prepend_text(content: Any, text: str, separator: str = "\n\n") -> Any:
    """Content with `text` put first, keeping a parts list a parts list."""
    if isinstance(content, list):
        return [{"type": "text", "text": text}, *content]
    base = content if isinstance(content, str) else ""
    return f"{text}{separator}{base}" if base else text


def is_summary_message(message: Message) -> bool:
    """True when the message is an earlier compaction summary and nothing else (a summary merged
    into a user's message leaves that message the user's: see summary.summary_parts)."""
    return is_summary_text(content_text(message))


#: Which user-role messages are the harness's, by index: message index -> its kind (one of
#: INJECTED_KINDS). Importers give it beside the messages (`Conversation.marks`), never in
#: them: a provider that rejects unknown fields would refuse a message carrying it.
Marks = Mapping[int, str]


def mark_of(message: Message, index: int, marks: Marks | None) -> str | None:
    """The message's mark: from `marks` when given, else the `injected` key a message made by
    an older import (or a caller) may still carry."""
    if marks is not None:
        return marks.get(index)
    kind = message.get(INJECTED_KEY)
    return kind if isinstance(kind, str) and kind else None


def is_injected(message: Message, mark: str | object | None = ...) -> bool:
    """True when this user-role message is the harness's, not the user's (`mark`: its mark from
    `Marks`; left out, the message's own `injected` key)."""
    kind = message.get(INJECTED_KEY) if mark is ... else mark
    return bool(kind)


#: The injected kind of a slash command the user invoked (see INJECTED_KINDS).
SLASH_COMMAND = "slash-command"


def is_user_request(message: Message, mark: str | object | None = ...) -> bool:
    """A user-role message the user sent as a request: their own turn, or a slash command they
    invoked (with its expansion). Hook output, reminders, tool output carried in a user turn
    and earlier summaries are not. `mark` is the message's mark (`Marks`); left out, the
    message's own `injected` key."""
    if message.get("role") != "user" or is_summary_message(message):
        return False
    kind = message.get(INJECTED_KEY) if mark is ... else mark
    return not kind or kind == SLASH_COMMAND


def last_user_index(
    messages: Sequence[Message], start: int = 0, marks: Marks | None = None
) -> int | None:
    """The latest real user message at or after `start`; earlier summaries sent as user messages
    do not count (anchoring to one would stop every later compaction with an empty middle), and
    neither does text the harness injected (hook output, reminders, command wrappers) while the
    user has a request of their own in the range (a turn they wrote, or a slash command they
    invoked): the user's latest request is what they asked. `marks` says which messages the
    harness sent (else their own `injected` keys)."""
    fallback = None
    for index in range(len(messages) - 1, start - 1, -1):
        message = messages[index]
        if message.get("role") == "user" and not is_summary_message(message):
            if is_user_request(message, mark_of(message, index, marks)):
                return index
            if fallback is None:
                fallback = index
    return fallback


def with_marks(messages: Sequence[Message], marks: Marks) -> list[Message]:
    """The messages with each mark written back as its `injected` key (copies of the marked
    ones): the form a store of the lab's keeps them in (the run history), which the engine
    splits apart again at its door (`split_marks`). Never what a provider is sent."""
    return [
        {**message, INJECTED_KEY: marks[index]} if index in marks else message
        for index, message in enumerate(messages)
    ]


def split_marks(
    messages: Sequence[Message], marks: Marks | None = None
) -> tuple[list[Message], dict[int, str]]:
    """(messages without an `injected` key, every mark): the keys a list still carries (an
    older import, a caller's own) joined with `marks` (which win). Copies are made only of the
    messages that carried the key; the rest are the same objects."""
    found: dict[int, str] = {}
    clean: list[Message] = []
    for index, message in enumerate(messages):
        if INJECTED_KEY in message:
            kind = message.get(INJECTED_KEY)
            if isinstance(kind, str) and kind:
                found[index] = kind
            message = {key: value for key, value in message.items() if key != INJECTED_KEY}
        clean.append(message)
    if marks:
        found.update(marks)
    return clean, found


def group_end(messages: Sequence[Message], index: int) -> int:
    """If `index` is inside a tool group, the index just past the group; else `index` itself.

    `index` is a cut position (messages[:index] | messages[index:]); the cut is inside a group when
    messages[index] is a tool result, or when messages[index-1] is an assistant with calls.
    """
    n = len(messages)
    if index <= 0 or index >= n:
        return index
    previous = messages[index - 1]
    if not (has_tool_calls(previous) or previous.get("role") == "tool"):
        return index
    while index < n and messages[index].get("role") == "tool":
        index += 1
    return index
