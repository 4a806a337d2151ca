"""Importing agent conversations from the formats real tools write, and exporting them again.

`load_conversation(source)` turns a path, bytes or text into a `Conversation` of canonical
(OpenAI chat) messages, recognising the format from the content; `load_conversations` returns every
conversation of a multi-conversation file; `dump_conversation` writes messages for the OpenAI or
Anthropic API. Every imported conversation has passed `validate_messages`, so the engine accepts it.
"""

from __future__ import annotations

from typing import Any

from compaction.errors import FormatError, InvalidConversationError
from compaction.formats.common import mark_injected_messages
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.coverage import Coverage, has_content, measure
from compaction.formats.detect import (
    FORMATS,
    MODULES,
    Detection,
    as_document,
    detect_format,
    module_for,
)
from compaction.formats.exporters import EXPORT_FORMATS, dump_conversation
from compaction.formats.source import Document
from compaction.input.checks import validate_messages
from compaction.messages import split_marks


def load_conversations(source: Any, format: str = "auto") -> list[Conversation]:
    """Every conversation in `source` (a path, bytes, text, or a parsed JSON value).

    Whatever the format, the import is checked against the file (`formats/coverage.py`): an
    import whose messages hold nothing is an error, one that holds less than half of the file's
    text is a warning, both naming the records that were not read. With `format="auto"`, a
    format that recognised the file but read too little of it gives way to any other format
    that recognises it and reads more, and the import says so.
    """
    document = as_document(source)
    if format != "auto":
        module = module_for(format)
        matched, reason = module.sniff(document)
        if not matched:
            raise FormatError(f"not {module.NAME} content: {reason}", source=document.name)
        conversations, coverage = _import(module, document)
        return _judged(module.NAME, document, conversations, coverage)
    name = detect_format(document).name
    first = module_for(name)
    attempts = [(first, *_import(first, document))]
    if _wanting(attempts[0][1], attempts[0][2]):
        # Recognised by its keys, but the text is not in the messages: any other format that
        # recognises the file is given the chance to read it (MODULES order, most specific
        # first), and the one that reads most is kept.
        for module in MODULES[MODULES.index(first) + 1 :]:
            if not module.sniff(document)[0]:
                continue
            try:
                attempts.append((module, *_import(module, document)))
            except (FormatError, *IMPORT_FAILURES):
                continue  # this format does not read it either; the others are judged
    module, conversations, coverage = max(attempts, key=lambda a: _score(a[1], a[2]))
    if module is not first:
        note = (
            f"read as {module.NAME}: the {first.NAME} importer, which recognised the file "
            f"first, read {attempts[0][2].share:.0%} of its text"
        )
        conversations[0].warnings.insert(0, note)
    return _judged(module.NAME, document, conversations, coverage)


def _import(module: Any, document: Document) -> tuple[list[Conversation], Coverage]:
    """The module's conversations, checked and finished, and how much of the file they read."""
    conversations = _finish(module, document)
    return conversations, measure(document, conversations)


def _wanting(conversations: list[Conversation], coverage: Coverage) -> bool:
    return coverage.low or not _any_content(conversations)


def _score(conversations: list[Conversation], coverage: Coverage) -> tuple[bool, float]:
    return _any_content(conversations), coverage.share


def _any_content(conversations: list[Conversation]) -> bool:
    return any(has_content(m) for c in conversations for m in c.messages)


def _judged(
    name: str, document: Document, conversations: list[Conversation], coverage: Coverage
) -> list[Conversation]:
    """The conversations, or the error an import that read nothing is; a low read share is a
    warning naming what was not read."""
    unread = "; ".join(coverage.unread_lines()) or "no record holds text the messages could show"
    if not _any_content(conversations):
        count = sum(len(c.messages) for c in conversations)
        raise FormatError(
            f"the {name} importer read nothing of this file: its {count} message(s) hold no "
            f"text, tool call or image. Records whose text is not in them: {unread}",
            source=document.name,
        )
    if coverage.low:
        conversations[0].warnings.insert(
            0,
            f"only {coverage.summary()}; the {name} importer did not read these records: {unread}",
        )
    return conversations


