"""Claude Code session JSONL (`~/.claude/projects/*/<session>.jsonl`, Claude Code 2.0–2.1).

Why it needs its own importer (OBSERVED_FORMATS.md, section 1):
- The conversation is a tree through `uuid`/`parentUuid`, and records that are not conversation
  sit *inside* the chain: `attachment` (skill listings, deferred tool lists, permissions),
  `progress` (hook, bash and agent progress) and `system` records (turn durations, stop-hook
  summaries). We walk back from the last message through every record kind, so the chain never
  stops at one of them, and keep the branch that leads to the last message (a resumed or forked
  session branches).
- A compaction by Claude Code restarts the chain: a `compact_boundary` record has
  `parentUuid: null` and names the last record before it in `logicalParentUuid`. We continue
  through it, so the whole logical history of the file is imported, and record the compaction
  (trigger, `preTokens`, the `isCompactSummary` message that follows) in `compactions`.
- One model response is streamed as one record per content block sharing `message.id`; they are
  merged back into the one assistant message the provider saw.
- Subagent (sidechain) traffic is kept out of the main conversation and offered as conversations
  of its own: sidechain records inside the file, the older flat `agent-*.jsonl` files beside the
  session, and the newer `<session>/subagents/agent-*.jsonl` folder. A subagent file opened on its
  own imports as that subagent's conversation.
- Text the harness injected and the model saw (isMeta user records: skill bodies, caveats,
  reminders; attachments that carry text) joins the user turn it travelled in, as the API
  receives it; everything else is counted, by kind, in the import report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction.formats.common import (
    as_text,
    blocks_to_content,
    first_user_text,
    join_text,
    line_list,
    make_call,
    tool_message,
)
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.source import Document, read_source
from compaction.messages import Message

NAME = "claude-code"
CHAT_TYPES = ("user", "assistant")
# Record kinds that never carry a uuid: bookkeeping beside the chain.
OUTSIDE_CHAIN = {
    "file-history-snapshot": "file backup bookkeeping, not conversation",
    "queue-operation": "input queue bookkeeping, not conversation",
    "permission-mode": "permission mode setting, not conversation",
    "summary": "session title, not conversation",
    "ai-title": "session title, not conversation",
    "last-prompt": "prompt history bookkeeping, not conversation",
}
MAX_SUBAGENT_FILES = 200


def sniff(doc: Document) -> tuple[bool, str]:
    # A one-line session parses as a single JSON object: still a session.
    records = doc.objects()
    if not records:
        return False, "not JSON Lines"
    chat = [r for r in records if isinstance(r, dict) and r.get("type") in CHAT_TYPES]
    if not chat:
        return False, "no records of type user/assistant"
    keyed = [r for r in chat if isinstance(r.get("message"), dict) and "uuid" in r]
    if len(keyed) < len(chat):
        return False, "user/assistant records lack `uuid` and a `message` object"
    return True, f"{len(chat)} user/assistant records with `uuid`/`parentUuid` and `message`"


def _is_chat(record: dict[str, Any]) -> bool:
    return record.get("type") in CHAT_TYPES and isinstance(record.get("message"), dict)


def _is_asst(record: dict[str, Any]) -> bool:
    return record.get("type") == "assistant" and isinstance(record.get("message"), dict)


def _blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _parent(record: dict[str, Any]) -> Any:
    # A compact boundary restarts the chain; its logical parent continues the history.
    parent = record.get("parentUuid")
    return parent if parent is not None else record.get("logicalParentUuid")


def _kind(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    if kind == "progress" and isinstance(record.get("data"), dict):
        return f"progress/{record['data'].get('type')}"
    if kind == "system" and record.get("subtype"):
        return f"system/{record['subtype']}"
    if kind == "attachment" and isinstance(record.get("attachment"), dict):
        return f"attachment/{record['attachment'].get('type')}"
    return kind


@dataclass
class _Chain:
    """The records of one conversation (the main line, or one subagent) in file order."""

    numbered: list[tuple[int, dict[str, Any]]]
    kept: set[str] = field(default_factory=set)
    broken: list[str] = field(default_factory=list)


def _select_branch(chain: _Chain, sidechain_file: bool) -> None:
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
        parent = _parent(node)
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
        current = by_uuid.get(_parent(record)) if isinstance(_parent(record), str) else None
        found: str | None = None
        while current is not None:
            uuid = current["uuid"]
            if uuid in memo:
                found = memo[uuid]
                break
            if _is_chat(current):
                found = uuid
                break
            if uuid in trail:
                break  # a cycle in a damaged file
            trail.append(uuid)
            parent = _parent(current)
            current = by_uuid.get(parent) if isinstance(parent, str) else None
        for uuid in trail:
            memo[uuid] = found
        return found

    children: dict[str, list[dict[str, Any]]] = {}
    for _, record in chain.numbered:
        if _is_chat(record) and record["uuid"] not in kept:
            ancestor = chat_ancestor(record)
            if ancestor is not None:
                children.setdefault(ancestor, []).append(record)
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
    queue = [uuid for uuid in kept if uuid in children]
    while queue:
        for record in children.pop(queue.pop(), []):
            uuid = record["uuid"]
            if uuid in kept:
                continue
            same_message = _is_asst(record) and record["message"].get("id") in message_ids
            results = [
                b.get("tool_use_id") for b in _blocks(record) if b.get("type") == "tool_result"
            ]
            answers = bool(results) and all(result in call_ids for result in results)
            if not (same_message or answers):
                continue
            kept.add(uuid)
            if _is_asst(record):
                message_ids.add(record["message"].get("id"))
                call_ids.update(b.get("id") for b in _blocks(record) if b.get("type") == "tool_use")
            if uuid in children:
                queue.append(uuid)


def _attachment_text(attachment: dict[str, Any]) -> str | None:
    """The text an attachment put in front of the model, or None when it sent none."""
    content = attachment.get("content")
    if isinstance(content, str) and content.strip():
        return content
    lines = attachment.get("addedLines")
    if isinstance(lines, list) and lines:
        return "\n".join(str(line) for line in lines)
    for key in ("text", "prompt", "stdout"):
        if isinstance(attachment.get(key), str) and attachment[key].strip():
            return str(attachment[key])
    return None


class _Builder:
    """Canonical messages from kept records, merging streamed blocks of one response."""

    def __init__(self, report: ImportReport, warnings: list[str]) -> None:
        self.messages: list[Message] = []
        self.open_message: dict[str, int] = {}  # message.id -> index in `messages`
        self.report = report
        self.warnings = warnings
        self.compactions: list[RecordedCompaction] = []
        self.pending_boundary: tuple[int, dict[str, Any]] | None = None
        self.redacted: list[int] = []

    def add(self, line: int, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "assistant" and isinstance(record.get("message"), dict):
            self._assistant(record["message"], line)
        elif kind == "user" and isinstance(record.get("message"), dict):
            if record.get("isCompactSummary"):
                self._compact_summary(line, record)
            elif record.get("isMeta"):
                self._injected(line, blocks_to_content(record["message"].get("content")))
            else:
                self._user(record["message"])
        elif kind == "attachment" and isinstance(record.get("attachment"), dict):
            text = _attachment_text(record["attachment"])
            if text is None:
                self.report.skip(_kind(record), "attachment with no text for the model", line)
                return
            self._injected(line, f"<system-reminder>\n{text}\n</system-reminder>")
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            self.pending_boundary = (line, record)
            self.report.skip(_kind(record), "compaction marker (listed in compactions)", line)
            return
        else:
            self.report.skip(_kind(record), "not conversation", line)
            return
        self.report.imported += 1

    def _injected(self, line: int, content: Any) -> None:
        """Harness text the model saw: it travels in the user turn it follows."""
        text = content if isinstance(content, str) else None
        last = self.messages[-1] if self.messages else None
        if (
            text is not None
            and last is not None
            and last["role"] in ("user", "tool")
            and (isinstance(last.get("content"), str) or last.get("content") is None)
        ):
            last["content"] = join_text([last.get("content") or "", text])
            return
        self.messages.append({"role": "user", "content": content})

    def _compact_summary(self, line: int, record: dict[str, Any]) -> None:
        content = blocks_to_content(record["message"].get("content"))
        self.messages.append({"role": "user", "content": content})
        boundary = self.pending_boundary
        self.pending_boundary = None
        metadata = boundary[1].get("compactMetadata") if boundary is not None else None
        metadata = metadata if isinstance(metadata, dict) else {}
        trigger = metadata.get("trigger")
        tokens = metadata.get("preTokens")
        self.compactions.append(
            RecordedCompaction(
                position=len(self.messages) - 1,
                agent=NAME,
                trigger=trigger if trigger in ("auto", "manual") else "unknown",
                tokens_before=tokens if isinstance(tokens, int) else None,
                summary=content if isinstance(content, str) else as_text(content),
                line=boundary[0] if boundary is not None else line,
            )
        )

    def finish(self) -> None:
        if self.pending_boundary is not None:
            # A boundary with no summary after it (a truncated file): still a compaction.
            line, record = self.pending_boundary
            metadata = record.get("compactMetadata")
            metadata = metadata if isinstance(metadata, dict) else {}
            tokens = metadata.get("preTokens")
            self.compactions.append(
                RecordedCompaction(
                    position=len(self.messages),
                    agent=NAME,
                    trigger=str(metadata.get("trigger") or "unknown"),
                    tokens_before=tokens if isinstance(tokens, int) else None,
                    summary=None,
                    line=line,
                )
            )
        if self.redacted:
            self.warnings.append(
                f"{line_list(self.redacted)}: {len(self.redacted)} redacted (encrypted) thinking "
                "block(s) left out"
            )

    def _assistant(self, message: dict[str, Any], line: int) -> None:
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
                self.redacted.append(line)
            elif kind in ("tool_use", "server_tool_use"):
                calls.append(
                    make_call(str(block.get("id")), str(block.get("name")), block.get("input"))
                )
            else:
                texts.append(as_text(block))
        if isinstance(content, str):
            texts.append(content)
        messages = self.messages
        message_id = message.get("id")
        index = self.open_message.get(message_id) if isinstance(message_id, str) else None
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
            self.open_message[message_id] = len(messages) - 1

    def _user(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            self.messages.append({"role": "user", "content": blocks_to_content(content)})
            return
        others: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                result = blocks_to_content(block.get("content"))
                if block.get("is_error") and isinstance(result, str):
                    result = result if result.startswith("Error") else f"Error: {result}"
                self.messages.append(tool_message(str(block.get("tool_use_id")), result))
            else:
                others.append(block)
        if others:
            self.messages.append({"role": "user", "content": blocks_to_content(others)})


def _metadata(numbered: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for _, record in numbered:
        for key in ("sessionId", "cwd", "version", "gitBranch", "agentId", "slug"):
            if key in record and key not in metadata:
                metadata[key] = record[key]
        message = record.get("message")
        model = message.get("model") if isinstance(message, dict) else None
        if isinstance(model, str) and model != "<synthetic>":
            metadata.setdefault("model", model)
    return metadata


def _conversation(
    numbered: list[tuple[int, dict[str, Any]]],
    report: ImportReport,
    warnings: list[str],
    *,
    sidechain: bool,
    title: str | None = None,
) -> Conversation:
    chain = _Chain(numbered)
    _select_branch(chain, sidechain_file=sidechain)
    builder = _Builder(report, warnings)
    off_branch: list[int] = []
    for line, record in numbered:
        uuid = record.get("uuid")
        if uuid in chain.kept:
            builder.add(line, record)
        elif _is_chat(record):
            off_branch.append(line)
            report.skip("off-branch", "on a branch that does not lead to the last message", line)
        else:
            report.skip(_kind(record), "not conversation", line)
    builder.finish()
    if chain.broken:
        warnings.append(
            f"the chain of parentUuid links breaks at {len(chain.broken)} record(s) whose parent "
            f"is not in the file (first: {chain.broken[0]}); only the part after the break is "
            "imported"
        )
    if off_branch:
        warnings.append(
            f"{line_list(off_branch)}: left out {len(off_branch)} record(s) on a branch that "
            "does not lead to the last message (resumed or forked session)"
        )
    for compaction in builder.compactions:
        trigger = "" if compaction.trigger == "unknown" else f" ({compaction.trigger})"
        tokens = f" at {compaction.tokens_before:,} tokens" if compaction.tokens_before else ""
        warnings.append(
            f"line {compaction.line}: Claude Code compacted the context here{trigger}{tokens}; "
            f"its summary is message {compaction.position}"
        )
    messages = builder.messages
    return Conversation(
        messages=messages,
        format=NAME,
        title=title or first_user_text([m for m in messages if not _is_wrapper(m)]),
        metadata=_metadata(numbered),
        warnings=warnings,
        compactions=builder.compactions,
        report=report,
    )


def _is_wrapper(message: Message) -> bool:
    content = message.get("content")
    return isinstance(content, str) and content.lstrip().startswith(
        ("<command-", "<local-command", "Caveat:", "<system-reminder>", "This session is being")
    )


def _numbered(doc: Document) -> list[tuple[int, dict[str, Any]]]:
    if doc.kind == "jsonl":
        return list(zip(doc.record_lines, doc.records, strict=True))
    return [(1, record) for record in doc.objects()]


def load(doc: Document) -> list[Conversation]:
    numbered = _numbered(doc)
    title: str | None = None
    main: list[tuple[int, dict[str, Any]]] = []
    agents: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    report = ImportReport(records=len(numbered))
    warnings: list[str] = []
    for line, record in numbered:
        kind = record.get("type")
        if kind == "ai-title" or (kind == "summary" and isinstance(record.get("summary"), str)):
            title = str(record.get("title") or record.get("aiTitle") or record.get("summary"))
        if not isinstance(record.get("uuid"), str):
            report.skip(_kind(record), OUTSIDE_CHAIN.get(str(kind), "not conversation"), line)
            continue
        if record.get("isSidechain"):
            agents.setdefault(str(record.get("agentId") or "sidechain"), []).append((line, record))
        else:
            main.append((line, record))
    if not main and agents:
        # A subagent's own file: its records are the conversation.
        conversations = []
        for agent_id, records in agents.items():
            part = report if len(agents) == 1 else ImportReport(records=len(records))
            conversations.append(
                _conversation(
                    records,
                    part,
                    warnings if len(agents) == 1 else [],
                    sidechain=True,
                    title=_agent_title(agent_id, records),
                )
            )
        return conversations
    for records in agents.values():
        for line, _record in records:
            report.skip("sidechain", "subagent record (offered as its own conversation)", line)
    conversation = _conversation(main, report, warnings, sidechain=False, title=title)
    subagents = [
        _conversation(
            records,
            ImportReport(records=len(records)),
            [],
            sidechain=True,
            title=_agent_title(agent_id, records),
        )
        for agent_id, records in agents.items()
    ]
    subagents += _subagent_files(doc, conversation)
    subagents = [c for c in subagents if c.messages]
    if subagents:
        conversation.warnings.append(
            f"{len(subagents)} subagent conversation(s) offered separately (--index 1.."
            f"{len(subagents)}): {', '.join(str(c.metadata.get('agentId')) for c in subagents)}"
        )
    return [conversation, *subagents]


def _agent_title(agent_id: str, records: list[tuple[int, dict[str, Any]]]) -> str:
    for _, record in records:
        message = record.get("message")
        if record.get("type") == "user" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                first = content.strip().splitlines()[0]
                first = first if len(first) <= 70 else first[:69] + "…"
                return f"subagent {agent_id}: {first}"
    return f"subagent {agent_id}"


def _subagent_files(doc: Document, parent: Conversation) -> list[Conversation]:
    """Subagent transcripts stored beside a session file opened from disk.

    2.1.x: `<session>/subagents/agent-*.jsonl`; 2.0.x: flat `agent-*.jsonl` files in the same
    project folder, matched by `sessionId`. The Task prompt of a 2.0.x subagent exists only in the
    parent's `toolUseResult.prompt`; it is put back as the subagent's first user message.
    """
    if not doc.name:
        return []
    path = Path(doc.name)
    session_id = parent.metadata.get("sessionId")
    if not path.is_file() or not isinstance(session_id, str):
        return []
    candidates = sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))
    candidates += [
        p for p in sorted(path.parent.glob("agent-*.jsonl")) if _first_session_id(p) == session_id
    ]
    prompts = _task_prompts(doc)
    conversations: list[Conversation] = []
    for candidate in candidates[:MAX_SUBAGENT_FILES]:
        try:
            document = read_source(candidate)
        except Exception:
            parent.warnings.append(f"{candidate.name}: subagent file could not be read; skipped")
            continue
        if not sniff(document)[0]:
            continue
        for conversation in load(document):
            agent_id = conversation.metadata.get("agentId")
            prompt = prompts.get(str(agent_id))
            if prompt and (not conversation.messages or conversation.messages[0]["role"] != "user"):
                conversation.messages.insert(0, {"role": "user", "content": prompt})
                conversation.warnings.append(
                    "message 0: the Task prompt, taken from the parent session's tool result"
                )
            conversation.source = str(candidate)
            conversations.append(conversation)
    return conversations


def _first_session_id(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline()
        value = json.loads(first)
    except (OSError, ValueError):
        return None
    session = value.get("sessionId") if isinstance(value, dict) else None
    return session if isinstance(session, str) else None


def _task_prompts(doc: Document) -> dict[str, str]:
    prompts: dict[str, str] = {}
    for _, record in _numbered(doc):
        result = record.get("toolUseResult")
        if (
            isinstance(result, dict)
            and isinstance(result.get("agentId"), str)
            and isinstance(result.get("prompt"), str)
        ):
            prompts[result["agentId"]] = result["prompt"]
    return prompts
