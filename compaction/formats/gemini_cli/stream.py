"""Gemini CLI's `--output-format stream-json` event lines."""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    first_user_text,
    grouped_skips,
    join_text,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.gemini_cli.records import NAME
from compaction.formats.source import Document
from compaction.messages import Message


def load_stream(doc: Document) -> Conversation:
    messages: list[Message] = []
    metadata: dict[str, Any] = {"runs": []}
    skipped: dict[str, list[int]] = {}
    report = ImportReport(records=len(doc.records))
    for line, event in zip(doc.record_lines, doc.records, strict=True):
        kind = event.get("type")
        last = messages[-1] if messages else None
        if kind == "init":
            metadata["runs"].append({k: event.get(k) for k in ("session_id", "model", "timestamp")})
            metadata.setdefault("model", event.get("model"))
            metadata.setdefault("session_id", event.get("session_id"))
            report.skip("init", "a run starts: session id and model kept in metadata", line)
        elif kind == "message":
            role = "assistant" if event.get("role") in ("assistant", "model") else "user"
            text = as_text(event.get("content"))
            if (
                event.get("delta")
                and role == "assistant"
                and last is not None
                and last["role"] == "assistant"
                and not last.get("tool_calls")
            ):
                last["content"] = (last.get("content") or "") + text
            else:
                messages.append({"role": role, "content": text})
            report.imported += 1
        elif kind == "tool_use":
            call = make_call(
                str(event.get("tool_id")), str(event.get("tool_name")), event.get("parameters")
            )
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            report.imported += 1
        elif kind == "tool_result":
            output = event.get("output")
            error = event.get("error")
            if event.get("status") == "error" and isinstance(error, dict):
                output = join_text([as_text(output), f"Error: {error.get('message', '')}"])
            messages.append(tool_message(str(event.get("tool_id")), as_text(output)))
            report.imported += 1
        elif kind == "result":
            metadata.setdefault("results", []).append(
                {"status": event.get("status"), "stats": event.get("stats")}
            )
            report.skip("result", "a run's final status and stats (kept in metadata)", line)
        else:
            skipped.setdefault(str(kind), []).append(line)
            report.skip(str(kind), "an event with no chat equivalent", line)
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        warnings=grouped_skips(skipped, "no chat equivalent"),
        report=report,
    )
