"""Gemini CLI chat recordings, JSON and JSONL: the thread, the upserts, `$set` and `$rewindTo`."""

from __future__ import annotations

from typing import Any

from compaction.formats.common import as_text
from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.gemini_cli.mapper import Mapper, Slot
from compaction.formats.gemini_cli.records import (
    COMPRESSED,
    HEADER_KEYS,
    NAME,
    NOTICE_TYPES,
    SNAPSHOT,
    SUPERSEDED,
    TOKENS_FROM,
    is_header,
    is_message_record,
    parts_text,
    title_of,
)
from compaction.formats.source import Document


def header_metadata(value: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value[key]
        for key in (*HEADER_KEYS, "summary", "directories")
        if key in value and value[key] is not None
    }


def load_recording(value: dict[str, Any]) -> Conversation:
    entries = value.get("messages") or []
    report = ImportReport(records=len(entries))
    mapper = Mapper(report=report, where="messages", metadata=header_metadata(value))
    slots = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            report.skip("not an object", "a messages[] entry that is not an object", index)
            mapper.warnings.append(f"messages[{index}]: skipped, not an object")
            continue
        if entry.get("type") in NOTICE_TYPES and COMPRESSED.search(as_text(entry.get("content"))):
            slots.append(Slot(compression=compression_info(entry, index)))
        slots.append(Slot(entry=entry, where=index))
    for slot in slots:
        mapper.slot(slot)
    return conversation_of(mapper, set())


def compression_info(entry: dict[str, Any], where: int) -> dict[str, Any]:
    match = TOKENS_FROM.search(as_text(entry.get("content")))
    tokens = int(match.group(1).replace(",", "")) if match else None
    return {"line": where, "tokens_before": tokens, "summary": None}


def snapshot_of(messages: Any) -> str | None:
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("type") == "user":
            text = parts_text(message.get("content"))
            if text.lstrip().startswith(SNAPSHOT):
                return text
    return None


def load_recording_lines(doc: Document) -> Conversation:
    report = ImportReport(records=len(doc.records))
    metadata: dict[str, Any] = {}
    warnings: list[str] = []
    slots: list[Slot] = []
    by_id: dict[str, Slot] = {}
    from_sets: set[int] = set()  # `$set` lines whose messages went into the thread

    def add(entry: dict[str, Any], line: int, context: bool = False) -> None:
        known = by_id.get(entry["id"])
        if known is not None:
            report.skip(
                SUPERSEDED,
                "the recorder wrote this message again later under the same id; the last "
                "version is kept, at the first one's place",
                known.where,
            )
            known.entry, known.where = entry, line
            return
        slot = Slot(entry=entry, where=line, context=context)
        if entry.get("type") in NOTICE_TYPES and COMPRESSED.search(as_text(entry.get("content"))):
            slots.append(Slot(compression=compression_info(entry, line)))
        slots.append(slot)
        by_id[entry["id"]] = slot

    for index, (line, record) in enumerate(zip(doc.record_lines, doc.records, strict=True)):
        if index == 0 and is_header(record):
            metadata.update(header_metadata(record))
            seeded = [m for m in record.get("messages") or [] if is_message_record(m)]
            for entry in seeded:
                add(entry, line)
            if not seeded:
                report.skip("session header", "session id, project and times (metadata)", line)
            continue
        if isinstance(record.get("$set"), dict):
            if apply_set(record["$set"], line, metadata, slots, add, report):
                from_sets.add(line)
        elif "$rewindTo" in record:
            target = str(record.get("$rewindTo"))
            position = next(
                (i for i, s in enumerate(slots) if s.entry and s.entry.get("id") == target), None
            )
            if position is None:
                report.skip("rewind", "a `$rewindTo` an id the thread does not hold", line)
                warnings.append(f"line {line}: `$rewindTo` {target!r}, an unknown id: ignored")
                continue
            dropped = slots[position:]
            del slots[position:]
            for slot in dropped:
                if slot.entry is not None:
                    by_id.pop(str(slot.entry.get("id")), None)
                    report.skip("rewound message", "dropped by a later `$rewindTo`", slot.where)
                elif slot.compression is not None and slot.compression["line"] in from_sets:
                    from_sets.discard(slot.compression["line"])
                    report.skip(
                        "rewound message",
                        "dropped by a later `$rewindTo`",
                        slot.compression["line"],
                    )
            report.skip("rewind", "a `$rewindTo`: the messages from that id on are dropped", line)
            warnings.append(
                f"line {line}: rewound to {target!r}: {len(dropped)} message(s) dropped"
            )
        elif is_message_record(record):
            add(record, line)
        else:
            report.skip("unrecognised line", "neither a message nor an update", line)
            warnings.append(f"line {line}: skipped a line that is neither a message nor an update")
    mapper = Mapper(report=report, where="line", metadata=metadata, warnings=warnings)
    for slot in slots:
        mapper.slot(slot)
    return conversation_of(mapper, from_sets)


def apply_set(
    update: dict[str, Any],
    line: int,
    metadata: dict[str, Any],
    slots: list[Slot],
    add: Any,
    report: ImportReport,
) -> bool:
    """A `$set` line: metadata keys patch the metadata; `messages` is the model's context.

    True when the line gave the thread something (a compression summary, opening context)."""
    for key, value in update.items():
        if key != "messages":
            metadata[key] = value
    context = update.get("messages")
    if not isinstance(context, list):
        report.skip("metadata update", "a `$set` of session metadata (applied)", line)
        return False
    known = {str(s.entry.get("id")) for s in slots if s.entry is not None}
    snapshot = snapshot_of(context)
    if snapshot is not None:
        pending = next(
            (
                s
                for s in reversed(slots)
                if s.compression is not None and s.compression.get("summary") is None
            ),
            None,
        )
        if pending is not None and pending.compression is not None:
            pending.compression["summary"] = snapshot
        else:
            slots.append(
                Slot(compression={"line": line, "tokens_before": None, "summary": snapshot})
            )
        return True
    opening = not any(s.entry is not None and not s.context for s in slots)
    fresh = [m for m in context if is_message_record(m) and str(m["id"]) not in known]
    if opening and fresh:
        for entry in fresh:
            add(entry, line, context=True)
        return True
    report.skip(
        "context sync",
        "a `$set` of the model's context (history sync or rollback); the thread is kept as "
        "recorded",
        line,
    )
    return False


def conversation_of(mapper: Mapper, from_sets: set[int]) -> Conversation:
    # Each source line counts once, however many messages it gave.
    report = mapper.report
    report.imported = len(mapper.imported | from_sets)
    return Conversation(
        messages=mapper.messages,
        format=NAME,
        title=title_of(mapper.requests),
        metadata=mapper.metadata,
        warnings=mapper.warnings,
        compactions=mapper.compactions,
        report=report,
        calls=mapper.calls,
    )
