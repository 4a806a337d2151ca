"""Parameter sweeps: what each budget buys (savings) and costs (probe recall), point by point.

Users tune by comparing many settings on their own sessions. `sweep()` runs a forced compaction
for every point of a grid (the cartesian product of parameter values; a peer's own parameters,
`hermes.protect_last_n=10,20,40`, run that peer's policy instead) over one or many
conversations and measures each: tokens after, savings, probe recall per category, provider
validity and summary size. The frontier and the recommendation (`frontier.py`) turn the
points into settings to paste into an agent.

    from compaction.lab.sweep.run import parse_grid, sweep
    result = sweep([messages], parse_grid(["tail_token_ratio=0.1:0.5:0.1"]))
    result.rows()                 # one flat dict per point, for tables and charts
    result.recommend(60)          # best recall with at least 60% savings

Cost: token counts are computed once per conversation and shared by every point (the counter
caches per content string; worker processes are warmed once each); probe facts are mined once per
conversation. Points run in worker processes when `jobs > 1`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.lab.memory import with_lab_cache
from compaction.lab.peers import Peer
from compaction.lab.probes import CATEGORIES, mine_facts
from compaction.lab.sweep.frontier import pareto_frontier, recommend, recommendation_snippets
from compaction.lab.sweep.grid import (
    Grid,
    describe_point,
    grid_configs,
    normalise_grid,
    parse_grid,
    parse_param,
    point_peer,
)
from compaction.lab.sweep.worker import Evaluator, init_worker, pool_context, run_in_worker
from compaction.messages import Message, split_marks
from compaction.summarizers.base import Summarizer
from compaction.tokens import make_counter

#: progress(points done, points in all)
Progress = Callable[[int, int], None]


def _pooled(runs: list[dict[str, Any]], found_key: str, total_key: str) -> float | None:
    """found / total summed over the runs; None when the runs predate the measure."""
    if not runs or any(found_key not in run for run in runs):
        return None
    total = sum(run[total_key] for run in runs)
    return round(sum(run[found_key] for run in runs) / total, 4) if total else 1.0


@dataclass
class SweepPoint:
    """One point of the grid, measured over every conversation of the sweep.

    Figures are pooled over the conversations: savings from the summed tokens, recall from the
    summed facts found / mined, errors and summary tokens summed. `runs` keeps the per-conversation
    figures.
    """

    index: int
    params: dict[str, Any]
    config: dict[str, Any]
    tokens_before: int
    tokens_after: int
    savings_pct: float
    recall: float
    recall_found: int
    recall_total: int
    recall_by_category: dict[str, float]
    openai_errors: int
    anthropic_errors: int
    summary_tokens: int
    duration_s: float
    skipped: int = 0
    fallbacks: int = 0
    fits_target: bool | None = None  # every conversation within the sweep's target_tokens
    runs: list[dict[str, Any]] = field(default_factory=list)
    #: The independent measure (lab/structural.py), pooled as recall is.
    recall_structural: float | None = None

    @property
    def valid(self) -> bool:
        """True when both providers would accept every compacted conversation."""
        return self.openai_errors == 0 and self.anthropic_errors == 0

    @property
    def label(self) -> str:
        return describe_point(self.params)

    @classmethod
    def from_runs(
        cls,
        index: int,
        params: dict[str, Any],
        config: CompactionConfig,
        runs: list[dict[str, Any]],
        target_tokens: int | None = None,
    ) -> SweepPoint:
        before = sum(r["tokens_before"] for r in runs)
        after = sum(r["tokens_after"] for r in runs)
        found = sum(r["recall_found"] for r in runs)
        total = sum(r["recall_total"] for r in runs)
        by_category: dict[str, float] = {}
        for name in CATEGORIES:
            cat_found = sum(r["categories"].get(name, [0, 0])[0] for r in runs)
            cat_total = sum(r["categories"].get(name, [0, 0])[1] for r in runs)
            # As probes.CategoryRecall: a category with no facts lost nothing.
            by_category[name] = round(cat_found / cat_total, 4) if cat_total else 1.0
        return cls(
            index=index,
            params=dict(params),
            config=config.to_dict(),
            tokens_before=before,
            tokens_after=after,
            savings_pct=round((before - after) / before * 100, 4) if before else 0.0,
            recall=round(found / total, 4) if total else 1.0,
            recall_found=found,
            recall_total=total,
            recall_by_category=by_category,
            openai_errors=sum(r["openai_errors"] for r in runs),
            anthropic_errors=sum(r["anthropic_errors"] for r in runs),
            summary_tokens=sum(r["summary_tokens"] for r in runs),
            duration_s=round(sum(r["duration_s"] for r in runs), 6),
            skipped=sum(1 for r in runs if r["skipped"]),
            fallbacks=sum(1 for r in runs if r["fallback_used"]),
            fits_target=(
                None
                if target_tokens is None
                else all(r["tokens_after"] <= target_tokens for r in runs)
            ),
            runs=runs,
            recall_structural=_pooled(runs, "structural_found", "structural_total"),
        )

    def row(self) -> dict[str, Any]:
        """A flat dict (parameters first) for a table, a CSV row or a chart's data frame."""
        return {
            "point": self.index,
            **self.params,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "savings_pct": self.savings_pct,
            "recall": self.recall,
            "recall_structural": self.recall_structural,
            **{f"recall_{name}": value for name, value in self.recall_by_category.items()},
            "openai_errors": self.openai_errors,
            "anthropic_errors": self.anthropic_errors,
            "valid": self.valid,
            "summary_tokens": self.summary_tokens,
            "skipped": self.skipped,
            "fallbacks": self.fallbacks,
            "fits_target": self.fits_target,
            "duration_s": self.duration_s,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "params": self.params,
            "config": self.config,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "savings_pct": self.savings_pct,
            "recall": self.recall,
            "recall_found": self.recall_found,
            "recall_total": self.recall_total,
            "recall_by_category": self.recall_by_category,
            "recall_structural": self.recall_structural,
            "openai_errors": self.openai_errors,
            "anthropic_errors": self.anthropic_errors,
            "summary_tokens": self.summary_tokens,
            "duration_s": self.duration_s,
            "skipped": self.skipped,
            "fallbacks": self.fallbacks,
            "fits_target": self.fits_target,
            "runs": self.runs,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepPoint:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Sweep:
    """The measured points of a grid over some conversations (`to_dict` round-trips)."""

    grid: Grid
    base_config: dict[str, Any]
    summarizer: str
    conversations: list[dict[str, Any]]  # title, format, messages, tokens of each conversation
    points: list[SweepPoint]
    duration_s: float = 0.0
    jobs: int = 1
    target_tokens: int | None = None
    session_ids: list[str] | None = None  # set once stored in the history
    # The messages themselves, for storing the sessions in the history; never serialised.
    messages: list[list[Message]] = field(default_factory=list, repr=False, compare=False)

    @property
    def parameters(self) -> list[str]:
        return list(self.grid)

    def rows(self) -> list[dict[str, Any]]:
        return [point.row() for point in self.points]

    def frontier(self, x: str = "savings_pct", y: str = "recall") -> list[SweepPoint]:
        return pareto_frontier(self.points, x=x, y=y)

    def recommend(self, min_savings_pct: float) -> SweepPoint | None:
        return recommend(self.points, min_savings_pct)

    def recommendation(self, min_savings_pct: float) -> dict[str, Any] | None:
        """The recommended point with its ready-to-paste snippets, JSON-ready (or None)."""
        point = self.recommend(min_savings_pct)
        if point is None:
            return None
        return {
            "min_savings_pct": min_savings_pct,
            "point": point.index,
            "params": point.params,
            "savings_pct": point.savings_pct,
            "recall": point.recall,
            "snippets": recommendation_snippets(point),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "grid": self.grid,
            "base_config": self.base_config,
            "summarizer": self.summarizer,
            "conversations": self.conversations,
            "points": [point.to_dict() for point in self.points],
            "duration_s": self.duration_s,
            "jobs": self.jobs,
            "target_tokens": self.target_tokens,
            "session_ids": self.session_ids,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sweep:
        try:
            return cls(
                grid={str(k): list(v) for k, v in dict(data["grid"]).items()},
                base_config=dict(data.get("base_config") or {}),
                summarizer=str(data.get("summarizer") or ""),
                conversations=list(data.get("conversations") or []),
                points=[SweepPoint.from_dict(p) for p in data.get("points") or []],
                duration_s=float(data.get("duration_s") or 0.0),
                jobs=int(data.get("jobs") or 1),
                target_tokens=data.get("target_tokens"),
                session_ids=data.get("session_ids"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"not a sweep: {type(exc).__name__}: {exc}") from exc


def _messages_of(
    conversation: Any,
) -> tuple[list[Message], str | None, str | None, dict[int, str]]:
    """(messages, title, format, marks) of a message list or a Conversation; the marks (which
    user turns the harness sent) beside the messages, from either."""
    if isinstance(conversation, list):
        messages, marks = split_marks(conversation)
        return messages, None, None, marks
    given = getattr(conversation, "messages", None)
    if not isinstance(given, list):
        raise ConfigError(
            f"sweep() takes message lists or Conversations, got {type(conversation).__name__}"
        )
    messages, marks = split_marks(given, getattr(conversation, "marks", None))
    title, fmt = getattr(conversation, "title", None), getattr(conversation, "format", None)
    return messages, title, fmt, marks


@with_lab_cache
def sweep(
    conversations: Sequence[Any],
    grid: Mapping[str, Sequence[Any]] | Sequence[str],
    summarizer: Summarizer | None = None,
    base_config: CompactionConfig | None = None,
    jobs: int = 1,
    target_tokens: int | None = None,
    progress: Progress | None = None,
) -> Sweep:
    """Measure every grid point on every conversation (a message list or a Conversation).

    `grid` is a mapping {field: values} or a list of `--param` specs. Compaction is forced at
    every point (a sweep asks what each setting would do, not whether it would trigger).
    `target_tokens`, when given, is a budget the compacted conversations must fit in: each point
    says whether it does (`fits_target`). Invalid grids raise ConfigError before any work starts.
    """
    if not conversations:
        raise ConfigError("a sweep needs at least one conversation")
    if jobs < 1:
        raise ConfigError(f"jobs must be at least 1, got {jobs}")
    if target_tokens is not None and target_tokens <= 0:
        raise ConfigError(f"target_tokens must be positive, got {target_tokens}")
    checked = parse_grid(grid) if _is_specs(grid) else normalise_grid(grid)  # type: ignore[arg-type]
    base = base_config or CompactionConfig()
    configs = grid_configs(checked, base)
    loaded = [_messages_of(conversation) for conversation in conversations]
    messages = [entry[0] for entry in loaded]
    started = time.perf_counter()
    counters = sorted({(str(config.counter), config.model) for _, config in configs})
    marks = [entry[3] for entry in loaded]
    evaluator = Evaluator(
        messages,
        [mine_facts(m, marks=k) for m, k in zip(messages, marks, strict=True)],
        summarizer,
        marks=marks,
    )
    evaluator.warm(counters)
    base_counter = make_counter(base.counter, base.model)
    described = [
        {
            "title": title,
            "format": fmt,
            "messages": len(m),
            "tokens": base_counter.count_messages(m),
        }
        for m, title, fmt, _ in loaded
    ]
    work = [(config, point_peer(params)) for params, config in configs]
    runs = _run_points(evaluator, work, counters, jobs, progress)
    points = [
        SweepPoint.from_runs(index, params, config, runs[index], target_tokens)
        for index, (params, config) in enumerate(configs)
    ]
    return Sweep(
        grid=checked,
        base_config=base.to_dict(),
        summarizer=getattr(summarizer, "name", "extractive") if summarizer else "extractive",
        conversations=described,
        points=points,
        duration_s=round(time.perf_counter() - started, 4),
        jobs=jobs,
        target_tokens=target_tokens,
        messages=messages,
    )


def _is_specs(grid: Any) -> bool:
    return not isinstance(grid, Mapping) and all(isinstance(item, str) for item in grid)


def _run_points(
    evaluator: Evaluator,
    configs: list[tuple[CompactionConfig, Peer | None]],
    counters: list[tuple[str, str]],
    jobs: int,
    progress: Progress | None,
) -> list[list[dict[str, Any]]]:
    total = len(configs)
    results: list[list[dict[str, Any]] | None] = [None] * total
    if progress is not None:
        progress(0, total)
    workers = min(jobs, total)
    if workers <= 1:
        for index, (config, peer) in enumerate(configs):
            results[index] = evaluator.run_point(config, peer)
            if progress is not None:
                progress(index + 1, total)
    else:
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=pool_context(),
            initializer=init_worker,
            initargs=(evaluator, counters),
        ) as pool:
            futures = [
                pool.submit(run_in_worker, i, config, peer)
                for i, (config, peer) in enumerate(configs)
            ]
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    index, runs = future.result()
                    results[index] = runs
                    if progress is not None:
                        progress(done, total)
            except BaseException:
                # A failed point (or Ctrl-C) stops the sweep: do not run the points still queued.
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    return [runs for runs in results if runs is not None]


__all__ = [
    "Grid",
    "Progress",
    "Sweep",
    "SweepPoint",
    "pareto_frontier",
    "parse_grid",
    "parse_param",
    "recommend",
    "recommendation_snippets",
    "sweep",
]
