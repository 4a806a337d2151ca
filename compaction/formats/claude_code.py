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
from pathlib import Path
from typing import Any

from compaction.formats.claude_chain import (
    CHAT_TYPES,
    Chain,
    is_chat,
    record_kind,
    select_branch,
)
from compaction.formats.claude_messages import MessageBuilder
from compaction.formats.common import (
    first_user_text,
    line_list,
)
from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.source import Document, read_source
from compaction.formats.usage.claude_code import calls_of
from compaction.messages import Message

NAME = "claude-code"
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
    # The keys alone are not enough: Qwen Code and iFlow write the same envelope. Only a
    # `message.content` is something this importer reads.
    readable = [r for r in keyed if isinstance(r["message"].get("content"), str | list)]
    if not readable:
        parts = sum(1 for r in keyed if isinstance(r["message"].get("parts"), list))
        held = f" ({parts} hold Gemini-style `message.parts`)" if parts else ""
        return False, f"no user/assistant record has a `message.content` to read{held}"
    return True, f"{len(chat)} user/assistant records with `uuid`/`parentUuid` and `message`"


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
    chain = Chain(numbered)
    select_branch(chain, sidechain_file=sidechain)
    builder = MessageBuilder(report, warnings)
    off_branch: list[int] = []
    directories: list[tuple[int, str, int]] = []  # (position, cwd, line) where it changes
    kept: list[tuple[int, dict[str, Any]]] = []
    unbranched_calls = 0
    for line, record in numbered:
        uuid = record.get("uuid")
        if uuid in chain.kept:
            kept.append((line, record))
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd and (not directories or directories[-1][1] != cwd):
                directories.append((len(builder.messages), cwd, line))
            builder.add(line, record)
        elif is_chat(record):
            off_branch.append(line)
            unbranched_calls += record.get("type") == "assistant"
            report.skip("off-branch", "on a branch that does not lead to the last message", line)
        else:
            report.skip(record_kind(record), "not conversation", line)
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
    # The agent's own compactions are no warnings: they are listed in `compactions`, which the
    # CLI prints as notes and the app beside the conversation.
    messages = builder.messages
    conversation = Conversation(
        messages=messages,
        format=NAME,
        title=title or first_user_text([m for m in messages if not _is_wrapper(m)]),
        metadata=_metadata(numbered),
        warnings=warnings,
        compactions=builder.compactions,
        report=report,
        calls=calls_of(kept, builder.call_positions, report.usage_notes),
    )
    if unbranched_calls:
        report.usage_notes.append(
            f"the usage of {unbranched_calls} assistant record(s) on branches that do not lead "
            "to the last message is left out with them"
        )
    for position, cwd, line in directories:
        origin = f"`cwd` of the Claude Code record on line {line}"
        conversation.note_directory(position, cwd, origin)
    return conversation


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
            report.skip(record_kind(record), OUTSIDE_CHAIN.get(str(kind), "not conversation"), line)
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
