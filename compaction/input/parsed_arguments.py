"""Tool-call arguments parsed once per compaction: the input check's parse, read again by Phase 1.

The input check parses every call's arguments to say which a provider would reject, and Phase 1
parses them again: each pruned result's call (for its one-line summary) and each long call (to
shorten it). Between the two, the same string was decoded twice, the second time for ~1,500 of
5,000 generated messages (~20 M instructions, ~3% of a cold compress). While a compress runs
(`sharing`), the check keeps each parse that gave a JSON object here, and Phase 1 takes it from
here (as does the check of the compaction's own output, which an agent goes on from: its calls
are the input's).

Kept for one compress only, in a context variable (each thread and task has its own): nothing is
held between compactions, and a re-run whose check is reused parses nothing here (Phase 1 reuses
its plan). What is handed out is shared, never edited: its readers (the one-liners' reading of a
call, the shortening's copy of it) only read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from compaction.messages import parse_arguments

_KEPT: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("parsed_arguments", default=None)


@contextmanager
def sharing() -> Iterator[None]:
    """Keep the check's parses for what runs inside (one compress), and drop them after."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def keep(arguments: str, value: Any) -> None:
    """The check parsed `arguments` into `value`: kept when it is an object and a compress is
    sharing (the only parse Phase 1 reads: arguments of any other shape read as no arguments)."""
    kept = _KEPT.get()
    if kept is not None and isinstance(value, dict):
        kept[arguments] = value


def kept_object(arguments: str) -> dict[str, Any] | None:
    """The object the check parsed `arguments` into in this compress, or None when it kept
    none (not an object, or not parsed in this compress)."""
    kept = _KEPT.get()
    return kept.get(arguments) if kept is not None else None


def arguments_object(arguments: str) -> dict[str, Any]:
    """`parse_arguments(arguments)`, from the check's parse when it kept one (not to be edited)."""
    value = kept_object(arguments)
    return value if value is not None else parse_arguments(arguments)
