"""Google Antigravity trajectory exports: one step per line.

A step is `{step_index, source (USER_EXPLICIT/MODEL/SYSTEM), type, status, created_at, content?,
thinking?, tool_calls?, error?}`. `USER_INPUT` steps are the user's prompts; a `PLANNER_RESPONSE`
is one model turn (text, `thinking`, and `tool_calls: [{name, args}]` whose every arg value is a
JSON-encoded string); the action steps after it (`CODE_ACTION`, `VIEW_FILE`, `RUN_COMMAND`,
`GENERIC`, ...) are the results of its calls. There are no call ids: results answer the open calls
in order (preferring the call whose tool fits the step type), with ids made from the step index.
System steps (`CONVERSATION_HISTORY`, `KNOWLEDGE_ARTIFACTS`, ...) are kept when they carry text
the model was given; empty markers and ephemeral messages are reported by type. A prompt's
`<USER_REQUEST>` block is the user's message; the IDE's blocks after it (`<ADDITIONAL_METADATA>`,
`<USER_SETTINGS_CHANGE>`) a user message marked as context, and a `CHECKPOINT`'s summary one
marked as the IDE's compaction handoff (messages.INJECTED_KEY).

The parts: `steps` (step types, and a step's text and arguments decoded) and `importer` (the
step loop).
"""

from __future__ import annotations

from compaction.formats.antigravity.importer import AntigravityImport
from compaction.formats.antigravity.steps import NAME as NAME
from compaction.formats.antigravity.steps import PLANNER, USER_INPUT, is_step
from compaction.formats.conversation import Conversation
from compaction.formats.source import Document


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "jsonl":
        return False, "not JSON Lines"
    steps = [r for r in doc.records if is_step(r)]
    if not steps:
        return False, "no `{step_index, source, type}` trajectory steps"
    if not any(s["type"] in (USER_INPUT, PLANNER) for s in steps):
        return False, "no USER_INPUT or PLANNER_RESPONSE step"
    if len(steps) * 2 < len(doc.records):
        return False, "fewer than half of the lines are trajectory steps"
    return True, f"{len(steps)} Antigravity trajectory steps `{{step_index, source, type}}`"


def load(doc: Document) -> list[Conversation]:
    state = AntigravityImport(doc)
    for line, step in zip(doc.record_lines, doc.records, strict=True):
        state.step(line, step)
    return [state.finish()]
