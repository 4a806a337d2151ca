"""What a scan found, as plain picklable records: one per file, per conversation in it, and per
compaction its agent recorded.

They travel from worker processes (or Dask workers) back to the caller, go into the history's
scan tables column for column (`row()`), and come back out of it (`from_row`), so an incremental
scan can mix what it read now with what it read before. Nothing here holds message text: only
counts, sizes and the names of things (a path, a model, a title).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

#: How a file's scan ended: read; not a session at all (no format recognised it: a README beside
#: the transcripts); or an error (a corrupt or unreadable file, an importer that failed).
OK = "ok"
NOT_A_SESSION = "not a session"
ERROR = "error"

#: The probe categories a forgotten fact is counted by: `lab.probes.CATEGORIES`, written out so
#: that the history can read scan rows without importing the probes (a test holds them equal),
#: and one column each in the history's `scan_compactions`.
CATEGORIES: tuple[str, ...] = (
    "latest_request",
    "constraints",
    "files",
    "errors",
    "commands",
    "identifiers",
)

#: Where a compaction's trigger tokens came from: the provider's usage of the last call before
#: it, the agent's own record of the compaction (Claude Code's preTokens), or our count.
USAGE = "usage"
RECORDED = "recorded"
COUNTED = "counted"


@dataclass
class CompactionScan:
    """One compaction an agent made, measured for the corpus.

    `trigger_tokens` is the context when it fired (`trigger_source` says from what: the agent's
    own figure, else the last recorded call's prompt + reply, else our count);
    `tokens_after` the context right after (the first call's prompt after it, else our count of
    the system prompt and the summary), `ratio` after / before. The audit's figures
    (`facts_before`, `kept_by_agent`, `forgotten` and `forgotten_by_kind`) are None when the
    agent's summary cannot be read (Codex's encrypted compaction); `pending_request_lost` is 1
    when the user's latest request before it is not in the agent's context after.
    """

    number: int
    position: int
    kind: str
    line: int | None = None
    trigger_tokens: int | None = None
    trigger_source: str = COUNTED
    tokens_before_recorded: int | None = None
    tokens_after: int | None = None
    after_source: str | None = None
    ratio: float | None = None
    summary_tokens: int | None = None
    summary_readable: bool = False
    facts_before: int = 0
    kept_by_agent: int | None = None
    forgotten: int | None = None
    forgotten_by_kind: dict[str, int] = field(default_factory=dict)
    pending_request_lost: int | None = None
    window: int | None = None
    #: Our pipeline at the agent's post-compaction size (`compaction scan --ours`), else None.
    kept_by_ours: int | None = None

    def row(self) -> dict[str, Any]:
        data = asdict(self)
        by_kind = data.pop("forgotten_by_kind")
        data["summary_readable"] = int(self.summary_readable)
        for kind in CATEGORIES:
            data[f"forgotten_{kind}"] = by_kind.get(kind) if self.forgotten is not None else None
        return data

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CompactionScan:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in names}
        values["summary_readable"] = bool(values.get("summary_readable"))
        values["forgotten_by_kind"] = {
            kind: int(row[f"forgotten_{kind}"])
            for kind in CATEGORIES
            if row.get(f"forgotten_{kind}") is not None
        }
        return cls(**values)


@dataclass
class SessionScan:
    """One conversation of a scanned file: its size, its recorded usage, its compactions.

    Usage columns sum the provider's figures the file records (`Conversation.calls`); they are
    None when it records none. `recorded_cost_usd` is what the file itself says the calls cost;
    `cost_usd` is that, or a price computed from the usage when a price function is given to
    the scan (`scan.Pricer`), else None.
    """

    conversation: int
    agent: str
    format: str
    title: str | None = None
    model: str | None = None
    project: str | None = None
    messages: int = 0
    tokens: int = 0
    calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    peak_input_tokens: int | None = None
    recorded_cost_usd: float | None = None
    cost_usd: float | None = None
    compactions: list[CompactionScan] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        data = asdict(self)
        del data["compactions"]
        data["compaction_count"] = len(self.compactions)
        data["auto_compactions"] = sum(1 for c in self.compactions if c.kind == "auto")
        data["manual_compactions"] = sum(1 for c in self.compactions if c.kind == "manual")
        return data

    @classmethod
    def from_row(cls, row: dict[str, Any], compactions: list[CompactionScan]) -> SessionScan:
        names = {f.name for f in fields(cls)} - {"compactions"}
        return cls(**{k: v for k, v in row.items() if k in names}, compactions=compactions)


@dataclass
class FileScan:
    """One file of the corpus: what was read from it, or why nothing could be."""

    path: str
    size: int
    mtime: float
    agent: str | None = None
    project: str = ""
    status: str = OK
    error: str | None = None
    sessions: list[SessionScan] = field(default_factory=list)
    duration_s: float = 0.0
    warnings: int = 0

    @property
    def compactions(self) -> list[CompactionScan]:
        return [c for session in self.sessions for c in session.compactions]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileScan:
        sessions = [
            SessionScan(
                **{k: v for k, v in s.items() if k != "compactions"},
                compactions=[CompactionScan(**c) for c in s.get("compactions") or []],
            )
            for s in data.get("sessions") or []
        ]
        names = {f.name for f in fields(cls)} - {"sessions"}
        return cls(**{k: v for k, v in data.items() if k in names}, sessions=sessions)
