"""hermes-agent session JSON (`{session_id, system_prompt, tools, messages}`).

The messages are already OpenAI chat messages, but the system prompt sits outside them and the
assistant messages carry provider extras (encrypted Codex reasoning items, finish reasons) that
must not travel on. Summaries from an earlier in-session compaction are kept verbatim: they start
with the same prefix our summaries use, so the engine treats them as previous summaries.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.common import first_user_text
from compaction.formats.conversation import Conversation, ImportReport, RecordedCompaction
from compaction.formats.openai import clean_messages
from compaction.formats.source import Document
from compaction.formats.usage.hermes import calls_of
from compaction.summary import SUMMARY_PREFIX

NAME = "hermes"
DUPLICATE_MARK = "[Duplicate tool output"


def sniff(doc: Document) -> tuple[bool, str]:
    value = doc.value
    if doc.kind != "json" or not isinstance(value, dict):
        return False, "not a single JSON object"
    if not isinstance(value.get("messages"), list):
        return False, "no `messages` list"
    if "system_prompt" not in value and "session_id" not in value:
        return False, "no `system_prompt` or `session_id` beside `messages`"
    return True, "a JSON object with `messages` plus hermes' `system_prompt`/`session_id`"


def load(doc: Document) -> list[Conversation]:
    value: dict[str, Any] = doc.value
    messages, warnings = clean_messages(value["messages"], "messages")
    prompt = value.get("system_prompt")
    offset = 0
    if isinstance(prompt, str) and prompt:
        messages.insert(0, {"role": "system", "content": prompt})
        offset = 1
    report = ImportReport(records=len(messages), imported=len(messages))
    calls = calls_of(value, offset, report.usage_notes)
    metadata: dict[str, Any] = {
        key: value[key]
        for key in ("session_id", "model", "base_url", "platform", "session_start", "last_updated")
        if key in value
    }
    summaries = [
        index
        for index, message in enumerate(messages)
        if isinstance(message.get("content"), str)
        and message["content"].startswith(SUMMARY_PREFIX.split("]")[0])
    ]
    if summaries:
        metadata["previous_summary_indices"] = summaries
    # hermes writes no trigger or token count beside its summaries.
    compactions = [
        RecordedCompaction(
            position=index,
            agent=NAME,
            summary=str(messages[index]["content"]).split("\n", 1)[-1],
        )
        for index in summaries
    ]
    duplicates = sum(
        1
        for m in messages
        if m["role"] == "tool" and str(m.get("content", "")).startswith(DUPLICATE_MARK)
    )
    if duplicates:
        metadata["deduplicated_tool_outputs"] = duplicates
    tools = [t for t in value.get("tools") or [] if isinstance(t, dict)]
    return [
        Conversation(
            messages=messages,
            format=NAME,
            title=first_user_text(messages),
            metadata=metadata,
            tools=tools,
            warnings=warnings,
            compactions=compactions,
            report=report,
            calls=calls,
        )
    ]
