"""How much of a source's text the imported messages hold: no import comes out empty in silence.

An importer can recognise a file and still read nothing of it: a Qwen Code session looks like
Claude Code's (uuid, parentUuid, type, cwd) but keeps its text in `message.parts`, and Claude
Code's importer turned 855 KB of it into 37 empty messages without a word. The user then sees a
session that looks fine and is not there. This module measures, for any importer and any
format, what share of the file's text made it into the messages, and names the records whose
text did not.

The measure needs no help from the importer:
- The file's *records* are its units: JSONL lines, the entries of a JSON array (or of the
  largest array in a JSON object: `messages`, `history`, `trajectory`), or the paragraphs of a
  text file.
- A record's *text* is its string values that read as text: at least `MIN_LEAF` characters with
  whitespace in them. Ids, timestamps, hashes, paths and base64 (images, encrypted reasoning)
  are not text and never count.
- A record is *read* when some of its text is in the imported messages: a few `PROBE`-character
  pieces of its longest strings, each starting at a word, are looked up in an index of the
  pieces starting at every word of the messages (content, reasoning, tool-call arguments, their
  decoded values), with runs of whitespace made one space on both sides, so that an importer's
  stripping, joining and re-indenting does not hide what it read. The lookup is a set of hashes:
  linear in the size of the file and of the messages, never a search per record.
- The *read share* is the read records' text over all records' text.

`check` turns the measure into what the load path does: messages with no content at all are an
error naming the records that were not read; a read share under `MIN_READ_SHARE` of a file with
at least `MIN_TEXT_CHARS` of text is a warning naming them. Importers that leave text out on
purpose (a Codex fork's replayed parent history, hooks' progress lines that repeat a tool's
output) stay far above the threshold on every corpus file: the lowest is 0.73.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from compaction.formats.common import line_list
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message, content_text, tool_calls

MIN_LEAF = 40  # characters: shorter strings are names, ids and labels, not text
PROBE = 24  # characters in each piece looked up
MIN_READ_SHARE = 0.5  # under this share of a file's text read, the import is reported
MIN_TEXT_CHARS = 1_000  # a file with less text than this is too small to judge by share
LEAVES_PER_RECORD = 3  # a record's longest strings that are probed
SHOWN = 8  # records named in a message, per kind

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"(?<!\S)\S")
_TEXT_BLOCK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Unread:
    """A record with text of which nothing is in the imported messages."""

    where: str  # "line 12", "messages[3] (line 120)"
    kind: str  # the record's type ("user", "system/ui_telemetry") or "text"
    chars: int
    line: int | None = None


@dataclass
class Coverage:
    """What share of a source's text the imported messages hold, and what they do not."""

    total_chars: int = 0
    read_chars: int = 0
    records: int = 0  # records with text
    unread: list[Unread] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.read_chars / self.total_chars if self.total_chars else 1.0

    @property
    def judged(self) -> bool:
        """Enough text to judge an import by its share."""
        return self.total_chars >= MIN_TEXT_CHARS

    @property
    def low(self) -> bool:
        return self.judged and self.share < MIN_READ_SHARE

    def unread_lines(self) -> list[str]:
        """`user ×37 (lines 2, 3, 5…): 40,122 characters`, one line per record kind."""
        kinds: dict[str, list[Unread]] = {}
        for record in self.unread:
            kinds.setdefault(record.kind, []).append(record)
        rows = []
        for kind, records in sorted(kinds.items(), key=lambda item: -len(item[1])):
            lines = [r.line for r in records if r.line is not None]
            where = (
                line_list(lines, SHOWN)
                if len(lines) == len(records)
                else ", ".join(r.where for r in records[:SHOWN])
                + (f" and {len(records) - SHOWN} more" if len(records) > SHOWN else "")
            )
            chars = sum(r.chars for r in records)
            rows.append(f"{kind!r} ×{len(records)} ({where}): {chars:,} characters of text")
        return rows

    def summary(self) -> str:
        return (
            f"{self.share:.0%} of the file's text ({self.read_chars:,} of "
            f"{self.total_chars:,} characters in {self.records:,} record(s)) is in the messages"
        )


def has_content(message: Message) -> bool:
    """A message that carries something: text, a tool call, reasoning, or an image."""
    if content_text(message).strip() or tool_calls(message) or message.get("reasoning"):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") not in (None, "text") for part in content
    )


def measure(document: Document, conversations: Iterable[Conversation]) -> Coverage:
    """The share of `document`'s text found in the conversations' messages."""
    index = _index(_message_texts(conversations))
    coverage = Coverage()
    for place, kind, record in _records(document):
        texts: list[str] = []
        _text_leaves(record, texts)
        if not texts:
            continue
        size = sum(len(text) for text in texts)
        coverage.records += 1
        coverage.total_chars += size
        texts.sort(key=len, reverse=True)
        probes = (probe for text in texts[:LEAVES_PER_RECORD] for probe in _probes(text))
        if any(hash(probe) in index for probe in probes):
            coverage.read_chars += size
        else:
            where, line = place()  # found only for what is reported: a search of the file
            coverage.unread.append(Unread(where=where, kind=kind, chars=size, line=line))
    return coverage


