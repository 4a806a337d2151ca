"""Small builders shared by the importers, so every format produces messages of the same shape.

Canonical tool calls are always `{id, type: "function", function: {name, arguments: JSON}}`;
content that is only text becomes a string; synthetic ids are derived from positions so the same
file always imports to the same messages (the engine's output must be reproducible).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from compaction.formats.conversation import ImportReport
from compaction.formats.titles import readable_title
from compaction.messages import INJECTED_KEY, SLASH_COMMAND, Message, content_text
from compaction.text.patterns import injected_kind, user_text
from compaction.text.user_words import slash_command, unwrapped


def make_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """A canonical tool call; `arguments` may be a JSON string or any JSON-ready value."""
    if isinstance(arguments, str):
        text = arguments
    elif arguments is None:
        text = "{}"
    else:
        text = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(call_id),
        "type": "function",
        "function": {"name": str(name or "unknown"), "arguments": text},
    }


def normalise_call(call: Any, fallback_id: str) -> dict[str, Any]:
    """An OpenAI-style tool call from a source, stripped of provider extras (`index`...)."""
    if not isinstance(call, dict):
        return make_call(fallback_id, "unknown", {"value": call})
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    assert isinstance(function, dict)
    call_id = call.get("id") or call.get("call_id") or fallback_id
    return make_call(
        str(call_id), str(function.get("name") or "unknown"), function.get("arguments")
    )


def tool_message(call_id: str, content: Any, name: str | None = None) -> Message:
    message: Message = {"role": "tool", "tool_call_id": str(call_id), "content": content}
    if name:
        message["name"] = name
    return message


def as_text(value: Any) -> str:
    """Any tool output value as text (objects as JSON, so nothing is lost)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def blocks_to_content(blocks: Any) -> Any:
    """Anthropic-style content (string or blocks of text/image) as canonical content.

    Text-only content collapses to one string; images become `image_url` parts so they are kept.
    """
    if blocks is None:
        return ""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return as_text(blocks)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append(image_part(block))
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif isinstance(block, dict):
            parts.append({"type": "text", "text": as_text(block)})
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return parts


def image_part(block: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic image block as an OpenAI `image_url` part (data URL for base64 sources)."""
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    assert isinstance(source, dict)
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = str(source.get("url", ""))
    return {"type": "image_url", "image_url": {"url": url}}


def join_text(texts: Iterable[str], separator: str = "\n\n") -> str:
    return separator.join(text for text in texts if text)


def first_user_text(messages: list[Message], limit: int = 80) -> str | None:
    """A title from the first user message, for sources that record none (as a person reads
    it: titles.readable_title)."""
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            title = readable_title(str(message["content"]), limit)
            if title:
                return title
    return None


def line_list(lines: list[int], limit: int = 8) -> str:
    """`lines 3, 7, 9` (first few, then a count) for grouped warnings."""
    shown = ", ".join(str(line) for line in lines[:limit])
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    word = "line" if len(lines) == 1 else "lines"
    return f"{word} {shown}{more}"


def grouped_skips(skipped: dict[str, list[int]], why: str) -> list[str]:
    """One warning per skipped record type, naming the lines."""
    return [
        f"{line_list(lines)}: skipped {len(lines)} {kind!r} record(s) ({why})"
        for kind, lines in skipped.items()
    ]


def report_of(
    records: int, skipped: dict[str, list[int]], reason: str | dict[str, str]
) -> ImportReport:
    """An import report from an importer's `{kind: [lines]}` of skipped records.

    `reason` is one reason for every kind, or a reason per kind (missing kinds get "skipped").
    """
    report = ImportReport(records=records)
    for kind, lines in skipped.items():
        why = reason if isinstance(reason, str) else reason.get(kind, "skipped")
        for line in lines:
            report.skip(kind, why, line)
    report.imported = records - report.skipped_total
    return report


# -- whose words a user-role message holds ------------------------------------------------


def mark_injected(message: Message, kind: str) -> Message:
    """`message` marked as text the harness sent in a user turn (messages.INJECTED_KEY)."""
    message[INJECTED_KEY] = kind
    return message


def mark_injected_messages(messages: list[Message]) -> int:
    """Mark, in place, every user-role message whose text opens as harness text does; an
    importer that knows more (Claude Code's isMeta records) has marked its own already.
    Returns how many were marked."""
    marked = 0
    for message in messages:
        if message.get("role") != "user" or message.get(INJECTED_KEY):
            continue
        text = content_text(message)
        kind = injected_kind(text)
        if kind == "system-reminder" and _words_after_reminders(message):
            continue  # reminders put before the user's words: every reader strips them
        if kind == "command" and _expanded_command(text):
            kind = SLASH_COMMAND
        if kind is not None:
            mark_injected(message, kind)
            marked += 1
    return marked


def _expanded_command(text: str) -> bool:
    """A `<command-name>` wrapper followed, in the same turn, by the command's text: a slash
    command the user invoked (a local command's turn is the wrapper alone)."""
    command = slash_command(text)
    if command is None:
        return False
    return unwrapped(text).removeprefix(command).strip() != ""


def _words_after_reminders(message: Message) -> bool:
    """True when a turn that opens with `<system-reminder>` blocks holds the user's own words
    once they are stripped (as the summariser reads it: text_patterns.user_text)."""
    rest = user_text(message).strip()
    return bool(rest) and injected_kind(rest) is None


def split_user_words(
    text: str, start: int, end: int, kind: str, images: list[dict[str, Any]] | None = None
) -> list[Message]:
    """One user turn whose text holds the user's words at text[start:end] inside harness text
    (an IDE's context before them, a reminder after them): the user's words as a message of
    their own, the harness text before and after as messages marked `kind`, in order.

    Splitting rather than marking the whole turn keeps the latest request the user's own text
    (the summary's Active Task quotes it) while nothing the model saw is lost: the parts joined
    again are the original text but for the whitespace at the seams. Images stay with the
    user's words. Returns the one unmarked message when there is no harness text around them.
    """
    before, words, after = text[:start].strip(), text[start:end].strip(), text[end:].strip()
    content: Any = words
    if images:
        content = [{"type": "text", "text": words}, *images] if words else images
    parts: list[Message] = []
    if before:
        parts.append(mark_injected({"role": "user", "content": before}, kind))
    parts.append({"role": "user", "content": content})
    if after:
        parts.append(mark_injected({"role": "user", "content": after}, kind))
    return parts
