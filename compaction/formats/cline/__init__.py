"""Cline, Roo Code and Kilo Code task folders (`…/tasks/<taskId>/`).

A task folder holds `api_conversation_history.json` (the Anthropic messages the model was sent),
`ui_messages.json` (the rows the extension showed, with each model call's usage) and, from
Cline 3.x and in Kilo Code, `task_metadata.json` (the models used, files in context, versions).
The folder or any of those files opens the task: the conversation from the API history
(history.py), the usage, model and version from the other two (usage.py). Read by the generic
Anthropic importer the history came out with every tool call unanswered, because Cline answers a
call with `[tool for '…'] Result:` text, never a `tool_result` block.

Which agent wrote the folder shows in its path, the VS Code extension's storage folder
(`saoudrizwan.claude-dev`, `rooveterinaryinc.roo-cline`, `kilocode.kilo-code`); the format is
one. A compaction the agent recorded (Roo Code's and Kilo Code's condensed context: an assistant
message with `isSummary: true`, its size before in the `condense_context` UI row) is listed in
`compactions`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction.errors import FormatError
from compaction.formats.cline.history import ENVIRONMENT, RESULT, Builder
from compaction.formats.cline.usage import read_usage
from compaction.formats.common import first_user_text
from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.source import Document, read_source

NAME = "cline"
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
AGENTS = (
    ("saoudrizwan.claude-dev", "cline"),
    ("rooveterinaryinc.roo-cline", "roo-code"),
    ("kilocode.kilo-code", "kilo-code"),
    (".cline", "cline"),
)


def _texts(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    if isinstance(content, str):
        return [content]
    return [
        str(b.get("text")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]


def _is_history(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    if not all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in value):
        return False
    texts = [text for m in value if m["role"] == "user" for text in _texts(m)]
    return any(
        text.lstrip().startswith(("<task>", ENVIRONMENT)) or RESULT.match(text) for text in texts
    )


def _is_ui(value: Any) -> bool:
    rows = [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []
    return bool(rows) and all("ts" in r and r.get("type") in ("say", "ask") for r in rows)


def _is_metadata(value: Any) -> bool:
    return isinstance(value, dict) and ("model_usage" in value or "files_in_context" in value)


def sniff(doc: Document) -> tuple[bool, str]:
    if doc.kind != "json":
        return False, "not a JSON document"
    if _is_history(doc.value):
        return True, (
            "a Cline/Roo/Kilo api_conversation_history.json: Anthropic messages with <task>, "
            "<environment_details> or `[tool] Result:` text"
        )
    if _is_ui(doc.value):
        return True, "a Cline/Roo/Kilo ui_messages.json (rows of {ts, type: say | ask})"
    if _is_metadata(doc.value):
        return True, "a Cline/Kilo task_metadata.json (model_usage, files_in_context)"
    return False, "not a Cline task file (api_conversation_history, ui_messages, task_metadata)"


def load(doc: Document) -> list[Conversation]:
    folder = Path(doc.name).parent if doc.name and Path(doc.name).is_file() else None
    if not _is_history(doc.value):
        if folder is None or not (folder / HISTORY).is_file():
            which = UI if _is_ui(doc.value) else METADATA
            raise FormatError(
                f"a Cline task's {which}: the conversation is in {HISTORY} beside it, which is "
                "not there; open the task folder, or its api_conversation_history.json",
                source=doc.name,
            )
        doc = read_source(folder / HISTORY)
        if not _is_history(doc.value):
            raise FormatError(f"not a Cline {HISTORY}", source=doc.name)
    return [_task(doc, folder)]


def _line_of(text: str, summary: str | None) -> int | None:
    """The line of the history file where a condensed summary is written."""
    if not text or not summary:
        return None
    position = text.find(json.dumps(summary, ensure_ascii=False)[1:60])
    return text.count("\n", 0, position) + 1 if position >= 0 else None


def _sibling(folder: Path | None, name: str, warnings: list[str]) -> Any:
    if folder is None or not (folder / name).is_file():
        return None
    try:
        return json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"{name}: not read ({exc}); the task has no usage from it")
        return None


def _task(doc: Document, folder: Path | None) -> Conversation:
    entries = doc.value
    path = str(folder or "")
    agent = next((name for marker, name in AGENTS if marker in path), NAME)
    builder = Builder(report=ImportReport(records=len(entries)), agent=agent)
    for index, entry in enumerate(entries):
        builder.add(index, entry)
    builder.finish()
    warnings = builder.warnings
    rows = _sibling(folder, UI, warnings)
    metadata_file = _sibling(folder, METADATA, warnings)
    answers = sorted(i for i in builder.assistant_at if i not in builder.summaries)
    summaries = sorted(builder.summaries)
    usage = read_usage(
        rows,
        metadata_file,
        builder.assistant_at,
        [builder.assistant_at[i] for i in answers],
        [builder.assistant_at[i] for i in summaries],
    )
    warnings += usage.warnings
    for compaction, before in zip(builder.compactions, usage.condensed, strict=False):
        compaction.tokens_before = before
    for compaction in builder.compactions:
        compaction.line = _line_of(doc.text, compaction.summary)
    metadata: dict[str, Any] = {"agent": agent}
    if folder is not None:
        metadata["task_id"] = folder.name
    for key, value in (
        ("cwd", builder.cwd),
        ("model", usage.model or next((c.model for c in usage.calls if c.model), None)),
        ("provider", usage.provider),
        ("version", usage.version),
    ):
        if value:
            metadata[key] = value
    if rows is None:
        warnings.append(f"no {UI} beside the history: the task's usage and cost are not known")
    return Conversation(
        messages=builder.messages,
        format=NAME,
        title=first_user_text([m for m in builder.messages if not m.get("injected")]),
        metadata=metadata,
        warnings=warnings,
        compactions=builder.compactions,
        report=builder.report,
        calls=usage.calls,
    )
