"""The loaded conversation in session state, identified by a content hash.

Streamlit reruns the page script on every click; the conversation must survive those reruns and
page switches, and every cache keys on its hash so a re-upload of the same file costs nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from compaction.formats.conversation import Conversation
from compaction.messages import Message
from compaction.summary.recorded import SessionRecord

LOADED_KEY = "loaded_conversation"


@dataclass(frozen=True)
class Loaded:
    """A conversation ready for the pages: messages plus where they came from."""

    messages: list[Message]
    content_hash: str
    title: str
    format: str
    source: str  # "sample:<id>", "upload:<name>", "paste"
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # a sample's suggested settings
    # The import report (what was read, imported, skipped by kind) and the agent's own
    # compactions, as lines for the loader.
    report: list[str] = field(default_factory=list)
    compactions: list[str] = field(default_factory=list)
    # What the Audit page needs to rebuild the Conversation: the recorded compactions (as
    # RecordedCompaction.to_dict()) and the importer's metadata (model, cwd).
    recorded: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    # The tool definitions the session records (sent with every request; the composition counts
    # them).
    tools: list[dict[str, Any]] = field(default_factory=list)
    # What the file recorded beside the messages (the working directory), for the summary.
    session_record: SessionRecord = field(default_factory=SessionRecord)
    # The provider's usage per model call (ModelCall.to_dict()), for the cost views.
    calls: list[dict[str, Any]] = field(default_factory=list)


def content_hash(messages: list[Message]) -> str:
    """sha256 of the canonical JSON of the messages (sorted keys, text kept as text)."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_loaded(
    messages: list[Message],
    title: str,
    format: str,
    source: str,
    warnings: list[str] | None = None,
    settings: dict[str, Any] | None = None,
    report: list[str] | None = None,
    compactions: list[str] | None = None,
    recorded: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Loaded:
    return Loaded(
        messages=messages,
        content_hash=content_hash(messages),
        title=title,
        format=format,
        source=source,
        warnings=list(warnings or []),
        settings=dict(settings or {}),
        report=list(report or []),
        compactions=list(compactions or []),
        recorded=list(recorded or []),
        metadata=dict(metadata or {}),
    )


def from_conversation(
    conversation: Conversation,
    source: str,
    title: str | None,
    settings: dict[str, Any] | None = None,
) -> Loaded:
    """A Loaded from an imported Conversation: its report, compactions and metadata kept."""
    report = conversation.report
    loaded = make_loaded(
        conversation.messages,
        title=title or conversation.title or source,
        format=conversation.format,
        source=source,
        warnings=conversation.warnings,
        settings=settings,
        report=[report.summary_line(), *report.skip_lines(), f"usage: {conversation.usage_line()}"]
        if report is not None
        else [],
        compactions=conversation.compaction_lines(),
        recorded=[compaction.to_dict() for compaction in conversation.compactions],
        metadata=conversation.metadata,
    )
    # The tool definitions a session records, for the context composition bar, and what else
    # it records beside the messages.
    return replace(
        loaded,
        tools=list(conversation.tools),
        session_record=conversation.record(),
        calls=[call.to_dict() for call in conversation.calls],
    )


def set_loaded(loaded: Loaded) -> None:
    previous = get_loaded()
    st.session_state[LOADED_KEY] = loaded
    if previous is None or previous.content_hash != loaded.content_hash:
        # A new conversation starts the stepper and the selection afresh.
        for key in ("inspect_step", "inspect_selected"):
            st.session_state.pop(key, None)


def get_loaded() -> Loaded | None:
    value = st.session_state.get(LOADED_KEY)
    return value if isinstance(value, Loaded) else None


def conversation_of(loaded: Loaded) -> Conversation:
    """The Conversation a lab measure needs back from a Loaded: messages, metadata, the
    compactions the agent recorded, the provider's usage per call and the importer's marks."""
    from compaction.formats.conversation import ModelCall, RecordedCompaction

    return Conversation(
        messages=loaded.messages,
        format=loaded.format,
        metadata=dict(loaded.metadata),
        tools=list(loaded.tools),
        compactions=[RecordedCompaction(**record) for record in loaded.recorded],
        calls=[ModelCall(**call) for call in loaded.calls],
        source=loaded.source,
        marks=dict(loaded.session_record.marks),
    )
