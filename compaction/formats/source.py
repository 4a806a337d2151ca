"""Reading a conversation source (path, bytes or text) into a parsed `Document`, once.

Every importer and the detector work on the same parsed form, so a file is read and parsed a
single time however many formats are tried. Size is checked before reading (a 2 GB log must fail
fast, not fill memory), and the ways a file can be unreadable (empty, binary, not UTF-8, broken
JSON) each get a FormatError that names the file and, for JSON, the line and column.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction.errors import FormatError

MAX_BYTES = 200 * 1024 * 1024

Source = str | bytes | os.PathLike[str]


@dataclass
class Document:
    """A source after parsing: whole-file JSON, JSON Lines, or plain text (e.g. Markdown).

    `records` holds the JSONL objects with `record_lines[i]` the 1-based line of `records[i]`;
    `warnings` lists lines that could not be parsed (a truncated last line, typically).
    """

    text: str
    kind: str  # "json" | "jsonl" | "text"
    name: str | None = None
    value: Any = None
    records: list[Any] = field(default_factory=list)
    record_lines: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)  # JSONL lines that did not parse

    def objects(self) -> list[Any]:
        """The top-level objects: JSONL records, or the whole-file value when it is an object."""
        if self.kind == "jsonl":
            return self.records
        if self.kind == "json" and isinstance(self.value, dict):
            return [self.value]
        return []


def json_kind(value: Any) -> str:
    """A JSON value's kind as a person reading the file calls it ("an array", "a number")."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__


def _looks_like_path(source: str) -> bool:
    # Content always has a newline or starts like JSON/Markdown; a path is one short line.
    return "\n" not in source and len(source) < 4096 and not source.lstrip().startswith(("{", "["))


_FILE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".md", ".txt", ".log")


def _names_a_file(source: str) -> bool:
    """A missing one-line string that was surely meant as a path: say "file not found" for it
    rather than "unknown format (plain text)"."""
    text = source.strip()
    return " " not in text and (text.lower().endswith(_FILE_SUFFIXES) or "/" in text)


def read_source(source: Source | Document, name: str | None = None) -> Document:
    """Parse `source` (a path, bytes, or text content) into a Document."""
    if isinstance(source, Document):
        return source
    data: bytes | str
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        name = name or str(path)
        if not path.exists():
            if isinstance(source, str) and not _names_a_file(source):
                # A one-line string that is not a file: treat it as content.
                return parse_text(source, name=None)
            raise FormatError("file not found", source=name)
        if path.is_dir():
            raise FormatError("is a directory, not a conversation file", source=name)
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise FormatError(
                f"file is {size / 1024 / 1024:.0f} MB; the limit is {MAX_BYTES // 1024 // 1024} MB",
                source=name,
            )
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise FormatError(f"cannot read the file: {exc.strerror or exc}", source=name) from exc
    elif isinstance(source, bytes | bytearray):
        data = bytes(source)
    elif isinstance(source, str):
        data = source
    else:
        raise FormatError(f"expected a path, bytes or text, got {type(source).__name__}", name)
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise FormatError(
                f"content is {len(data) / 1024 / 1024:.0f} MB; the limit is "
                f"{MAX_BYTES // 1024 // 1024} MB",
                source=name,
            )
        if b"\x00" in data:
            raise FormatError("binary content (NUL bytes): not a conversation file", source=name)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"not UTF-8 text (invalid byte at offset {exc.start}): not a conversation file",
                source=name,
            ) from exc
    else:
        text = data.removeprefix("\ufeff")
        if "\x00" in text:
            raise FormatError("binary content (NUL characters): not a conversation file", name)
    return parse_text(text, name=name)


def parse_text(text: str, name: str | None = None) -> Document:
    """Whole-file JSON first, then JSON Lines, then plain text."""
    if not text.strip():
        raise FormatError("the file is empty", source=name)
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return Document(text=text, kind="text", name=name)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as whole_error:
        document = _parse_jsonl(text, name)
        if document is not None:
            return document
        raise FormatError(
            f"invalid JSON: {whole_error.msg} (column {whole_error.colno})",
            source=name,
            line=whole_error.lineno,
        ) from None
    except RecursionError:
        raise FormatError("JSON nested too deeply to read", source=name) from None
    except ValueError:
        # Python refuses integers of more than 4,300 digits (a denial-of-service guard).
        raise FormatError(
            "the JSON holds an integer too long to read (more than 4,300 digits)", source=name
        ) from None
    return Document(text=text, kind="json", name=name, value=value)


def _parse_jsonl(text: str, name: str | None) -> Document | None:
    """JSON Lines, when at least one line is a JSON object and (nearly) every line parses."""
    records: list[Any] = []
    lines: list[int] = []
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
            lines.append(number)
        except json.JSONDecodeError as exc:
            bad.append((number, f"{exc.msg} (column {exc.colno})"))
        except RecursionError:
            bad.append((number, "nested too deeply"))
        except ValueError:
            bad.append((number, "an integer of more than 4,300 digits"))
    if not any(isinstance(r, dict) for r in records):
        return None
    # A pretty-printed JSON file with an error parses as a few stray lines, not as JSONL:
    # only accept when the broken lines are a small minority.
    if len(bad) > max(1, len(records) // 10):
        return None
    for number, record in zip(lines, records, strict=True):
        if not isinstance(record, dict):
            # Valid JSON, so "invalid JSON" (what the whole-file parse says) would mislead.
            raise FormatError(
                f"valid JSON, but {json_kind(record)}, not an object: JSON Lines needs one "
                "object per line",
                source=name,
                line=number,
            )
    warnings = [
        f"line {number}: skipped a line that is not valid JSON ({why}); "
        "it looks truncated, the rest was imported"
        for number, why in bad
    ]
    return Document(
        text=text,
        kind="jsonl",
        name=name,
        records=records,
        record_lines=lines,
        warnings=warnings,
        bad_lines=[number for number, _ in bad],
    )
