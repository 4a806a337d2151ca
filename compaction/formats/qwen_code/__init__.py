"""Qwen Code chat recordings (`~/.qwen/projects/<project>/chats/<id>.jsonl`, Qwen Code 0.5).

Why it needs its own importer: the records wear Claude Code's envelope (`uuid`, `parentUuid`,
`sessionId`, `type`, `cwd`, `version`, `gitBranch`), but Qwen Code is a Gemini CLI fork and its
`message` is a Gemini `Content`, `{role: "user" | "model", parts: [...]}`. Read as Claude Code
(which looks for `message.content`) such a file came out as empty messages; docs/formats.md has
the record types. The mapping:
- `user` records: the `text` parts are the user's words; after an @-mention Gemini CLI appends
  `--- Content from referenced files ---` and the files' text, which the harness sent: that part
  becomes a user message of its own, marked injected ("context"). `inlineData` parts are images.
- `assistant` records: `text` parts are the reply, `thought: true` parts its reasoning,
  `functionCall {id, name, args}` parts its tool calls; `model` and `usageMetadata` (Gemini's
  `promptTokenCount`, `candidatesTokenCount`, `cachedContentTokenCount`, `thoughtsTokenCount`)
  are kept.
- `tool_result` records: a `functionResponse {id, name, response: {output | error}}` part
  answers the call with that id (`toolCallResult.callId` when the part has none).
- `system` records: `ui_telemetry` with an `api_response` event carries one model call's token
  counts (`input_token_count` = the whole prompt, `cached_content_token_count`,
  `output_token_count`, `thoughts_token_count`, `auth_type`) — each becomes a `ModelCall`, at the
  assistant message it produced when one was recorded just before it, else at the point it was
  made (a compression, a title); `chat_compression` is Qwen Code's compaction:
  `systemPayload.info.originalTokenCount` is the size before, `compressedHistory[0]` the
  `<state_snapshot>` summary the model went on from, which is imported there as a user message
  (marked injected, "compaction") and listed in `compactions` (trigger "manual" after a
  `/compress` slash command, else "unknown"); `slash_command`, `at_command`, `custom_title`
  and the rest are counted in the report.
- The records form a tree like Claude Code's: the branch that leads to the last record is
  imported (claude_chain.select_branch), subagent (`isSidechain`) records are counted apart.
"""

from __future__ import annotations

from compaction.formats.conversation import Conversation
from compaction.formats.qwen_code.importer import load_recording
from compaction.formats.qwen_code.records import NAME as NAME
from compaction.formats.qwen_code.records import is_recording
from compaction.formats.source import Document


def sniff(doc: Document) -> tuple[bool, str]:
    records = doc.objects()
    if not records:
        return False, "not JSON Lines"
    return is_recording(records)


def load(doc: Document) -> list[Conversation]:
    if doc.kind != "jsonl":
        doc = Document(
            text=doc.text, kind="jsonl", name=doc.name, records=doc.objects(), record_lines=[1]
        )
    return [load_recording(doc)]
