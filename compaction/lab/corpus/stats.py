"""Corpus statistics: per agent and overall, counts and distributions (median, p10/p90) of what a
scan found.

Published field data are of this shape (the median after/before ratio across 142 Claude Code
compactions; the share of 912 compactions that fired at 150–175K tokens), so the scan states its
own the same way: a distribution per measure, never a single mean that one outlier moves.

Percentiles interpolate linearly between the two nearest ranks (numpy's default), so p10 of two
values lies between them and the median of an even count is the mean of the middle two.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from compaction.lab.corpus.records import NOT_A_SESSION, OK, FileScan

ALL = "all"


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0–1) percentile of non-empty `values`, linearly interpolated."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = share * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Distribution:
    """One measure over a group: how many values, their sum and where they lie."""

    metric: str
    n: int
    total: float | None = None
    mean: float | None = None
    median: float | None = None
    p10: float | None = None
    p90: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, metric: str, values: Iterable[float | int | None]) -> Distribution:
        known = [float(v) for v in values if v is not None]
        if not known:
            return cls(metric, 0)
        return cls(
            metric,
            len(known),
            total=round(sum(known), 6),
            mean=round(sum(known) / len(known), 6),
            median=round(percentile(known, 0.5), 6),
            p10=round(percentile(known, 0.1), 6),
            p90=round(percentile(known, 0.9), 6),
            min=min(known),
            max=max(known),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The per-compaction measures, in the order tables show them.
COMPACTION_METRICS: tuple[str, ...] = (
    "trigger_tokens",
    "ratio",
    "summary_tokens",
    "forgotten",
    "forgotten_share",
    "pending_request_lost",
)
#: The per-session measures.
SESSION_METRICS: tuple[str, ...] = (
    "messages",
    "tokens",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "compaction_count",
)


@dataclass
class GroupStats:
    """Counts and distributions for one agent (or `all`)."""

    agent: str
    files: int = 0
    failed: int = 0
    not_sessions: int = 0
    sessions: int = 0
    sessions_compacted: int = 0
    compactions: int = 0
    auto: int = 0
    manual: int = 0
    readable: int = 0
    pending_lost: int = 0
    distributions: dict[str, Distribution] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["distributions"] = {
            name: dist.to_dict() for name, dist in (self.distributions or {}).items()
        }
        return data


def aggregate(files: Sequence[FileScan]) -> list[GroupStats]:
    """One GroupStats per agent (sorted by name) and one for `all`, last."""
    groups: dict[str | None, list[FileScan]] = {}
    for scanned in files:
        # A file that yielded no session belongs to the agent whose folder it was found in;
        # found in a plain folder, it counts only in `all`.
        agents = {s.agent for s in scanned.sessions} or ({scanned.agent} - {None})
        for agent in agents:
            groups.setdefault(agent, []).append(scanned)
    result = [_group(agent, groups[agent], agent) for agent in sorted(a for a in groups if a)]
    result.append(_group(ALL, list(files), None))
    return result


def _group(name: str, files: Sequence[FileScan], agent: str | None) -> GroupStats:
    sessions = [s for f in files for s in f.sessions if agent is None or s.agent == agent]
    compactions = [c for s in sessions for c in s.compactions]
    readable = [c for c in compactions if c.forgotten is not None]
    stats = GroupStats(
        agent=name,
        files=len(files),
        failed=sum(1 for f in files if f.status not in (OK, NOT_A_SESSION)),
        not_sessions=sum(1 for f in files if f.status == NOT_A_SESSION),
        sessions=len(sessions),
        sessions_compacted=sum(1 for s in sessions if s.compactions),
        compactions=len(compactions),
        auto=sum(1 for c in compactions if c.kind == "auto"),
        manual=sum(1 for c in compactions if c.kind == "manual"),
        readable=len(readable),
        pending_lost=sum(c.pending_request_lost or 0 for c in compactions),
    )
    measures: dict[str, list[float | int | None]] = {
        "trigger_tokens": [c.trigger_tokens for c in compactions],
        "ratio": [c.ratio for c in compactions],
        "summary_tokens": [c.summary_tokens for c in compactions],
        "forgotten": [c.forgotten for c in readable],
        "forgotten_share": [
            c.forgotten / c.facts_before
            for c in readable
            if c.facts_before and c.forgotten is not None
        ],
        "pending_request_lost": [c.pending_request_lost for c in compactions],
        "messages": [s.messages for s in sessions],
        "tokens": [s.tokens for s in sessions],
        "calls": [s.calls for s in sessions if s.calls],
        "input_tokens": [s.input_tokens for s in sessions],
        "output_tokens": [s.output_tokens for s in sessions],
        "cost_usd": [s.cost_usd for s in sessions],
        "compaction_count": [len(s.compactions) for s in sessions],
    }
    stats.distributions = {name: Distribution.of(name, values) for name, values in measures.items()}
    return stats
