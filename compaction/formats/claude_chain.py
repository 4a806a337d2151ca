"""Claude Code's record tree: which records form the branch that leads to the last message.

Records link through `uuid`/`parentUuid`; records that are not conversation (attachments,
progress, system records) are links too, and a compact boundary continues through
`logicalParentUuid`. claude_code.py turns the chosen records into messages (claude_messages.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHAT_TYPES = ("user", "assistant")


def is_chat(record: dict[str, Any]) -> bool:
    return record.get("type") in CHAT_TYPES and isinstance(record.get("message"), dict)


def is_assistant(record: dict[str, Any]) -> bool:
    return record.get("type") == "assistant" and isinstance(record.get("message"), dict)


def blocks_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def parent_of(record: dict[str, Any]) -> Any:
    # A compact boundary restarts the chain; its logical parent continues the history.
    parent = record.get("parentUuid")
    return parent if parent is not None else record.get("logicalParentUuid")


def record_kind(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    if kind == "progress" and isinstance(record.get("data"), dict):
        return f"progress/{record['data'].get('type')}"
    if kind == "system" and record.get("subtype"):
        return f"system/{record['subtype']}"
    if kind == "attachment" and isinstance(record.get("attachment"), dict):
        return f"attachment/{record['attachment'].get('type')}"
    return kind


@dataclass
class Chain:
    """The records of one conversation (the main line, or one subagent) in file order."""

    numbered: list[tuple[int, dict[str, Any]]]
    kept: set[str] = field(default_factory=set)
    broken: list[str] = field(default_factory=list)


def select_branch(chain: Chain, sidechain_file: bool) -> None:
    """Mark (in `chain.kept`) the uuids on the branch that ends at the last conversation record.

    The walk goes through every record kind (progress, attachment, system records are links
    too) and across compact boundaries. Parallel tool calls make the tree branch even in a linear
    session (each streamed tool_use record has its own child), so records that continue a kept
    assistant message, or answer one of its calls, count as on the branch; they are found through
    their nearest conversation ancestor, re-linking around non-conversation records.
    """
    by_uuid: dict[str, dict[str, Any]] = {}
    for _, record in chain.numbered:
        if isinstance(record.get("uuid"), str):
            by_uuid[record["uuid"]] = record
    # The last record of any kind: trailing progress or attachment records are on the branch.
    leaf = next((r for _, r in reversed(chain.numbered) if isinstance(r.get("uuid"), str)), None)
    kept = chain.kept
    node = leaf
    while node is not None and node["uuid"] not in kept:
        kept.add(node["uuid"])
        parent = parent_of(node)
        if not isinstance(parent, str):
            break
        following = by_uuid.get(parent)
        if following is None and not sidechain_file:
            # A subagent file's first record points into the main session: expected.
            chain.broken.append(parent)
        node = following

    memo: dict[str, str | None] = {}

    def chat_ancestor(record: dict[str, Any]) -> str | None:
        """uuid of the nearest user/assistant ancestor, skipping non-conversation records."""
        trail: list[str] = []
        current = by_uuid.get(parent_of(record)) if isinstance(parent_of(record), str) else None
        found: str | None = None
        while current is not None:
            uuid = current["uuid"]
            if uuid in memo:
                found = memo[uuid]
                break
            if is_chat(current):
                found = uuid
                break
            if uuid in trail:
                break  # a cycle in a damaged file
            trail.append(uuid)
            parent = parent_of(current)
            current = by_uuid.get(parent) if isinstance(parent, str) else None
        for uuid in trail:
            memo[uuid] = found
        return found

    children: dict[str, list[dict[str, Any]]] = {}
    for _, record in chain.numbered:
        if is_chat(record) and record["uuid"] not in kept:
            ancestor = chat_ancestor(record)
            if ancestor is not None:
                children.setdefault(ancestor, []).append(record)
    message_ids = {
        r["message"].get("id") for r in by_uuid.values() if r["uuid"] in kept and is_assistant(r)
    }
    call_ids = {
        block.get("id")
        for r in by_uuid.values()
        if r["uuid"] in kept and is_assistant(r)
        for block in blocks_of(r)
        if block.get("type") == "tool_use"
    }
    queue = [uuid for uuid in kept if uuid in children]
    while queue:
        for record in children.pop(queue.pop(), []):
            uuid = record["uuid"]
            if uuid in kept:
                continue
            same_message = is_assistant(record) and record["message"].get("id") in message_ids
            results = [
                b.get("tool_use_id") for b in blocks_of(record) if b.get("type") == "tool_result"
            ]
            answers = bool(results) and all(result in call_ids for result in results)
            if not (same_message or answers):
                continue
            kept.add(uuid)
            if is_assistant(record):
                message_ids.add(record["message"].get("id"))
                call_ids.update(
                    b.get("id") for b in blocks_of(record) if b.get("type") == "tool_use"
                )
            if uuid in children:
                queue.append(uuid)
