"""What `eval` and `sweep` share when they run over a corpus: the options that pick a scan's
selection and the cluster, the selection itself, and the across-the-corpus report (spread,
frontier, and a recommendation that says how often it wins and where it loses)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from compaction.errors import ConfigError
from compaction.lab.corpus.compare import (
    Recommendation,
    eval_frontier,
    eval_spread,
    recommend_strategy,
)
from compaction.lab.corpus.scanning import select
from compaction.lab.corpus.sweeping import CorpusSweep
from compaction.lab.sweep.run import Sweep

F = TypeVar("F", bound=Callable[..., Any])
LOSSES_SHOWN = 10


def corpus_options(function: F) -> F:
    """--scan [ID], --agent, --compacted and --scheduler."""
    options = [
        click.option(
            "--scan",
            "scan",
            is_flag=False,
            flag_value="latest",
            default=None,
            metavar="[ID]",
            help="The sessions of a stored scan (`compaction scan`; the latest without ID) "
            "instead of PATH.",
        ),
        click.option(
            "--agent",
            "agents",
            multiple=True,
            help="With --scan: only this agent's sessions (repeatable).",
        ),
        click.option(
            "--compacted",
            is_flag=True,
            help="With --scan: only sessions whose agent compacted at least once.",
        ),
        click.option(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="Run the sessions on this Dask cluster (tcp://HOST:8786): pip install "
            "'compaction-lab[dask]'.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def scan_paths(
    paths: Sequence[str], scan: str, agents: Sequence[str], compacted: bool
) -> tuple[tuple[str, ...], dict[str, set[int]]]:
    """The files of a stored scan's selection and, per file, the conversations selected."""
    from compaction.history import History

    if paths:
        raise ConfigError("give PATH... or --scan, not both")
    if scan != "latest" and not scan.isdigit():
        raise ConfigError(f"--scan takes a scan id (a number) or nothing, got {scan!r}")
    with History() as history:
        _, files = history.scan_selection(None if scan == "latest" else int(scan))
    only = select(files, tuple(agents), compacted)
    if not only:
        picked = " ".join(
            [*(f"--agent {agent}" for agent in agents), *(["--compacted"] if compacted else [])]
        )
        raise ConfigError(
            f"the scan's selection is empty{' with ' + picked if picked else ''}: "
            "scan more sessions or loosen the filter"
        )
    return tuple(only), only


def corpus_report(digests: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Spread, frontier and recommendation over eval digests (None for a single session)."""
    if len(digests) < 2:
        return None
    spread = eval_spread(digests)
    recommendation = recommend_strategy(digests)
    return {
        "spread": spread,
        "frontier": eval_frontier(spread),
        "recommendation": recommendation.to_dict() if recommendation is not None else None,
    }


def _range(row: Mapping[str, Any], key: str, percent: bool = False) -> str:
    mean, low, high = row[f"{key}_mean"], row[f"{key}_p10"], row[f"{key}_p90"]
    if mean is None:
        return "-"
    if percent:
        return f"{mean:.1f}% ({low:.1f}–{high:.1f})"
    if key == "tokens":
        return f"{mean:,.0f} ({low:,.0f}–{high:,.0f})"
    return f"{mean:.2f} ({low:.2f}–{high:.2f})"


def corpus_lines(report: Mapping[str, Any]) -> list[str]:
    """The across-the-corpus section of `compaction eval`."""
    from compaction.commands.tables import aligned

    rows = [
        [
            row["strategy"] + (" *" if row["strategy"] in report["frontier"] else ""),
            str(row["sessions"]),
            _range(row, "recall"),
            _range(row, "savings_pct", percent=True),
            _range(row, "tokens"),
            f"{row['openai_failures']}/{row['anthropic_failures']}",
            "-" if row["cost_usd_total"] is None else f"${row['cost_usd_total']:.4f}",
        ]
        for row in report["spread"]
    ]
    lines = [
        "across the corpus: mean (p10–p90) over sessions; * = on the frontier (no strategy "
        "saves more and keeps more); ✗ = sessions rejected (openai/anthropic)",
        *aligned(["strategy", "sessions", "recall", "savings", "tokens", "✗", "$"], rows),
    ]
    data = report.get("recommendation")
    if data:
        lines += recommendation_lines(data)
    return lines


def recommendation_lines(data: Mapping[str, Any]) -> list[str]:
    """The recommendation as a sentence, then the sessions it loses (at most LOSSES_SHOWN)."""
    recommendation = Recommendation(
        choice=data["choice"],
        wins=data["wins"],
        sessions=data["sessions"],
        losses=[],
        wins_by_choice=data["wins_by_choice"],
    )
    reasons = ", ".join(f"{n} {reason}" for reason, n in data["loss_reasons"].items())
    gap = data.get("mean_recall_gap")
    lines = [
        f"recommended: {recommendation.sentence()}"
        + (f"; loses {len(data['losses'])} ({reasons})" if data["losses"] else "")
        + (f"; where it keeps less, {gap:.2f} of the facts less on average" if gap else ""),
        "wins per choice: "
        + ", ".join(f"{name} {count}" for name, count in data["wins_by_choice"].items()),
    ]
    for loss in data["losses"][:LOSSES_SHOWN]:
        mine = "-" if loss["recall"] is None else f"{loss['recall']:.2f}"
        best = "-" if loss["winner_recall"] is None else f"{loss['winner_recall']:.2f}"
        winners = ", ".join(loss["winners"]) or "none eligible"
        lines.append(
            f"  loses {Path(str(loss['session'])).name}: {loss['reason']} "
            f"(recall {mine}; {winners} {best})"
        )
    if len(data["losses"]) > LOSSES_SHOWN:
        lines.append(f"  … and {len(data['losses']) - LOSSES_SHOWN} more (--json has all)")
    return lines


def corpus_sweep_lines(corpus: CorpusSweep, result: Sweep, target: float) -> list[str]:
    """The across-the-corpus section of a corpus sweep: per frontier point the spread over the
    sessions, then how often the recommended point wins a session and where it loses."""
    from compaction.commands.tables import aligned

    on_frontier = {point.index for point in result.frontier()}
    rows = [
        [
            row["label"],
            _range(row, "recall"),
            _range(row, "savings_pct", percent=True),
            str(row["sessions_rejected"]),
        ]
        for row in corpus.spread()
        if row["point"] in on_frontier
    ]
    lines = [
        "",
        f"across {len(corpus.sessions)} sessions ({corpus.where}): the frontier's points, mean "
        "(p10–p90) per session; rejected = sessions a provider would reject",
        *aligned(["point", "recall", "savings", "rejected"], rows),
    ]
    recommendation = corpus.recommendation(target)
    if recommendation is not None:
        lines += recommendation_lines(recommendation.to_dict())
    return lines