def _finish(module: Any, document: Document) -> list[Conversation]:
    """What every importer's conversations go through: validity, injected marks, the report."""
    name = module.NAME
    conversations: list[Conversation] = module.load(document)
    finished = []
    for position, conversation in enumerate(conversations):
        where = f"conversation {position}: " if len(conversations) > 1 else ""
        if not conversation.messages:
            conversation.warnings.append(f"{where}no messages; left out")
            continue
        try:
            messages, repairs = validate_messages(conversation.messages)
        except InvalidConversationError as exc:
            raise FormatError(
                f"{where}imported {name} messages are not usable: {exc}", source=document.name
            ) from exc
        # Hook output, reminders and command wrappers are not the user speaking: marked here for
        # every format, so the summary's Active Task and Goal come from the user's own words.
        # The marks then leave the messages for `conversation.marks`: a message a provider
        # receives carries only the provider's fields.
        mark_injected_messages(messages)
        messages, marks = split_marks(messages)
        conversation.messages = messages
        conversation.marks = marks
        if conversation.report is None:
            # An importer of a one-message-per-entry format: every entry became a message.
            count = len(messages)
            conversation.report = ImportReport(records=count, imported=count)
        for line in document.bad_lines:
            conversation.report.records += 1
            conversation.report.skip("unreadable line", "not valid JSON (truncated?)", line)
        conversation.format = name
        conversation.source = conversation.source or document.name
        conversation.warnings = [*document.warnings, *conversation.warnings, *repairs]
        finished.append(conversation)
    if not finished:
        raise FormatError(f"the {name} content holds no messages", source=document.name)
    return finished


def load_conversation(source: Any, format: str = "auto", index: int = 0) -> Conversation:
    """One conversation from `source`; `index` picks one from a multi-conversation file."""
    conversations = load_conversations(source, format=format)
    if not -len(conversations) <= index < len(conversations):
        raise FormatError(
            f"conversation index {index} is out of range: the file holds "
            f"{len(conversations)} conversation(s) (0..{len(conversations) - 1})",
            source=conversations[0].source,
        )
    return conversations[index]


#: What an importer raises on a shape it does not expect (reported, never a traceback).
IMPORT_FAILURES = (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError)


def load_for_cli(path: Any, fmt: str | None = "auto", index: int | None = None) -> Conversation:
    """What the CLI commands call: FormatError (never another exception) with a usable message.

    When a file holds several conversations and no index is given, the first is used and a
    warning says how to pick another.
    """
    fmt = fmt or "auto"
    if fmt != "auto" and fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
    try:
        conversations = load_conversations(path, format=fmt)
    except FormatError:
        raise
    except IMPORT_FAILURES as exc:
        # An importer met a shape it does not expect: report it, do not crash.
        raise FormatError(f"cannot import: {type(exc).__name__}: {exc}", source=str(path)) from exc
    chosen = 0 if index is None else index
    if not -len(conversations) <= chosen < len(conversations):
        raise FormatError(
            f"--index {chosen} is out of range: the file holds {len(conversations)} "
            f"conversation(s) (0..{len(conversations) - 1})",
            source=str(path),
        )
    conversation = conversations[chosen]
    if index is None and len(conversations) > 1:
        conversation.warnings.insert(
            0,
            f"the file holds {len(conversations)} conversations; using the first "
            "(pass --index N to choose another)",
        )
    return conversation


__all__ = [
    "EXPORT_FORMATS",
    "FORMATS",
    "Conversation",
    "Detection",
    "ImportReport",
    "RecordedCompaction",
    "detect_format",
    "dump_conversation",
    "load_conversation",
    "load_conversations",
    "load_for_cli",
]
