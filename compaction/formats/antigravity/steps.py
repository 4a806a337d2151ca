"""Antigravity trajectory steps: their types and sources, and their text and tool arguments
decoded (the args values are JSON-encoded strings)."""

from __future__ import annotations

import json
import re
from typing import Any

from compaction.formats.common import as_text

NAME = "antigravity"
SOURCES = ("USER_EXPLICIT", "MODEL", "SYSTEM")
USER_INPUT = "USER_INPUT"
PLANNER = "PLANNER_RESPONSE"
# Action steps and the tools whose results they hold (used to prefer the right open call when a
# response made several; steps of other types still answer calls in order).
ACTION_TOOLS: dict[str, tuple[str, ...]] = {
    "CODE_ACTION": ("write_to_file", "replace_file_content", "multi_replace_file_content"),
    "VIEW_FILE": ("view_file", "view_file_outline", "view_code_item", "view_content_chunk"),
    "RUN_COMMAND": ("run_command",),
    "COMMAND_STATUS": ("command_status",),
    "SEND_COMMAND_INPUT": ("send_command_input",),
    "GREP_SEARCH": ("grep_search",),
    "FIND": ("find_by_name",),
    "LIST_DIRECTORY": ("list_dir",),
    "READ_URL_CONTENT": ("read_url_content",),
    "SEARCH_WEB": ("search_web",),
    "BROWSER_SUBAGENT": ("browser_subagent",),
    "GENERIC": (),
}
# System injections: what each is and whether its text is kept for the model.
SYSTEM_STEPS = {
    "SYSTEM_MESSAGE": "system",
    "CONVERSATION_HISTORY": "system",
    "KNOWLEDGE_ARTIFACTS": "system",
    "CHECKPOINT": "checkpoint",
    "EPHEMERAL_MESSAGE": "ephemeral",
    "ERROR_MESSAGE": "error",
}
FAILED = ("ERROR", "FAILED", "CANCELED", "CANCELLED")
BRAIN = re.compile(
    r"antigravity/brain/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)
TRUNCATED = re.compile(r"\n<truncated (\d+) bytes>")
MODEL_SETTING = re.compile(r"setting `Model Selection` from .*? to (.+?)\.(?:\s|$)")
REQUEST_END = "</USER_REQUEST>"
REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*(?:</USER_REQUEST>|$)", re.DOTALL)


def is_step(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("type"), str)
        and "step_index" in record
        and record.get("source") in SOURCES
    )


def decode_value(value: str) -> tuple[Any, bool]:
    """One JSON-encoded arg value decoded, and whether the export had truncated it.

    The export cuts long values (2,048 characters, then `\\n<truncated N bytes>`), which leaves
    an unterminated JSON string: its prefix is decoded and the marker kept at the end.
    """
    try:
        return json.loads(value), False
    except json.JSONDecodeError:
        pass
    match = TRUNCATED.search(value)
    if match is None or match.end() != len(value) or not value.startswith('"'):
        return value, False
    prefix = value[: match.start()]
    for cut in range(8):  # the cut may fall inside an escape such as \\u00e9
        try:
            text = json.loads(prefix[: len(prefix) - cut] + '"')
        except json.JSONDecodeError:
            continue
        if isinstance(text, str):
            return f"{text}\n<truncated {match.group(1)} bytes>", True
    return value, True


def decode_args(args: Any, line: int, warnings: list[str], truncated: list[int]) -> Any:
    """Arguments with each JSON-encoded string value decoded (a value that is not JSON stays)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return {"input": args}
    if not isinstance(args, dict):
        if args is not None:
            warnings.append(f"line {line}: tool-call args are not an object; kept as `value`")
            return {"value": args}
        return {}
    decoded: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str):
            decoded[key], cut = decode_value(value)
            if cut:
                truncated.append(line)
        else:
            decoded[key] = value
    return decoded


def step_text(step: dict[str, Any]) -> str:
    text = as_text(step.get("content"))
    error = step.get("error")
    status = str(step.get("status") or "")
    if error:
        error_text = as_text(error.get("message", error) if isinstance(error, dict) else error)
        text = "\n".join(part for part in (text, f"Error: {error_text}") if part)
    elif status.upper() in FAILED and not text:
        text = f"(step {status})"
    return text


def title_of(text: str, limit: int = 80) -> str | None:
    """The user's request (inside `<USER_REQUEST>`) on one line, shortened."""
    match = REQUEST.search(text)
    title = " ".join((match.group(1) if match else text).split())
    if not title:
        return None
    return title if len(title) <= limit else title[: limit - 1] + "…"
