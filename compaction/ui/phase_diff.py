"""What a phase changed, message by message, from its origins and fates, plus a text diff.

Each PhaseResult maps its output messages back to input indices (`origins`); matching those with
the previous phase's origins tells which messages were changed, inserted or taken out, without any
marker inside the messages themselves. The text diff is difflib's, on a plain rendering of each
message (text + tool calls), so argument shrinking shows up as clearly as a pruned output.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from compaction.messages import Message, call_arguments, call_name, content_text, tool_calls
from compaction.result import PhaseResult
from compaction.text.tool_output import format_tool_output
from compaction.ui.charts import preview
from compaction.ui.palette import FATE_LABELS


@dataclass(frozen=True)
class Change:
    """One message a phase touched."""

    kind: str  # "changed" | "inserted" | "taken out" | "marked"
    origin: int | None  # input index (None for an inserted message)
    position: int | None  # position in the phase's output (None when taken out)
    fate: str | None
    before: Message | None
    after: Message | None

    @property
    def label(self) -> str:
        where = "new" if self.origin is None else f"#{self.origin}"
        fate = FATE_LABELS.get(self.fate or "", self.fate or self.kind)
        return f"{where} · {self.kind} · {fate}"


def message_text(message: Message | None) -> str:
    """A message as plain lines: role, text, then one line per tool call."""
    if message is None:
        return ""
    lines = [f"[{message.get('role', '?')}]"]
    if message.get("role") == "tool":
        lines.append(f"(result of {message.get('tool_call_id', '?')})")
    text = content_text(message)
    # A JSON-wrapped tool output is diffed as the lines it holds, not as one escaped line.
    lines.extend((format_tool_output(text) if message.get("role") == "tool" else text).splitlines())
    for call in tool_calls(message):
        lines.append(f"→ {call_name(call)}({call_arguments(call)})")
    return "\n".join(lines)


def text_diff(change: Change, max_lines: int = 400) -> str:
    """A unified diff of the message before and after the phase (cut to `max_lines` lines)."""
    before = message_text(change.before).splitlines()
    after = message_text(change.after).splitlines()
    lines = list(difflib.unified_diff(before, after, "before", "after", lineterm="", n=2))
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… {len(lines) - max_lines:,} more diff lines"]
    return "\n".join(lines) or "(no textual difference)"


def phase_changes(
    previous: Sequence[Message], previous_origins: Sequence[int | None], phase: PhaseResult
) -> list[Change]:
    """Every message `phase` changed, inserted or took out, in output order then taken-out ones."""
    before_by_origin = {
        origin: message
        for origin, message in zip(previous_origins, previous, strict=True)
        if origin is not None
    }
    # Messages an earlier phase inserted (the summary, a stub) have no input index either: they are
    # not this phase's insertions, so they are matched against the previous phase's output first.
    earlier_inserts = [
        message
        for origin, message in zip(previous_origins, previous, strict=True)
        if origin is None
    ]
    changes: list[Change] = []
    seen: set[int] = set()
    for position, (origin, message) in enumerate(zip(phase.origins, phase.messages, strict=True)):
        if origin is None:
            match = next(
                (i for i, old in enumerate(earlier_inserts) if old is message or old == message),
                None,
            )
            if match is None:
                changes.append(Change("inserted", None, position, None, None, message))
            else:
                del earlier_inserts[match]
            continue
        seen.add(origin)
        before = before_by_origin.get(origin)
        fate = phase.fates.get(origin)
        if before is not message and before != message:
            changes.append(Change("changed", origin, position, fate, before, message))
        elif fate is not None:
            changes.append(Change("marked", origin, position, fate, before, message))
    for origin, before in before_by_origin.items():
        if origin not in seen:
            changes.append(Change("taken out", origin, None, phase.fates.get(origin), before, None))
    return changes


def change_rows(changes: Sequence[Change]) -> dict[str, list[object]]:
    """Columns of the change table."""
    return {
        "input #": [c.origin for c in changes],
        "output #": [c.position for c in changes],
        "change": [c.kind for c in changes],
        "what happened": [FATE_LABELS.get(c.fate or "", c.fate or "") for c in changes],
        "before": [preview(c.before) if c.before is not None else "" for c in changes],
        "after": [preview(c.after) if c.after is not None else "" for c in changes],
    }
