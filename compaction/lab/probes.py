"""Probe facts: what an agent must still know after compaction, mined from the original session.

Token savings alone say nothing about what a compaction threw away. Published probe studies grade
compactions on what survives: the latest request, the user's constraints, the files touched, the
exact errors, the commands run and the identifiers (URLs, hashes, issue numbers, versions, ports).
This module mines those facts from the ORIGINAL conversation and checks each for presence in a
compacted one, so strategies can be compared on recall as well as on size.

Matching is a substring test on normalised text (lower case, whitespace collapsed): a fact counts
as kept when its text appears anywhere in the compacted messages — content, tool-call arguments, a
summary. Facts are cut the way Phase 1 cuts its one-liners (160 chars for errors, 80 for commands)
so a fact that Phase 1 kept is recognised. Each category is capped (most recent first) so one
chatty tool output cannot dominate the score; mining is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.messages import (
    Marks,
    Message,
    call_arguments,
    call_name,
    last_user_index,
    mark_of,
    parse_arguments,
    tool_calls,
)
from compaction.messages import content_text as _content_text
from compaction.summary import is_summary_text
from compaction.text.one_liners import tool_kind
from compaction.text.patterns import (
    TEXT_MAX_CHARS,
    collapse,
    command_text,
    constraint_sentences,
    cut,
    error_lines,
    identifiers,
    json_strings,
    readable_text,
    written_paths,
)
from compaction.text.user_words import own_words, request_text

CATEGORIES: tuple[str, ...] = (
    "latest_request",
    "constraints",
    "files",
    "errors",
    "commands",
    "identifiers",
)
MAX_PER_CATEGORY = 50
COMMAND_MAX_CHARS = 80  # as Phase 1's terminal one-liner


@dataclass(frozen=True)
class Fact:
    """One thing the compacted context should still contain."""

    category: str
    text: str  # as found (whitespace collapsed); matched case-insensitively
    source_index: int  # the message it was mined from, in the original conversation

    @property
    def key(self) -> str:
        return normalise(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "text": self.text, "source_index": self.source_index}


@dataclass
class CategoryRecall:
    found: int = 0
    total: int = 0

    @property
    def ratio(self) -> float:
        """Share of facts kept; 1.0 when the category has no facts (nothing could be lost)."""
        return self.found / self.total if self.total else 1.0


@dataclass
class Recall:
    """Per-category recall of the mined facts in a compacted conversation, and what was lost."""

    categories: dict[str, CategoryRecall]
    lost: list[Fact] = field(default_factory=list)

    @property
    def found(self) -> int:
        return sum(c.found for c in self.categories.values())

    @property
    def total(self) -> int:
        return sum(c.total for c in self.categories.values())

    @property
    def ratio(self) -> float:
        return self.found / self.total if self.total else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "total": self.total,
            "ratio": round(self.ratio, 4),
            "categories": {
                name: {"found": c.found, "total": c.total, "ratio": round(c.ratio, 4)}
                for name, c in self.categories.items()
            },
            "lost": [fact.to_dict() for fact in self.lost],
        }


#: Typographic quotes as their ASCII forms: a fact mined with one must match text with the other.
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: str) -> str:
    """Lower case, quotes made plain, whitespace collapsed: the form facts and haystacks are
    compared in."""
    return " ".join(text.lower().translate(_QUOTES).split())


def _is_summary(message: Message) -> bool:
    return is_summary_text(_content_text(message))


def _arguments_text(call: dict[str, Any]) -> str:
    """A call's arguments as text a reader would see: decoded string values, else the raw JSON."""
    raw = call_arguments(call)
    parsed = parse_arguments(raw)
    return " ".join(json_strings(parsed)) if parsed else raw


def message_text(message: Message) -> str:
    """Content plus every tool call's name and arguments: what a fact may be found in."""
    parts = [readable_text(_content_text(message))]
    for call in tool_calls(message):
        if isinstance(call, dict):
            parts.append(call_name(call))
            parts.append(_arguments_text(call))
    return "\n".join(parts)


