"""Small wording helpers shared by the pages, so counts read as English everywhere."""

from __future__ import annotations


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """`1 message`, `2 messages`, `1,024 messages` (thousands separated)."""
    word = noun if count == 1 else plural_form or f"{noun}s"
    return f"{count:,} {word}"
