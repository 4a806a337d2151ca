"""Typed rows read back from the history database.

Pages and the CLI work with these dataclasses rather than raw sqlite rows, so JSON columns arrive
parsed and a column added by a later migration is one field here, not a change in every caller.
A `RunRow` from `History.runs()` is light (no messages, no report) so that listing thousands of
runs stays cheap; `History.run()` fills the heavy fields.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from compaction.messages import Message

#: The columns a run listing reads (everything but the large JSON columns).
LIGHT_RUN_COLUMNS = (
    "id",
    "session_id",
    "created_at",
    "config",
    "summarizer",
    "summarizer_info",
    "model",
    "focus",
    "tokens_before",
    "tokens_after",
    "savings_pct",
    "messages_before",
    "messages_after",
    "tail_budget_tokens",
    "summary_budget_tokens",
    "skipped",
    "skip_reason",
    "fallback_used",
    "fallback_reason",
    "phase_durations",
    "duration_s",
    "llm_prompt_tokens",
    "llm_completion_tokens",
    "llm_cost",
    "label",
    "note",
)


def _json(text: Any, default: Any) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


@dataclass
class RunRow:
    """One stored compaction run.

    `messages` (the compacted conversation), `report` (the full `CompactionResult.to_dict()`,
    phases included, exactly as recorded) and `summary` (section name → body) are None in
    listings and filled by `History.run(run_id)`.

    `label` and `session_title` are bounded for display (records.LABEL_CHARS, TITLE_CHARS, cut
    with "…"); `History.run()` also fills `label_full` and `session_title_full`, the whole texts
    when they were cut (else None): `full_label` and `full_session_title` give whichever holds it.
    """

    id: int
    session_id: str
    created_at: str
    config: dict[str, Any]
    summarizer: str
    tokens_before: int
    tokens_after: int
    savings_pct: float
    messages_before: int
    messages_after: int
    duration_s: float
    phase_durations: dict[str, float] = field(default_factory=dict)
    summarizer_info: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    focus: str | None = None
    tail_budget_tokens: int | None = None
    summary_budget_tokens: int | None = None
    skipped: bool = False
    skip_reason: str | None = None
    fallback_used: str | None = None
    fallback_reason: str | None = None
    llm_prompt_tokens: int | None = None
    llm_completion_tokens: int | None = None
    llm_cost: float | None = None
    label: str | None = None
    note: str | None = None
    session_title: str | None = None
    session_format: str | None = None
    messages: list[Message] | None = None
    report: dict[str, Any] | None = None
    summary: dict[str, str] | None = None
    label_full: str | None = None
    session_title_full: str | None = None

    @property
    def full_label(self) -> str | None:
        """The whole label (`label` is cut for display when it is long)."""
        return self.label_full if self.label_full is not None else self.label

    @property
    def full_session_title(self) -> str | None:
        """The whole session title (`session_title` is cut for display when it is long)."""
        full = self.session_title_full
        return full if full is not None else self.session_title

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RunRow:
        """Build from a sqlite row dict (JSON columns still text)."""
        return cls(
            id=int(row["id"]),
            session_id=row["session_id"],
            created_at=row["created_at"],
            config=_json(row["config"], {}),
            summarizer=row["summarizer"],
            tokens_before=int(row["tokens_before"]),
            tokens_after=int(row["tokens_after"]),
            savings_pct=float(row["savings_pct"]),
            messages_before=int(row["messages_before"]),
            messages_after=int(row["messages_after"]),
            duration_s=float(row["duration_s"]),
            phase_durations=_json(row["phase_durations"], {}),
            summarizer_info=_json(row["summarizer_info"], {}),
            model=row["model"],
            focus=row["focus"],
            tail_budget_tokens=row["tail_budget_tokens"],
            summary_budget_tokens=row["summary_budget_tokens"],
            skipped=bool(row["skipped"]),
            skip_reason=row["skip_reason"],
            fallback_used=row["fallback_used"],
            fallback_reason=row["fallback_reason"],
            llm_prompt_tokens=row["llm_prompt_tokens"],
            llm_completion_tokens=row["llm_completion_tokens"],
            llm_cost=row["llm_cost"],
            label=row["label"],
            note=row["note"],
            session_title=row.get("session_title"),
            session_format=row.get("session_format"),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (heavy fields included when loaded)."""
        return asdict(self)


@dataclass
class SessionRow:
    """One stored conversation; `messages` (and `title_full`, the whole title when `title` was
    cut for display) are filled by `History.session(session_id)` only."""

    id: str
    title: str | None
    format: str | None
    message_count: int
    tokens: int | None
    first_seen: str
    last_seen: str
    run_count: int = 0
    messages: list[Message] | None = None
    title_full: str | None = None

    @property
    def full_title(self) -> str | None:
        """The whole title (`title` is cut for display when it is long)."""
        return self.title_full if self.title_full is not None else self.title

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SessionRow:
        messages = row.get("messages")
        return cls(
            id=row["id"],
            title=row["title"],
            format=row["format"],
            message_count=int(row["message_count"]),
            tokens=row["tokens"],
            first_seen=row["first_seen"],
            last_seen=row["last_seen"],
            run_count=int(row.get("run_count") or 0),
            messages=json.loads(messages) if messages is not None else None,
            title_full=row.get("title_full"),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