class _Collector:
    """Facts per category, newest first, deduplicated by normalised text, capped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.facts: dict[str, list[Fact]] = {name: [] for name in CATEGORIES}
        self._seen: dict[str, set[str]] = {name: set() for name in CATEGORIES}

    def full(self, category: str) -> bool:
        return len(self.facts[category]) >= self.cap

    def add(self, category: str, text: str, index: int) -> None:
        key = normalise(text)
        if not key or key in self._seen[category] or self.full(category):
            return
        self._seen[category].add(key)
        self.facts[category].append(Fact(category, text, index))

    def add_all(self, category: str, texts: Iterable[str], index: int) -> None:
        for text in texts:
            self.add(category, text, index)


def mine_facts(
    messages: Sequence[Message], cap: int = MAX_PER_CATEGORY, marks: Marks | None = None
) -> list[Fact]:
    """The probe facts of `messages` (never modified), grouped by category, newest first.
    `marks` says which user turns the harness sent (the conversation's; left out, the messages'
    own `injected` keys)."""
    collector = _Collector(cap)
    latest_found = False
    # The latest request is the engine's: the user's own words, not harness text an importer
    # marked (a hook's output, an IDE's metadata) that came after them.
    latest = last_user_index([m if isinstance(m, dict) else {} for m in messages], marks=marks)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user" and not _is_summary(message):
            text = request_text(message)
            if not latest_found and text.strip() and (latest is None or index <= latest):
                latest_found = True
                collector.add("latest_request", _snippet(text), index)
            # Rules are the user's own words: a marked message's "must" is the harness's
            # (AGENTS.md, a hook, an observation), a pasted log's is nobody's rule, and the
            # summariser rightly leaves both out of Constraints (user_words.py).
            if not collector.full("constraints"):
                words = own_words(message, mark_of(message, index, marks))
                collector.add_all("constraints", reversed(constraint_sentences(words)), index)
        if role in ("tool", "user") and not collector.full("errors"):
            text = readable_text(_content_text(message))
            collector.add_all("errors", reversed(error_lines(text)), index)
        if role == "assistant":
            for call in reversed(tool_calls(message)):
                if not isinstance(call, dict):
                    continue
                name = call_name(call)
                raw = call_arguments(call)
                arguments = parse_arguments(raw)
                collector.add_all("files", written_paths(name, arguments, raw), index)
                if tool_kind(name) == "terminal":
                    command = command_text(arguments).strip().split("\n", 1)[0]
                    collector.add("commands", cut(command, COMMAND_MAX_CHARS), index)
        if not collector.full("identifiers"):
            found = identifiers(message_text(message))
            collector.add_all("identifiers", reversed(found), index)
    return [fact for name in CATEGORIES for fact in collector.facts[name]]


def _snippet(text: str) -> str:
    # The longest line is the most distinctive: first lines are often boilerplate or a greeting.
    lines = [line for line in text.splitlines() if line.strip()]
    longest = max(lines, key=lambda line: len(collapse(line)))
    return cut(longest, TEXT_MAX_CHARS)


def haystack(messages: Sequence[Message]) -> str:
    """All the text of `messages`, normalised, one message per segment (NUL-separated, so no
    fact matches across two messages)."""
    return "\x00".join(normalise(message_text(m)) for m in messages if isinstance(m, dict))


def recall(facts: Sequence[Fact], compacted: Sequence[Message]) -> Recall:
    """Which `facts` survive in `compacted`: per-category found/total and the list of lost facts.

    The compacted text is normalised once; each fact is one C-level substring search over it.
    """
    text = haystack(compacted)
    categories = {name: CategoryRecall() for name in CATEGORIES}
    lost: list[Fact] = []
    for fact in facts:
        bucket = categories.setdefault(fact.category, CategoryRecall())
        bucket.total += 1
        if fact.key in text:
            bucket.found += 1
        else:
            lost.append(fact)
    return Recall(categories=categories, lost=lost)
