"""GitHub Copilot CLI session event logs (`~/.copilot/session-state/<id>/events.jsonl`).

Every line is an event `{type, data, id, timestamp, parentId}`. The conversation is spread over
`user.message` (`transformedContent` is the text the model was sent, `content` what the user
typed), `system.message` (the system prompt, repeated for each interaction), `assistant.message`
(text, `reasoningText`, and `toolRequests` with their `toolCallId`s) and `tool.execution_complete`
(the result, tied to its call by `toolCallId`). `tool.execution_start` repeats each request;
turn markers, mode/model changes, usage and shutdown metrics are not conversation. Events with an
`agentId` (or a `parentToolCallId`) belong to a sub-agent, whose own history the main model never
sees: it gets the spawning tool's result. Every event is either imported or reported by type.
What the user typed becomes a user message of its own; the CLI's text around it in
`transformedContent` (the current time, `<reminder>` blocks) becomes user messages marked as
context (messages.INJECTED_KEY), so the latest request is the user's words and the model's turn
is still all there.

The parts: `events` (event types, triggers, and the pieces of an event read as chat) and
`importer` (the event loop).
"""

from __future__ import annotations

from compaction.formats.conversation import Conversation
from compaction.formats.copilot_cli.events import NAME as NAME
from compaction.formats.copilot_cli.events import is_event
from compaction.formats.copilot_cli.importer import CopilotImport
from compaction.formats.source import Document


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "jsonl":
        return False, "not JSON Lines"
    events = [r for r in doc.records if is_event(r)]
    if not events:
        return False, 'no `{type: "session.*"/"user.message"/..., data, id}` events'
    kinds = {e["type"] for e in events}
    if not kinds & {"session.start", "user.message", "assistant.message"}:
        return False, "no session.start, user.message or assistant.message event"
    if len(events) * 2 < len(doc.records):
        return False, "fewer than half of the lines are Copilot CLI events"
    return True, f"{len(events)} Copilot CLI events `{{type, data, id, parentId}}`"


def load(doc: Document) -> list[Conversation]:
    state = CopilotImport(doc)
    for line, record in zip(doc.record_lines, doc.records, strict=True):
        state.event(line, record)
    return [state.finish()]
