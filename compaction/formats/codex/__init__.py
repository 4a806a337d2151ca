"""Codex rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`): CLI, IDE extension and Desktop.

Every line is `{timestamp, type, payload}`. The conversation lives in `response_item` lines
(OpenAI Responses-API items); `session_meta` and `turn_context` are settings, `event_msg` lines
are UI/telemetry events that duplicate the items (their token counts are read for compactions),
and `compacted` is Codex's own compaction. Everything is counted in the import report.

How the items map:
- `message`: user/assistant keep their role (a user turn the IDE extension or the Desktop app
  wrapped, `# Context from my IDE setup:` … `## My request for Codex:` request, becomes the
  app's context, marked, and the user's request as a message of its own; see
  `items.ide_split`); `developer` messages (permissions, collaboration mode, app/skills
  instructions) are system content: merged into the leading system message (the session's
  `base_instructions`) while no user/assistant message has come yet, otherwise a `system`
  message in place. Text parts become plain text; `input_image` parts become
  `image_url` parts.
- `reasoning`: readable summary text goes to the assistant message's `reasoning` key; the
  encrypted blob is never text (items with nothing readable are counted as skipped).
- `function_call` (exec_command, shell, shell_command, write_stdin, update_plan, ...),
  `custom_tool_call` (apply_patch: its raw patch text is wrapped as `{"input": ...}`) and
  `local_shell_call` become tool calls; consecutive calls form one assistant turn. Outputs pair by
  `call_id`. An output that is a list of `input_text`/`output_text` parts (or `{content: [...]}`)
  becomes the joined text; an output string holding `{"output": ..., "metadata": ...}` becomes
  its `output` text under a short `Exit code: N · Duration: Ns` header.
- `compacted` (`{message, replacement_history}`): the file keeps the pre-compaction items earlier,
  so the whole history is imported in order and the compaction is recorded as a
  `RecordedCompaction` at the position where the compacted context begins. Its summary is the
  `message` text when there is one (then also inserted there as a user message, as Codex hands
  it to the model); Codex's remote compaction leaves `message` empty and keeps the summary as an
  encrypted `compaction` item, so `summary` is None. `tokens_before` is the last `token_count`
  before it (`last_token_usage.input_tokens`). The trigger is "manual" when the compaction is a
  turn of its own (a task that holds nothing but the compaction, as `/compact` runs), else "auto".
- Early rollouts (before the envelope): a `{id, timestamp, instructions}` header line, then bare
  items and `{"record_type": "state"}` markers; they are read as the enveloped form.
- A forked subagent rollout (first `session_meta` has `forked_from_id` and `source.subagent`)
  replays the parent's history after its own meta: the parent's `session_meta`, then the parent's
  items, all stamped at the fork time. Only the thread's own part is imported; the replay is
  counted as `replayed parent history`. See `fork.replay_end` for how its end is found.

The parts: `items` (how Responses-API items read as chat), `legacy` (early rollouts), `fork`
(a forked subagent's replayed history), `compacted` (Codex's own compactions) and `importer`
(the record loop).
"""

from __future__ import annotations

from dataclasses import replace

from compaction.formats.codex.importer import NAME as NAME
from compaction.formats.codex.importer import CodexImporter
from compaction.formats.codex.legacy import envelope, is_legacy
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document

LINE_TYPES = ("session_meta", "response_item", "turn_context", "event_msg", "compacted")


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "jsonl":
        return False, "not JSON Lines"
    typed = [
        r for r in doc.records if r.get("type") in LINE_TYPES and isinstance(r.get("payload"), dict)
    ]
    if not any(r.get("type") == "response_item" for r in typed):
        if is_legacy(doc.records):
            return True, "an early rollout: a `{id, timestamp}` header, then bare response items"
        return False, "no `response_item` lines with a `payload`"
    return True, f"{len(typed)} `{{type, payload}}` lines including `response_item`"


def load(doc: Document) -> list[Conversation]:
    if not any(r.get("type") == "response_item" for r in doc.records) and is_legacy(doc.records):
        doc = replace(doc, records=envelope(doc.records))
    return [CodexImporter(doc).run()]
