"""Gemini CLI sessions: `--output-format stream-json` event lines, and the chat recordings.

Three shapes, one tool:
- stream-json streams assistant text in `delta` chunks and reports calls and results as separate
  events tied by `tool_id`.
- The JSON chat recording (`~/.gemini/tmp/*/chats/session-*.json`): one object
  `{sessionId, projectHash, startTime, lastUpdated, kind, messages:[...]}`.
- The JSONL chat recording (newer, append-only `session-*.jsonl`): a header line
  `{sessionId, projectHash, startTime, lastUpdated, kind}`, then message records
  `{id, timestamp, type, content, ...}` and update records. The recorder *upserts*: a message is
  written again in full (same `id`) whenever its tool calls, results or tokens change, so a
  rewritten id keeps its first position and its last version (earlier versions are counted as
  "superseded message version"). `{"$set": {...}}` patches the session metadata (counted as
  "metadata update"); a `$set` of `messages` replaces the *model's* context (history sync at
  session start, a compression, an aborted turn's rollback) and is not the thread: its messages
  already in the thread are ignored, a `<state_snapshot>` in it is a compression summary (below),
  and new messages before any thread message are the session's opening context and are kept.
  `{"$rewindTo": id}` drops that message and everything after it (a rewind to an id the thread
  never had is ignored and counted).

Both recordings map the same way: a `user` message's parts become its text (a part that is only a
`functionResponse` answers the previous turn's open call and becomes a tool message); a `gemini`
message becomes an assistant message, its `thoughts` (and `thought: true` parts) go to the
`reasoning` key, and its `toolCalls` (each with its result embedded as
`result:[{functionResponse:{response:{output | error}}}]`) become `tool_calls` followed by one
tool message per result. `info`, `warning` and `error` messages are CLI notices, not
conversation: counted in the report by kind.

Compression. Gemini CLI compresses the chat by replacing the model's history with a user message
holding a `<state_snapshot>` summary (and a model acknowledgement); the recording shows it as an
`info` notice ("Chat history compressed from N to M tokens") and, in the JSONL form, as a `$set`
of `messages` that starts with the snapshot. Each becomes one `RecordedCompaction(agent=
"gemini-cli")` at the point it happened, with `tokens_before` = N (else the last message's input
tokens), `summary` = the snapshot text when the file holds it (then also inserted there as a user
message, the context the model continued from), and trigger "unknown" (the file does not say
whether `/compress` or the automatic threshold ran it). A user message in the thread whose text
starts with `<state_snapshot>` is recorded the same way.

The parts: `records` (constants, shape tests, parts as text), `stream` (stream-json),
`recording` (the JSON and JSONL recordings, their upserts and updates) and `mapper` (a
recording's thread into messages).
"""

from __future__ import annotations

from compaction.formats.conversation import Conversation
from compaction.formats.gemini_cli.recording import load_recording, load_recording_lines
from compaction.formats.gemini_cli.records import EVENT_TYPES, MESSAGE_TYPES, sniff_recording
from compaction.formats.gemini_cli.records import NAME as NAME
from compaction.formats.gemini_cli.stream import load_stream
from compaction.formats.source import Document


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind == "json" and isinstance(doc.value, dict):
        value = doc.value
        messages = value.get("messages")
        if (
            "sessionId" in value
            and isinstance(messages, list)
            and any(isinstance(m, dict) and m.get("type") in MESSAGE_TYPES for m in messages)
        ):
            return True, "a native chat recording: `sessionId` and messages of type user/gemini"
        return False, "JSON object without `sessionId` and user/gemini messages"
    if doc.kind != "jsonl":
        return False, "neither JSON Lines nor a JSON chat recording"
    recording, reason = sniff_recording(doc.records)
    if recording:
        return True, reason
    events = [r for r in doc.records if r.get("type") in EVENT_TYPES and "payload" not in r]
    if len(events) < len(doc.records) or not events:
        return False, (
            "lines are not all stream-json events (init/message/tool_use/...), nor a JSONL chat "
            f"recording ({reason})"
        )
    if not any(e.get("type") in ("init", "tool_use") or "role" in e for e in events):
        return False, "no init, tool_use or role-carrying message events"
    return True, f"{len(events)} stream-json events (init/message/tool_use/tool_result/result)"


def load(doc: Document) -> list[Conversation]:
    if doc.kind == "json":
        return [load_recording(doc.value)]
    if sniff_recording(doc.records)[0]:
        return [load_recording_lines(doc)]
    return [load_stream(doc)]
