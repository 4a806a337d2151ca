"""The result of importing a conversation file: canonical messages plus what the source told us.

Importers return this rather than a bare message list because the UI and the CLI need the rest:
which format was recognised, a title to show, the model and working directory when the source
records them, the tool schemas, every repair or omission the import made (each warning names the
line or index it concerns, so a user can look it up in the original file), the compactions the
agent itself made in the session, and a report of every record read, imported or skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compaction.messages import Message
from compaction.summary.recorded import RecordedDirectory, SessionRecord

TRIGGERS = ("auto", "manual", "unknown")


#: How a compaction line names where its tokens-before came from.
TOKENS_SOURCES = {
    "agent": " (counted by the agent)",
    "usage": " (the last recorded call's usage)",
}


@dataclass
class RecordedCompaction:
    """A compaction the session's own agent made (Claude Code's compact boundary, Codex's
    `compacted` item, a hermes summary, Gemini CLI's compression).

    `position` is the index in `Conversation.messages` where the agent's compacted context
    begins (its summary message when it has one); `summary` is None when the agent's summary is
    not readable (Codex's server-side compaction is encrypted).

    `tokens_source` says where `tokens_before` comes from: "agent" when the agent wrote its own
    count beside the compaction (Claude Code's preTokens, Gemini CLI's and Copilot CLI's
    figures), "usage" when the importer took the last model call's recorded usage before it
    (Codex's token_count, OpenCode's step usage). A report names it: the two can differ.
    """

    position: int
    agent: str
    trigger: str = "unknown"
    tokens_before: int | None = None
    summary: str | None = None
    line: int | None = None  # where the compaction is recorded in the source file
    tokens_source: str | None = None  # "agent" or "usage" (see above); None with no tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "agent": self.agent,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "summary": self.summary,
            "line": self.line,
            "tokens_source": self.tokens_source,
        }


@dataclass(frozen=True)
class ModelCall:
    """One model call as the session file recorded the provider's usage for it.

    The provider's figures, never our estimates: `input_tokens` is the whole prompt the provider
    counted (fresh input + the part read from the cache + the part written to it), which is the
    context the model saw, system prompt and tool schemas included. Providers split it
    differently (Anthropic reports `input_tokens` without the cache parts, OpenAI includes cached
    tokens in `prompt_tokens`); each importer adds it up so that this field means one thing.
    A field the file does not record is None, never 0.

    `position` is the index in `Conversation.messages` of the assistant message the call
    produced (the message count at that point when it produced none); `line` is where the usage
    is recorded in the source file; `call_id` the provider's id for the call when the file has
    one (Claude Code's `message.id`: streamed records repeat it, and it is one call).
    """

    position: int
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    model: str | None = None
    timestamp: str | None = None
    cost_usd: float | None = None  # what the file itself says the call cost, when it says
    line: int | None = None
    call_id: str | None = None
    #: The part of `cache_write_tokens` written with a 1-hour TTL (Anthropic prices it apart).
    cache_write_1h_tokens: int | None = None

    @property
    def fresh_input_tokens(self) -> int | None:
        """The prompt tokens neither read from nor written to the cache."""
        if self.input_tokens is None:
            return None
        return self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "model": self.model,
            "timestamp": self.timestamp,
            "cost_usd": self.cost_usd,
            "line": self.line,
            "call_id": self.call_id,
            "cache_write_1h_tokens": self.cache_write_1h_tokens,
        }


@dataclass
class Skipped:
    """Records of one kind that did not become messages, and why."""

    kind: str
    reason: str
    lines: list[int] = field(default_factory=list)
    count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "reason": self.reason,
            "lines": self.lines[:50],
        }


@dataclass
class ImportReport:
    """Every record of the source accounted for: read, imported, or skipped by kind with a reason.

    `records` counts the source's units (JSONL lines, list entries, steps, events); `imported`
    those that contributed to the messages. Nothing is dropped silently: what is neither is in
    `skipped`.
    """

    records: int = 0
    imported: int = 0
    skipped: dict[str, Skipped] = field(default_factory=dict)
    #: What the provider's usage in the file did not give as calls, and why (formats/usage/).
    usage_notes: list[str] = field(default_factory=list)

    def skip(self, kind: str, reason: str, line: int | None = None, count: int = 1) -> None:
        entry = self.skipped.get(kind)
        if entry is None:
            entry = self.skipped[kind] = Skipped(kind=kind, reason=reason)
        entry.count += count
        if line is not None:
            entry.lines.append(line)

    @property
    def skipped_total(self) -> int:
        return sum(entry.count for entry in self.skipped.values())

    def skip_lines(self) -> list[str]:
        """`progress ×1,333: not conversation`, largest first, one line per kind."""
        ordered = sorted(self.skipped.values(), key=lambda entry: (-entry.count, entry.kind))
        return [f"{entry.kind} ×{entry.count:,}: {entry.reason}" for entry in ordered]

    def summary_line(self) -> str:
        return (
            f"{self.records:,} record(s) read, {self.imported:,} imported, "
            f"{self.skipped_total:,} skipped"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "imported": self.imported,
            "skipped": [entry.to_dict() for entry in self.skipped.values()],
            "usage_notes": list(self.usage_notes),
        }


@dataclass
class Conversation:
    """One imported conversation in canonical OpenAI chat format."""

    messages: list[Message]
    format: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str | None = None
    compactions: list[RecordedCompaction] = field(default_factory=list)
    report: ImportReport | None = None
    #: The provider's usage per model call, where the file records it (formats/conversation.py
    #: ModelCall); empty when it records none.
    calls: list[ModelCall] = field(default_factory=list)
    #: Each working directory the file records and the message from which it applies.
    directories: list[RecordedDirectory] = field(default_factory=list)
    #: Which user-role messages the agent's harness sent (hook output, reminders, command
    #: wrappers…): message index -> kind (messages.INJECTED_KINDS). Beside the messages, never in
    #: them: a provider that rejects unknown keys would refuse a message that carried it.
    marks: dict[int, str] = field(default_factory=dict)

    def record(self) -> SessionRecord:
        """What the file recorded beside the messages, for `compress(..., recorded=…)`: the
        working directories it names (else its one `cwd`, as the importer kept it) and the
        marks."""
        marks = tuple(sorted(self.marks.items()))
        if self.directories:
            return SessionRecord(tuple(self.directories), marks)
        cwd = self.metadata.get("cwd")
        if isinstance(cwd, str) and cwd.strip():
            origin = f"the working directory the {self.format} session records"
            return SessionRecord((RecordedDirectory(0, cwd.strip(), origin),), marks)
        return SessionRecord((), marks)

    def note_directory(self, position: int, path: Any, origin: str) -> None:
        """Record that from message `position` on the session worked in `path` (importers
        call it for every record that names one; only changes are kept)."""
        if not isinstance(path, str) or not path.strip():
            return
        path = path.strip()
        if self.directories and self.directories[-1].path == path:
            return
        self.directories.append(RecordedDirectory(position, path, origin))

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "format": self.format,
            "title": self.title,
            "metadata": self.metadata,
            "tools": self.tools,
            "warnings": self.warnings,
            "source": self.source,
            "compactions": [c.to_dict() for c in self.compactions],
            "report": self.report.to_dict() if self.report is not None else None,
            "calls": [call.to_dict() for call in self.calls],
            "directories": [
                {"position": d.position, "path": d.path, "origin": d.origin}
                for d in self.directories
            ],
            "marks": {str(index): kind for index, kind in sorted(self.marks.items())},
        }

    def usage_line(self) -> str:
        """How many model calls the file gave the provider's usage for, for the import report."""
        notes = self.report.usage_notes if self.report is not None else []
        if not self.calls:
            head = "no model call with the provider's usage in this file"
        else:
            cached = sum(1 for call in self.calls if call.cache_read_tokens is not None)
            head = (
                f"{len(self.calls):,} model call(s) with the provider's usage"
                f" ({cached:,} with cache figures)"
            )
        return "; ".join([head, *notes])

    def compaction_lines(self) -> list[str]:
        """One line per compaction the agent recorded, for the CLI and the app."""
        lines = []
        for compaction in self.compactions:
            tokens = (
                f", {compaction.tokens_before:,} tokens before"
                f"{TOKENS_SOURCES.get(compaction.tokens_source or '', '')}"
                if compaction.tokens_before is not None
                else ""
            )
            summary = "summary readable" if compaction.summary is not None else "summary encrypted"
            where = f", line {compaction.line}" if compaction.line is not None else ""
            lines.append(
                f"message {compaction.position}: {compaction.agent}, {compaction.trigger}"
                f"{tokens}; {summary}{where}"
            )
        return lines
