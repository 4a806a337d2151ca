"""Codex CLI rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`).

The conversation lives in `response_item` lines (OpenAI Responses-API items); everything else is
session metadata or UI events that duplicate it. Calls and their outputs are separate items tied
by `call_id`, and consecutive calls form one assistant turn, which this importer rebuilds.
"""

from __future__ import annotations

import json
from typing import Any

from compaction.formats.common import (
    as_text,
    first_user_text,
    grouped_skips,
    join_text,
    line_list,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "codex"
LINE_TYPES = ("session_meta", "response_item", "turn_context", "event_msg", "compacted")


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "jsonl":
        return False, "not JSON Lines"
    typed = [
        r for r in doc.records if r.get("type") in LINE_TYPES and isinstance(r.get("payload"), dict)
    ]
    if not any(r.get("type") == "response_item" for r in typed):
        return False, "no `response_item` lines with a `payload`"
    return True, f"{len(typed)} `{{type, payload}}` lines including `response_item`"


def _item_text(payload: dict[str, Any]) -> str:
    content = payload.get("content")
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return join_text(texts, "\n")


def load(doc: Document) -> list[Conversation]:
    messages: list[Message] = []
    warnings: list[str] = []
    metadata: dict[str, Any] = {}
    skipped: dict[str, list[int]] = {}
    encrypted: list[int] = []
    pending_reasoning: list[str] = []
    for line, record in zip(doc.record_lines, doc.records, strict=True):
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        assert isinstance(payload, dict)
        if kind == "session_meta":
            for key in ("id", "cwd", "cli_version", "originator", "model_provider", "git"):
                if key in payload:
                    metadata["session_id" if key == "id" else key] = payload[key]
            instructions = payload.get("base_instructions")
            text = instructions.get("text") if isinstance(instructions, dict) else instructions
            if isinstance(text, str) and text and not messages:
                messages.append({"role": "system", "content": text})
            continue
        if kind == "turn_context":
            if isinstance(payload.get("model"), str):
                metadata.setdefault("model", payload["model"])
            continue
        if kind != "response_item":
            skipped.setdefault(str(kind), []).append(line)
            continue
        item = payload.get("type")
        if item == "message":
            role = payload.get("role")
            role = role if role in ("user", "assistant", "developer", "system") else "user"
            message: Message = {"role": role, "content": _item_text(payload)}
            if role == "assistant" and pending_reasoning:
                message["reasoning"] = join_text(pending_reasoning)
                pending_reasoning = []
            messages.append(message)
        elif item == "reasoning":
            summary = [
                part.get("text", "")
                for part in payload.get("summary") or []
                if isinstance(part, dict)
            ]
            readable = join_text([*summary, _item_text(payload)])
            if readable:
                pending_reasoning.append(readable)
            if payload.get("encrypted_content"):
                encrypted.append(line)
        elif item in ("function_call", "custom_tool_call", "local_shell_call"):
            call = _call(payload, line)
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(call)
            elif last is not None and last["role"] == "assistant" and not last.get("tool_calls"):
                last["tool_calls"] = [call]
            else:
                new: Message = {"role": "assistant", "content": None, "tool_calls": [call]}
                messages.append(new)
            if pending_reasoning:
                target = messages[-1]
                target["reasoning"] = join_text([target.get("reasoning", ""), *pending_reasoning])
                pending_reasoning = []
        elif item in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            output = payload.get("output")
            if isinstance(output, dict) and "content" in output:
                output = output["content"]
            messages.append(tool_message(str(payload.get("call_id")), as_text(output)))
        else:
            skipped.setdefault(f"response_item/{item}", []).append(line)
    if pending_reasoning:
        messages.append(
            {"role": "assistant", "content": "", "reasoning": join_text(pending_reasoning)}
        )
    warnings.extend(grouped_skips(skipped, "UI events or items with no chat equivalent"))
    if encrypted:
        warnings.append(
            f"{line_list(encrypted)}: encrypted reasoning left out ({len(encrypted)} item(s))"
        )
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=_title(messages),
            metadata=metadata,
            warnings=warnings,
        )
    ]


def _title(messages: list[Message]) -> str | None:
    # Codex injects AGENTS.md and environment context as user messages wrapped in tags.
    real = [
        m
        for m in messages
        if m["role"] == "user" and not str(m.get("content", "")).lstrip().startswith("<")
    ]
    return first_user_text(real)


def _call(payload: dict[str, Any], line: int) -> dict[str, Any]:
    call_id = str(payload.get("call_id") or payload.get("id") or f"codex_call_line_{line}")
    name = str(payload.get("name") or payload.get("type"))
    if payload.get("type") == "custom_tool_call":
        # Free-form input (not JSON): wrap it so the arguments stay a JSON object.
        return make_call(call_id, name, {"input": payload.get("input", "")})
    if payload.get("type") == "local_shell_call":
        return make_call(call_id, "local_shell", payload.get("action") or {})
    arguments = payload.get("arguments")
    return make_call(
        call_id, name, arguments if isinstance(arguments, str) else json.dumps(arguments)
    )
