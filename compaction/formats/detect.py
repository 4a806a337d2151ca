"""Recognising a conversation's format from its content (never from its file name).

Files get renamed, and `.json` or `.jsonl` says nothing about who wrote it. Each format module has
a `sniff(document) -> (matched, reason)`; detection tries them from the most specific to the most
general (plain OpenAI messages last, since many formats are OpenAI-like) and reports the reason,
or, when nothing matches, every format tried and why each did not fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from compaction.errors import FormatError, UnknownFormatError
from compaction.formats import (
    aider,
    anthropic,
    antigravity,
    claude_code,
    cline,
    codex,
    copilot_cli,
    cursor,
    gemini_cli,
    hermes,
    iflow,
    openai,
    opencode,
    openhands,
    otel,
    qwen_code,
    sharegpt,
    swe_agent,
)
from compaction.formats.conversation import Conversation
from compaction.formats.folders import open_location
from compaction.formats.source import Document, parse_text, read_source

# Detection order: specific structures first, the generic message list last.
MODULES: tuple[ModuleType, ...] = (
    otel,
    qwen_code,
    iflow,
    claude_code,
    codex,
    copilot_cli,
    antigravity,
    gemini_cli,
    opencode,
    cline,
    openhands,
    swe_agent,
    hermes,
    sharegpt,
    anthropic,
    openai,
    cursor,
    aider,
)
FORMATS: tuple[str, ...] = tuple(module.NAME for module in MODULES)
Loader = Callable[[Document], list[Conversation]]


@dataclass(frozen=True)
class Detection:
    """Which format a document is in, and the evidence."""

    name: str
    reason: str


def module_for(name: str) -> ModuleType:
    for module in MODULES:
        if name == module.NAME:
            return module
    raise UnknownFormatError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")


def as_document(data: Any) -> Document:
    """A Document from a Document, a source (path, bytes, text) or an already-parsed JSON value.

    A folder, a database or a session id that holds a session is opened too (folders.py)."""
    if isinstance(data, Document):
        return data
    if isinstance(data, list | dict):
        return Document(text="", kind="json", value=data)
    located = open_location(data)
    return located if located is not None else read_source(data)


def detect_format(data: Any) -> Detection:
    """The format of `data`; UnknownFormatError lists every format tried and why it failed.

    Content clearly meant as OpenAI messages with a broken entry raises FormatError naming it.
    """
    document = as_document(data)
    tried = []
    for module in MODULES:
        matched, reason = module.sniff(document)
        if matched:
            return Detection(module.NAME, reason)
        tried.append(f"{module.NAME}: {reason}")
    diagnosis = openai.diagnose(document)
    if diagnosis is not None:
        # Clearly a message list with a broken entry: name it, not every format tried.
        problem, line = diagnosis
        raise FormatError(problem, source=document.name, line=line)
    shape = {"json": "a JSON document", "jsonl": "JSON Lines", "text": "plain text"}[document.kind]
    raise UnknownFormatError(
        f"not a conversation format this tool knows ({shape}). Tried: " + "; ".join(tried),
        source=document.name,
    )


__all__ = [
    "FORMATS",
    "MODULES",
    "Detection",
    "as_document",
    "detect_format",
    "module_for",
    "parse_text",
]