# -- the records of a source --------------------------------------------------------------------


#: Where a record is: (where, line), worked out when called (see _records).
Place = Callable[[], tuple[str, int | None]]


def _records(document: Document) -> Iterator[tuple[Place, str, Any]]:
    """(place, kind, record) for each unit of the source. A JSON record's place is found by
    searching the file for its text, which costs a pass over the file per record: it is worked
    out only for the records that are reported as unread (a read file has almost none)."""
    if document.kind == "jsonl":
        for line, record in zip(document.record_lines, document.records, strict=True):
            yield partial(_at_line, line), _kind(record), record
        return
    lines = _Lines(document.text)
    if document.kind == "json":
        value = document.value
        prefix = ""
        if isinstance(value, dict):
            lists = [(key, item) for key, item in value.items() if isinstance(item, list)]
            if not lists:
                yield partial(_whole_document), _kind(value), value
                return
            # The largest array holds the conversation (`messages`, `history`, `trajectory`).
            prefix, value = max(lists, key=lambda pair: _size(pair[1]))
        for index, record in enumerate(value if isinstance(value, list) else [value]):
            yield partial(_json_place, lines, prefix, index, record), _kind(record), record
        return
    start = 0
    for separator in [*_TEXT_BLOCK.finditer(document.text), None]:
        end = separator.start() if separator is not None else len(document.text)
        yield partial(_at_line, lines.number(start)), "text", document.text[start:end]
        start = separator.end() if separator is not None else end


class _Lines:
    """Line numbers of positions in a text: its newlines found once, each number a bisection
    (counting the newlines before each record from the start again was quadratic)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._newlines: list[int] | None = None

    def number(self, position: int) -> int:
        """text.count("\\n", 0, position) + 1."""
        if self._newlines is None:
            text = self.text
            found, at = [], text.find("\n")
            while at >= 0:
                found.append(at)
                at = text.find("\n", at + 1)
            self._newlines = found
        return bisect_left(self._newlines, position) + 1


def _at_line(line: int) -> tuple[str, int | None]:
    return f"line {line}", line


def _whole_document() -> tuple[str, int | None]:
    return "the document", None


def _json_place(lines: _Lines, prefix: str, index: int, record: Any) -> tuple[str, int | None]:
    found = _line_of(lines, record)
    return f"{prefix}[{index}]" + (f" (line {found})" if found is not None else ""), found


def _kind(record: Any) -> str:
    """A record's type as its format names it: `type` (with `subtype`), `role`, or the same one
    level down (OpenCode's `info.role`)."""
    if not isinstance(record, dict):
        return "text" if isinstance(record, str) else type(record).__name__
    for holder in (record, *[v for v in record.values() if isinstance(v, dict)][:3]):
        for key in ("type", "role", "kind", "event", "from"):
            value = holder.get(key)
            if isinstance(value, str) and value:
                subtype = holder.get("subtype")
                return f"{value}/{subtype}" if isinstance(subtype, str) and subtype else value
    return "record"


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return 0


def _line_of(lines: _Lines, record: Any) -> int | None:
    """The line of a JSON record in its file: where its first text value is written."""
    text = lines.text
    if not text:
        return None
    texts: list[str] = []
    _text_leaves(record, texts)
    if not texts:
        return None
    written = json.dumps(texts[0], ensure_ascii=False)[1:60]
    position = text.find(written)
    return lines.number(position) if position >= 0 else None


def _text_leaves(value: Any, out: list[str]) -> None:
    """The strings of `value` that read as text, in order. A loop, not recursion: a hostile
    file may nest deeper than Python's recursion limit."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= MIN_LEAF and (" " in item or "\n" in item):
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


# -- the messages' text, indexed by the pieces starting at each word ------------------------------


def _message_texts(conversations: Iterable[Conversation]) -> Iterator[str]:
    for conversation in conversations:
        for message in conversation.messages:
            yield content_text(message)
            if isinstance(message.get("reasoning"), str):
                yield message["reasoning"]
            for call in tool_calls(message):
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                assert isinstance(function, dict)
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    continue
                yield arguments
                try:
                    decoded = json.loads(arguments)
                except (ValueError, RecursionError):
                    continue  # not JSON, or nested too deeply to decode: the raw text counts
                values: list[str] = []
                _text_leaves(decoded, values)
                yield from values


def _index(texts: Iterable[str]) -> set[int]:
    pieces: set[int] = set()
    for text in texts:
        flat = _SPACE.sub(" ", text)
        end = len(flat) - PROBE
        for match in _WORD.finditer(flat):
            start = match.start()
            if start > end:
                break
            pieces.add(hash(flat[start : start + PROBE]))
    return pieces


def _probes(text: str) -> list[str]:
    """Up to five pieces of `text`, each starting at a word: its first, last and three between."""
    flat = _SPACE.sub(" ", text).strip()
    starts = [m.start() for m in _WORD.finditer(flat) if m.start() + PROBE <= len(flat)]
    if not starts:
        return []
    count = len(starts)
    chosen = {starts[0], starts[count // 4], starts[count // 2], starts[3 * count // 4], starts[-1]}
    return [flat[start : start + PROBE] for start in sorted(chosen)]
