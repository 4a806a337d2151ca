"""Placeholder: being written (see issue 14)."""

from __future__ import annotations

from compaction.formats.conversation import Conversation
from compaction.formats.source import Document

NAME = "copilot-cli"


def sniff(doc: Document) -> tuple[bool, str]:
    return False, "not implemented yet"


def load(doc: Document) -> list[Conversation]:
    return []
