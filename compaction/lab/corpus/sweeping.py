"""A sweep over a corpus: every grid point on every session, one task per file, in parallel.

`lab/sweep/run.py` parallelises over points with every conversation in every worker, which suits
a few sessions and many points. A corpus is the other way round: hundreds of sessions, each read
by the task that sweeps it (so a worker holds one session at a time and a Dask worker reads its
own file), every point run on it. The per-session runs are then folded into the same
`SweepPoint`s a plain sweep makes, so the frontier, the recommendation, the history and the
Sweep page read a corpus sweep like any other; `compare.recommend_point` adds how often the
recommended point wins a session and where it loses.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.config import CompactionConfig
from compaction.errors import CompactionError, ConfigError
from compaction.lab.corpus.compare import Recommendation, point_spread, recommend_point
from compaction.lab.corpus.runner import Progress, run_each
from compaction.lab.corpus.scan import READ_FAILURES
from compaction.lab.sweep.grid import Grid, grid_configs, point_peer
from compaction.lab.sweep.run import Sweep, SweepPoint

API_KEY_VARIABLE = "COMPACTION_API_KEY"


@dataclass(frozen=True)
class SummarizerSpec:
    """How a worker builds the summariser (the key comes from its environment, never here)."""

    kind: str = "extractive"
    model: str | None = None
    api_base: str | None = None


@dataclass(frozen=True)
class FileTask:
    """One file to sweep: the conversations to take (None: all, up to `limit`)."""

    path: str
    conversations: tuple[int, ...] | None
    points: tuple[tuple[dict[str, Any], CompactionConfig], ...]
    summarizer: SummarizerSpec = SummarizerSpec()
    limit: int | None = None


def sweep_file(task: FileTask) -> list[dict[str, Any]]:
    """Every point on every chosen conversation of one file: one dict per conversation with its
    runs (one per point, in point order), or its error. Never raises for a bad file."""
    from compaction.formats import load_conversations
    from compaction.lab.probes import mine_facts
    from compaction.lab.sweep.worker import Evaluator
    from compaction.messages import split_marks
    from compaction.summarizers.factory import make_summarizer

    try:
        conversations = load_conversations(task.path)
    except (CompactionError, *READ_FAILURES) as exc:
        return [{"session": task.path, "error": f"cannot read: {exc}"}]
    numbers = (
        list(task.conversations)
        if task.conversations is not None
        else list(range(len(conversations)))[: task.limit]
    )
    results: list[dict[str, Any]] = []
    for number in numbers:
        label = task.path if len(conversations) == 1 else f"{task.path}#{number}"
        if number >= len(conversations):
            results.append({"session": label, "error": "the conversation is no longer there"})
            continue
        conversation = conversations[number]
        try:
            summarizer = (
                None
                if task.summarizer.kind == "extractive"
                else make_summarizer(
                    task.summarizer.kind,
                    model=task.summarizer.model,
                    api_base=task.summarizer.api_base,
                    api_key=os.environ.get(API_KEY_VARIABLE),
                )
            )
            # The importer's marks (which user turns the harness sent) beside the messages.
            messages, marks = split_marks(conversation.messages, conversation.marks)
            evaluator = Evaluator(
                [messages], [mine_facts(messages, marks=marks)], summarizer, marks=[marks]
            )
            runs = [evaluator.run(config, 0, point_peer(params)) for params, config in task.points]
        except CompactionError as exc:
            results.append({"session": label, "error": str(exc)})
            continue
        results.append(
            {
                "session": label,
                "title": conversation.title,
                "format": conversation.format,
                "messages": len(messages),
                "tokens": runs[0]["tokens_before"] if runs else 0,
                "runs": runs,
            }
        )
    return results


@dataclass
class CorpusSweep:
    """A sweep over many sessions: the pooled `Sweep`, and what pooling hides."""

    sweep: Sweep
    sessions: list[str]
    errors: list[dict[str, str]] = field(default_factory=list)
    stopped: bool = False
    where: str = "this process"

    def spread(self) -> list[dict[str, Any]]:
        return point_spread(self.sweep.points)

    def recommendation(self, min_savings_pct: float) -> Recommendation | None:
        chosen = self.sweep.recommend(min_savings_pct)
        if chosen is None:
            return None
        return recommend_point(self.sweep.points, chosen, min_savings_pct, self.sessions)

    def to_dict(self, min_savings_pct: float) -> dict[str, Any]:
        recommendation = self.recommendation(min_savings_pct)
        return {
            "sessions": self.sessions,
            "errors": self.errors,
            "stopped": self.stopped,
            "where": self.where,
            "spread": self.spread(),
            "recommendation": recommendation.to_dict() if recommendation else None,
        }


#: Conversations per task when a file holds many (a benchmark's 200 dialogues in one JSON): one
#: task per file would leave the other workers idle while one sweeps them all. Each part reads
#: the file again, so parts stay large.
PART_SIZE = 40


def _parts(chosen: Sequence[int] | None) -> list[tuple[int, ...] | None]:
    """The conversation indices of one file split into tasks (None: all, one task)."""
    if chosen is None:
        return [None]
    ordered = sorted(chosen)
    return [tuple(ordered[i : i + PART_SIZE]) for i in range(0, len(ordered), PART_SIZE)] or [()]


def _file_size(task: FileTask) -> float:
    try:
        size = float(os.path.getsize(task.path))
    except OSError:
        return 0.0  # an address inside a database, or a file gone: its task says so
    if task.conversations is not None and len(task.conversations) > 1:
        size *= len(task.conversations) / PART_SIZE  # a part of a file holding many
    return size


def sweep_corpus(
    files: Mapping[str, Sequence[int] | None],
    grid: Grid,
    base_config: CompactionConfig | None = None,
    summarizer: SummarizerSpec | None = None,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
    target_tokens: int | None = None,
    limit: int | None = None,
) -> CorpusSweep:
    """Every point of `grid` on every conversation of `files` (path → conversation indices, or
    None for all up to `limit`), one task per file; a Ctrl-C keeps the files that finished."""
    if not files:
        raise ConfigError("a corpus sweep needs at least one session file")
    base = base_config or CompactionConfig()
    points = grid_configs(grid, base)
    spec = summarizer or SummarizerSpec()
    tasks = [
        FileTask(path, part, tuple(points), spec, limit)
        for path, chosen in files.items()
        for part in _parts(chosen)
    ]
    started = time.perf_counter()
    outcome = run_each(
        sweep_file,
        tasks,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        weight=_file_size,
        on_error=lambda task, exc: [
            {"session": task.path, "error": f"{type(exc).__name__}: {exc}"}
        ],
    )
    measured = [entry for result in outcome.results for entry in result if "runs" in entry]
    errors = [
        {"session": entry["session"], "error": entry["error"]}
        for result in outcome.results
        for entry in result
        if "error" in entry
    ]
    if not measured:
        first = errors[0]["error"] if errors else "nothing finished"
        raise ConfigError(f"no session could be swept (first: {first})")
    swept = [
        SweepPoint.from_runs(
            index,
            params,
            config,
            [
                entry["runs"][index] | {"conversation": number}
                for number, entry in enumerate(measured)
            ],
            target_tokens,
        )
        for index, (params, config) in enumerate(points)
    ]
    result = Sweep(
        grid={name: list(values) for name, values in grid.items()},
        base_config=base.to_dict(),
        summarizer=spec.kind,
        conversations=[
            {k: entry[k] for k in ("title", "format", "messages", "tokens")}
            | {"source": entry["session"]}
            for entry in measured
        ],
        points=swept,
        duration_s=round(time.perf_counter() - started, 4),
        jobs=jobs,
        target_tokens=target_tokens,
    )
    return CorpusSweep(
        sweep=result,
        sessions=[entry["session"] for entry in measured],
        errors=errors,
        stopped=outcome.stopped,
        where=outcome.where,
    )


__all__ = ["CorpusSweep", "FileTask", "SummarizerSpec", "sweep_corpus", "sweep_file"]
