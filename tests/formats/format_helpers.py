"""Shared checks for the format tests: pairing and validity of imported conversations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction.formats import Conversation
from compaction.input.checks import validate_messages
from compaction.messages import Message, tool_calls

DATA = Path(__file__).resolve().parent / "data"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
CORPUS_MORE = CORPUS.parent / "corpus-more"


def corpus_file(name: str) -> Path:
    """A file of ../shared/corpus or ../shared/corpus-more (skipped when neither has it)."""
    for folder in (CORPUS, CORPUS_MORE):
        if (folder / name).exists():
            return folder / name
    pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")


def assert_paired(messages: list[Message], unique_ids: bool = True) -> tuple[set[str], set[str]]:
    """Each tool result answers a call of the turn before it; returns (calls, answered)."""
    validate_messages(messages)
    calls: set[str] = set()
    answered: set[str] = set()
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            ids = [call["id"] for call in tool_calls(message)]
            assert len(ids) == len(set(ids)), f"message {index}: duplicate call ids"
            # Some sources reuse ids across turns (SWE-agent demonstrations); pairing is by turn.
            assert not unique_ids or not set(ids) & calls, f"message {index}: call id reused"
            calls.update(ids)
            open_calls = set(ids)
        elif message["role"] == "tool":
            call_id = message["tool_call_id"]
            assert call_id in open_calls, f"message {index}: result {call_id} has no open call"
            open_calls.discard(call_id)
            answered.add(call_id)
        else:
            open_calls = set()
    return calls, answered


def roles(conversation: Conversation) -> list[str]:
    return [message["role"] for message in conversation.messages]


def annotated(conversation: Any) -> list[dict[str, Any]]:
    """An imported conversation's messages with each mark written back as its `injected` key
    (messages.with_marks): the marks live beside the messages (`conversation.marks`); these
    tests read them in place, as the engine's functions still accept them."""
    from compaction.messages import with_marks

    return with_marks(conversation.messages, conversation.marks)
