"""ShareGPT conversations with Hermes function-calling tags (`<tool_call>`, `<tool_response>`).

Tool calls here are JSON inside XML-ish tags in free text, usually with no ids. Ids are taken from
the matching `<tool_response>` when it carries one, else synthesised from positions, so a file
always imports to the same messages.
"""

from __future__ import annotations

import json
import re
from typing import Any

from compaction.formats.common import as_text, first_user_text, make_call, tool_message
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document
from compaction.messages import Message

NAME = "sharegpt"
ROLE_OF = {"system": "system", "human": "user", "user": "user", "gpt": "assistant", "tool": "tool"}
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
TOOL_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.DOTALL)
THINK = re.compile(r"<think>\s*(.*?)\s*</think>", re.DOTALL)
TOOLS = re.compile(r"<tools>\s*(.*?)\s*</tools>", re.DOTALL)


def _items(doc: Document) -> list[tuple[str, Any]]:
    if doc.kind == "jsonl":
        return [(f"line {n}", r) for n, r in zip(doc.record_lines, doc.records, strict=True)]
    if isinstance(doc.value, list):
        return [(f"[{i}]", v) for i, v in enumerate(doc.value)]
    if isinstance(doc.value, dict):
        return [("$", doc.value)]
    return []


def _is_sharegpt(value: Any) -> bool:
    turns = value.get("conversations") if isinstance(value, dict) else None
    return (
        isinstance(turns, list)
        and bool(turns)
        and all(isinstance(t, dict) and "from" in t and "value" in t for t in turns)
    )


def sniff(doc: Document) -> tuple[bool, str]:
    items = _items(doc)
    if items and all(_is_sharegpt(v) for _, v in items):
        return True, f"{len(items)} object(s) with `conversations` of {{from, value}} turns"
    return False, "no `conversations` lists of {from, value} turns"


def load(doc: Document) -> list[Conversation]:
    return [_conversation(value, where) for where, value in _items(doc)]


def _conversation(value: dict[str, Any], where: str) -> Conversation:
    messages: list[Message] = []
    warnings: list[str] = []
    tools: list[dict[str, Any]] = []
    turns = value["conversations"]
    for turn_index, turn in enumerate(turns):
        sender = str(turn.get("from"))
        text = as_text(turn.get("value"))
        role = ROLE_OF.get(sender)
        if role is None:
            warnings.append(f"{where} turn {turn_index}: unknown sender {sender!r}, kept as user")
            role = "user"
        if role == "system":
            match = TOOLS.search(text)
            if match and not tools:
                tools = _parse_tools(match.group(1), where, turn_index, warnings)
            messages.append({"role": "system", "content": text})
        elif role == "assistant":
            following = turns[turn_index + 1] if turn_index + 1 < len(turns) else None
            messages.append(_assistant(text, following, where, turn_index, warnings))
        elif role == "tool":
            messages.extend(_responses(text, messages, where, turn_index, warnings))
        else:
            messages.append({"role": "user", "content": text})
    metadata: dict[str, Any] = {
        k: value[k] for k in ("model", "timestamp", "completed", "id") if k in value
    }
    return Conversation(
        messages=messages,
        format=NAME,
        title=first_user_text(messages),
        metadata=metadata,
        tools=tools,
        warnings=warnings,
    )


def _parse_tools(text: str, where: str, turn: int, warnings: list[str]) -> list[dict[str, Any]]:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        # Often one schema per line rather than a JSON array.
        parsed = []
        for line in text.splitlines():
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                if line.strip():
                    warnings.append(f"{where} turn {turn}: a <tools> entry is not JSON; skipped")
    parsed = parsed if isinstance(parsed, list) else [parsed]
    return [t for t in parsed if isinstance(t, dict)]


def _assistant(text: str, following: Any, where: str, turn: int, warnings: list[str]) -> Message:
    response_ids = []
    if isinstance(following, dict) and following.get("from") == "tool":
        for body in TOOL_RESPONSE.findall(as_text(following.get("value"))):
            try:
                response = json.loads(body)
            except json.JSONDecodeError:
                response = {}
            response_ids.append(
                response.get("tool_call_id") if isinstance(response, dict) else None
            )
    calls = []
    for position, body in enumerate(TOOL_CALL.findall(text)):
        try:
            call = json.loads(body)
        except json.JSONDecodeError:
            warnings.append(
                f"{where} turn {turn}: <tool_call> {position} is not JSON; kept as its raw text"
            )
            call = {"name": "unknown", "arguments": {"raw": body}}
        if not isinstance(call, dict):
            call = {"name": "unknown", "arguments": {"value": call}}
        given = response_ids[position] if position < len(response_ids) else None
        call_id = call.get("id") or given or f"sharegpt_{turn}_{position}"
        calls.append(make_call(str(call_id), str(call.get("name")), call.get("arguments")))
    thoughts = THINK.findall(text)
    content = TOOL_CALL.sub("", THINK.sub("", text)).strip()
    message: Message = {"role": "assistant", "content": content or (None if calls else "")}
    if thoughts:
        message["reasoning"] = "\n\n".join(thoughts)
    if calls:
        message["tool_calls"] = calls
    return message


def _responses(
    text: str, messages: list[Message], where: str, turn: int, warnings: list[str]
) -> list[Message]:
    last_calls: list[dict[str, Any]] = next(
        (m.get("tool_calls", []) for m in reversed(messages) if m["role"] == "assistant"), []
    )
    pending = [call["id"] for call in last_calls]
    bodies = TOOL_RESPONSE.findall(text) or [text]
    results = []
    for position, body in enumerate(bodies):
        try:
            response = json.loads(body)
        except json.JSONDecodeError:
            response = {"content": body}
        if not isinstance(response, dict):
            response = {"content": response}
        call_id = response.get("tool_call_id")
        if not call_id:
            if position < len(pending):
                call_id = pending[position]
            else:
                call_id = f"sharegpt_{turn}_orphan_{position}"
                warnings.append(f"{where} turn {turn}: tool response {position} answers no call")
        content = response.get("content", response)
        results.append(tool_message(str(call_id), as_text(content), response.get("name")))
    return results
