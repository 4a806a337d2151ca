"""Tool outputs as a person reads them: JSON-wrapped terminal results decoded to their text.

Several agents store a tool's output as a JSON document rather than as the text it printed:
hermes writes `{"output": "...", "exit_code": 0, "error": null}`, Codex
`{"output": "...", "metadata": {"exit_code": 0, "duration_seconds": 0.4}}`, others
`{"stdout": "...", "stderr": "...", "returncode": 1}` or a JSON string literal. Shown as stored,
such an output is one long line of `\\n` and `\\t` escapes; its lines, its error and its exit
code are inside. This module is the one place that takes them out, for display (the app's
previews, detail pane, diffs) and for the one-line summaries of Phase 1.

Everything here is linear in the size of the output (one `json.loads`, one `json.dumps`), never
raises on malformed or hostile input (deep nesting, huge documents, non-JSON that merely starts
with a brace), and leaves anything that is not recognisably JSON exactly as it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: Fields holding the output's main text, in the order they are preferred.
TEXT_FIELDS = ("output", "stdout", "result", "content", "text")
#: Fields holding an exit status (at the top level or inside "metadata").
EXIT_FIELDS = ("exit_code", "exitCode", "returncode", "return_code", "status_code")
#: Fields holding error text.
ERROR_FIELDS = ("error", "stderr")
#: Above this many characters an output is shown as stored: decoding stays linear, but a
#: multi-megabyte JSON document pretty-printed for a preview is wasted work for the page.
MAX_DECODE_CHARS = 20_000_000


@dataclass(frozen=True)
class ToolOutput:
    """A tool output taken apart.

    `text` is what the tool printed (a wrapper's text field, plus its stderr or error when they
    hold anything); for an output that is not a wrapper it is the output unchanged. `wrapped`
    says the text came out of a JSON wrapper; `json_value` holds any other JSON document the
    output is (an object or array that is not a wrapper), for pretty-printing.
    """

    raw: str
    text: str
    wrapped: bool = False
    exit_code: int | None = None
    error: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    json_value: Any = None
    is_json: bool = False

    @property
    def formatted(self) -> str:
        """The output for reading: the decoded text, else readable JSON, else as stored."""
        if self.wrapped:
            return self.text
        if self.is_json:
            return readable_json(self.json_value)
        return self.raw


def _load(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is a JSON object, array or string; (False, None) otherwise."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_DECODE_CHARS:
        return False, None
    first, last = stripped[0], stripped[-1]
    if (first, last) not in (("{", "}"), ("[", "]"), ('"', '"')):
        return False, None  # the cheap test that keeps plain text from ever reaching the parser
    try:
        return True, json.loads(stripped)
    except (ValueError, RecursionError):  # malformed, or nested deeper than the parser goes
        return False, None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _exit_code(document: dict[str, Any]) -> int | None:
    for holder in (document, document.get("metadata")):
        if isinstance(holder, dict):
            for name in EXIT_FIELDS:
                code = _int(holder.get(name))
                if code is not None:
                    return code
    return None


def _metadata(document: dict[str, Any], used: set[str]) -> dict[str, str]:
    """The wrapper's other scalar fields (duration, cwd…), as short strings for a caption."""
    found: dict[str, str] = {}
    nested = document.get("metadata")
    pairs = list(document.items()) + (list(nested.items()) if isinstance(nested, dict) else [])
    for name, value in pairs:
        if name in used or name == "metadata" or name in EXIT_FIELDS:
            continue
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            shown = str(value)
            if shown and len(shown) <= 200:
                found[str(name)] = shown
        if len(found) >= 8:
            break
    return found


def _text_blocks(value: list[Any]) -> str | None:
    """The text of a list of content blocks (`[{"type": "text", "text": "..."}]`), else None."""
    if not value or not all(
        isinstance(block, dict) and isinstance(block.get("text"), str) for block in value
    ):
        return None
    return "\n".join(block["text"] for block in value)


def parse_tool_output(raw: str) -> ToolOutput:
    """Take a tool output apart (see ToolOutput). Never raises; plain text comes back as is."""
    if not isinstance(raw, str):  # callers are typed, but a UI must survive any stored value
        raw = str(raw)
    loaded, value = _load(raw)
    if not loaded:
        return ToolOutput(raw=raw, text=raw)
    if isinstance(value, str):
        return ToolOutput(raw=raw, text=value, wrapped=True)
    if isinstance(value, list):
        blocks = _text_blocks(value)
        if blocks is not None:
            return ToolOutput(raw=raw, text=blocks, wrapped=True)
        return ToolOutput(raw=raw, text=raw, json_value=value, is_json=True)
    if not isinstance(value, dict):
        return ToolOutput(raw=raw, text=raw, json_value=value, is_json=True)
    main = next((name for name in TEXT_FIELDS if isinstance(value.get(name), str)), None)
    if main is None:
        return ToolOutput(raw=raw, text=raw, json_value=value, is_json=True)
    text = value[main]
    error = None
    for name in ERROR_FIELDS:
        extra = value.get(name)
        if isinstance(extra, str) and extra.strip():
            # Appended as the tool printed it: an error line is read (and counted) as a line.
            error = error or extra
            text += ("" if not text or text.endswith("\n") else "\n") + extra
    return ToolOutput(
        raw=raw,
        text=text,
        wrapped=True,
        exit_code=_exit_code(value),
        error=error,
        metadata=_metadata(value, {main, *ERROR_FIELDS}),
    )


def may_be_wrapped(text: str) -> bool:
    """False when `text` cannot be a wrapper (no text field named in it, not a JSON string or
    array): a substring scan, so callers that only want the wrapped text (Phase 1, on every
    output) skip parsing JSON documents that are not wrappers."""
    stripped = text.lstrip()
    if stripped.startswith(('"', "[")):
        return True
    return stripped.startswith("{") and any(f'"{name}"' in text for name in TEXT_FIELDS)


def decode_tool_output(text: str) -> str:
    """The text a tool printed: a JSON wrapper's output (with its stderr or error), a JSON string
    literal decoded; anything else exactly as given."""
    if not isinstance(text, str):
        return str(text)
    return parse_tool_output(text).text if may_be_wrapped(text) else text


def format_tool_output(text: str) -> str:
    """A tool output for reading: decoded when wrapped, pretty-printed when other JSON."""
    return parse_tool_output(text).formatted


def readable_json(value: Any) -> str:
    """A JSON document for reading. An object whose string fields hold several lines (a patch
    tool's `{"success": true, "diff": "--- a/x\\n+++ b/x…"}`) is shown field by field, each
    multi-line string as its lines; anything else as indented JSON."""
    if not isinstance(value, dict) or not any(
        isinstance(item, str) and "\n" in item for item in value.values()
    ):
        return pretty_json(value)
    lines: list[str] = []
    for key, item in value.items():
        if isinstance(item, str) and "\n" in item:
            lines.append(f"{key}:")
            lines.append(item.rstrip("\n"))
        elif isinstance(item, str):
            lines.append(f"{key}: {item}")
        else:
            lines.append(f"{key}: {pretty_json(item)}")
    return "\n".join(lines)


def pretty_json(value: Any) -> str:
    """`value` as indented JSON with non-ASCII characters kept as they are."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return str(value)
