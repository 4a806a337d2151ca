"""Claude Code session JSONL (`~/.claude/projects/*/<session>.jsonl`).

Why it needs its own importer: Claude Code streams one content block per line (lines of one
`message.id` must be merged back into one assistant message), interleaves bookkeeping records
that are not conversation, records subagent (sidechain) traffic in the same file, and forms a
tree through `parentUuid` that a resumed or forked session branches. We keep the branch that
leads to the last message and report what was left out.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import (
    as_text,
    blocks_to_content,
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

NAME = "claude-code"
CHAT_TYPES = ("user", "assistant")


def sniff(doc: Document) -> tuple[bool, str]:
    records = doc.objects()
    if doc.kind != "jsonl" or not records:
        return False, "not JSON Lines"
    chat = [r for r in records if isinstance(r, dict) and r.get("type") in CHAT_TYPES]
    if not chat:
        return False, "no records of type user/assistant"
    keyed = [r for r in chat if isinstance(r.get("message"), dict) and "uuid" in r]
    if len(keyed) < len(chat):
        return False, "user/assistant records lack `uuid` and a `message` object"
    return True, f"{len(chat)} user/assistant records with `uuid`/`parentUuid` and `message`"


def _main_line(records: list[tuple[int, dict[str, Any]]]) -> set[str]:
    """uuids of the records on the branch that ends at the last conversation record.

    Parallel tool calls make the tree branch even in a linear session (each streamed tool_use
    line has its own child), so siblings that continue the same assistant message, or answer one
    of its calls, count as on the branch.
    """
    by_uuid = {r["uuid"]: r for _, r in records if isinstance(r.get("uuid"), str)}
    leaf = next((r for _, r in reversed(records) if r.get("type") in CHAT_TYPES), None)
    kept: set[str] = set()
    node = leaf
    while node is not None and node.get("uuid") not in kept:
        kept.add(node["uuid"])
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    changed = True
    while changed:
        changed = False
        message_ids = {
            r["message"].get("id") for r in by_uuid.values() if r["uuid"] in kept and _is_asst(r)
        }
        call_ids = {
            block.get("id")
            for r in by_uuid.values()
            if r["uuid"] in kept and _is_asst(r)
            for block in _blocks(r)
            if block.get("type") == "tool_use"
        }
        for _, record in records:
            uuid = record.get("uuid")
            if uuid in kept or record.get("parentUuid") not in kept:
                continue
            same_message = _is_asst(record) and record["message"].get("id") in message_ids
            results = [
                b.get("tool_use_id") for b in _blocks(record) if b.get("type") == "tool_result"
            ]
            answers = bool(results) and all(result in call_ids for result in results)
            if same_message or answers:
                kept.add(str(uuid))
                changed = True
    return kept


def _is_asst(record: dict[str, Any]) -> bool:
    return record.get("type") == "assistant" and isinstance(record.get("message"), dict)


def _blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def load(doc: Document) -> list[Conversation]:
    numbered = list(zip(doc.record_lines, doc.records, strict=True))
    warnings: list[str] = []
    skipped: dict[str, list[int]] = {}
    sidechain: list[int] = []
    off_branch: list[int] = []
    metadata: dict[str, Any] = {}
    title: str | None = None
    chat: list[tuple[int, dict[str, Any]]] = []
    for line, record in numbered:
        kind = record.get("type")
        if kind == "ai-title" or (kind == "summary" and isinstance(record.get("summary"), str)):
            title = str(record.get("title") or record.get("aiTitle") or record.get("summary"))
        if kind not in CHAT_TYPES or not isinstance(record.get("message"), dict):
            skipped.setdefault(str(kind), []).append(line)
            continue
        if record.get("isSidechain"):
            sidechain.append(line)
            continue
        chat.append((line, record))
        for key in ("sessionId", "cwd", "version", "gitBranch"):
            if key in record and key not in metadata:
                metadata[key] = record[key]
        model = record["message"].get("model")
        if isinstance(model, str) and model != "<synthetic>":
            metadata.setdefault("model", model)
    kept = _main_line(chat)
    messages: list[Message] = []
    open_message: dict[str, int] = {}  # message.id -> index in `messages`
    for line, record in chat:
        if record.get("uuid") not in kept:
            off_branch.append(line)
            continue
        if record["type"] == "assistant":
            _add_assistant(record["message"], messages, open_message, line, warnings)
        else:
            _add_user(record["message"], messages, line, warnings)
    warnings[:0] = grouped_skips(skipped, "not conversation")
    if sidechain:
        warnings.append(
            f"{line_list(sidechain)}: left out {len(sidechain)} sidechain (subagent) record(s)"
        )
    if off_branch:
        warnings.append(
            f"{line_list(off_branch)}: left out {len(off_branch)} record(s) on a branch that "
            "does not lead to the last message (resumed or forked session)"
        )
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=title or first_user_text(messages),
            metadata=metadata,
            warnings=warnings,
        )
    ]


def _add_assistant(
    message: dict[str, Any],
    messages: list[Message],
    open_message: dict[str, int],
    line: int,
    warnings: list[str],
) -> None:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking", "")))
        elif kind == "redacted_thinking":
            warnings.append(f"line {line}: redacted thinking block left out (encrypted)")
        elif kind == "tool_use":
            calls.append(
                make_call(str(block.get("id")), str(block.get("name")), block.get("input"))
            )
        else:
            texts.append(as_text(block))
    if isinstance(message.get("content"), str):
        texts.append(message["content"])
    message_id = message.get("id")
    index = open_message.get(message_id) if isinstance(message_id, str) else None
    # Merge a streamed continuation only while nothing but its own tool results followed it.
    if index is not None and all(m["role"] == "tool" for m in messages[index + 1 :]):
        target = messages[index]
        tail = messages[index + 1 :]
        del messages[index + 1 :]
        if texts:
            target["content"] = join_text([target.get("content") or "", *texts])
        if thoughts:
            target["reasoning"] = join_text([target.get("reasoning", ""), *thoughts])
        if calls:
            target["tool_calls"] = [*target.get("tool_calls", []), *calls]
        messages.extend(tail)
        return
    new: Message = {"role": "assistant", "content": join_text(texts) or (None if calls else "")}
    if thoughts:
        new["reasoning"] = join_text(thoughts)
    if calls:
        new["tool_calls"] = calls
    messages.append(new)
    if isinstance(message_id, str):
        open_message[message_id] = len(messages) - 1


def _add_user(
    message: dict[str, Any], messages: list[Message], line: int, warnings: list[str]
) -> None:
    content = message.get("content")
    if not isinstance(content, list):
        messages.append({"role": "user", "content": blocks_to_content(content)})
        return
    others: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            result = blocks_to_content(block.get("content"))
            messages.append(tool_message(str(block.get("tool_use_id")), result))
        else:
            others.append(block)
    if others:
        messages.append({"role": "user", "content": blocks_to_content(others)})
