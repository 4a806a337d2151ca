"""Strategies and settings compared across a corpus: spread, frontier, and a recommendation that
says how often it wins and where it loses.

A mean over sessions hides the sessions a choice fails on, and those are what a person deciding
for every future session needs to see. So each strategy (eval) or grid point (sweep) gets, over
the sessions: the mean and the p10/p90 of its recall, savings and tokens; how many sessions a
provider would reject; dollars once a price is known (None until then); the corpus frontier
(savings against recall); and one recommendation, with the sessions it wins and each session it
loses, to what and by how much.

Who wins a session (eval): among the strategies whose output every provider accepts and whose
size stays within the target (`slack` above it allowed: the pipeline has floors a strict cut has
not), the highest recall; ties all win. The recommendation is the strategy that wins most
sessions among those no provider rejected on any session (if none is, among all). A sweep's
point wins a session when no valid point that saves at least the asked savings on that session
keeps more of its facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from compaction.lab.corpus.stats import Distribution
from compaction.lab.sweep.frontier import pareto_frontier

#: How far above the shared target an eval output may be and still compete for a session.
TARGET_SLACK = 0.10
#: Recalls closer than this are a tie.
TIE = 1e-9


@dataclass
class Loss:
    """One session the recommended choice does not win."""

    session: str
    reason: str  # "lower recall", "rejected by a provider", "over the target", "failed"
    recall: float | None
    winners: list[str]
    winner_recall: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Recommendation:
    """The choice that wins most sessions, how often, and the sessions it loses."""

    choice: str
    wins: int
    sessions: int
    losses: list[Loss] = field(default_factory=list)
    wins_by_choice: dict[str, int] = field(default_factory=dict)

    @property
    def win_rate(self) -> float:
        return self.wins / self.sessions if self.sessions else 0.0

    def loss_reasons(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for loss in self.losses:
            counts[loss.reason] = counts.get(loss.reason, 0) + 1
        return counts

    def mean_gap(self) -> float | None:
        """How much recall it gives up, on average, where a competitor kept more."""
        gaps = [
            loss.winner_recall - loss.recall
            for loss in self.losses
            if loss.reason == "lower recall"
            and loss.recall is not None
            and loss.winner_recall is not None
        ]
        return sum(gaps) / len(gaps) if gaps else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "choice": self.choice,
            "wins": self.wins,
            "sessions": self.sessions,
            "win_rate": round(self.win_rate, 4),
            "wins_by_choice": self.wins_by_choice,
            "loss_reasons": self.loss_reasons(),
            "mean_recall_gap": self.mean_gap(),
            "losses": [loss.to_dict() for loss in self.losses],
        }

    def sentence(self) -> str:
        """`CHOICE wins W of N sessions (P%)`: the losses are listed apart."""
        return f"{self.choice} wins {self.wins} of {self.sessions} sessions ({self.win_rate:.0%})"


def _spread(prefix: str, values: Sequence[float | int | None]) -> dict[str, float | None]:
    dist = Distribution.of(prefix, values)
    return {f"{prefix}_mean": dist.mean, f"{prefix}_p10": dist.p10, f"{prefix}_p90": dist.p90}


def eval_spread(digests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per strategy over eval digests: mean and p10/p90 of recall, savings, tokens;
    sessions a provider rejects; dollars when the rows carry `cost_usd`."""
    rows: dict[str, list[Mapping[str, Any]]] = {}
    for digest in digests:
        for name, row in digest["strategies"].items():
            rows.setdefault(name, []).append(row)
    table = []
    for name, items in rows.items():
        entry: dict[str, Any] = {"strategy": name, "sessions": len(items)}
        entry |= _spread("recall", [r.get("recall") for r in items])
        entry |= _spread("recall_structural", [r.get("recall_structural") for r in items])
        entry |= _spread("savings_pct", [r.get("savings_pct") for r in items])
        entry |= _spread("tokens", [r.get("tokens") for r in items])
        for provider in ("openai", "anthropic"):
            entry[f"{provider}_failures"] = sum(1 for r in items if r.get(f"{provider}_errors"))
        costs = [r["cost_usd"] for r in items if r.get("cost_usd") is not None]
        # The price hook: filled when the rows are priced (the cost model), else None.
        entry["cost_usd_total"] = round(sum(costs), 6) if costs else None
        table.append(entry)
    return table


def eval_frontier(spread: Sequence[Mapping[str, Any]]) -> list[str]:
    """The strategies no other beats on both mean savings and mean recall."""
    points = [
        {"name": r["strategy"], "savings_pct": r["savings_pct_mean"], "recall": r["recall_mean"]}
        for r in spread
        if r["savings_pct_mean"] is not None and r["recall_mean"] is not None
    ]
    return [str(p["name"]) for p in pareto_frontier(points)]


def _eligible(row: Mapping[str, Any], target: int, slack: float) -> str | None:
    """Why `row` cannot win its session, or None."""
    if row.get("openai_errors") or row.get("anthropic_errors"):
        return "rejected by a provider"
    if row["tokens"] > target * (1 + slack):
        return "over the target"
    return None


def recommend_strategy(
    digests: Sequence[Mapping[str, Any]], slack: float = TARGET_SLACK
) -> Recommendation | None:
    """The strategy that wins most sessions (ties: the higher mean recall), with its losses."""
    if not digests:
        return None
    winners_of: list[tuple[str, list[str], float | None]] = []
    wins: dict[str, int] = {}
    for digest in digests:
        rows = digest["strategies"]
        target = max(1, int(digest["target_tokens"]))
        fair = {n: r for n, r in rows.items() if _eligible(r, target, slack) is None}
        best = max((r["recall"] for r in fair.values()), default=None)
        winners = [n for n, r in fair.items() if best is not None and r["recall"] >= best - TIE]
        for name in winners:
            wins[name] = wins.get(name, 0) + 1
        winners_of.append((str(digest.get("source")), winners, best))
    names = list(dict.fromkeys(n for d in digests for n in d["strategies"]))
    if not names:
        return None
    spread = eval_spread(digests)
    means = {row["strategy"]: row["recall_mean"] or 0.0 for row in spread}
    # A strategy a provider rejects on some session is not one to ship for every session, however
    # often it wins the others: the choice is among those never rejected, when there is one.
    never_rejected = [
        row["strategy"]
        for row in spread
        if not row["openai_failures"] and not row["anthropic_failures"]
    ]
    candidates = [n for n in names if n in never_rejected] or names
    choice = max(candidates, key=lambda n: (wins.get(n, 0), means.get(n, 0.0)))
    losses = []
    for digest, (source, winners, best) in zip(digests, winners_of, strict=True):
        if choice in winners:
            continue
        row = digest["strategies"].get(choice)
        target = max(1, int(digest["target_tokens"]))
        reason = "failed" if row is None else (_eligible(row, target, slack) or "lower recall")
        losses.append(
            Loss(
                session=source,
                reason=reason,
                recall=None if row is None else row.get("recall"),
                winners=winners,
                winner_recall=best,
            )
        )
    return Recommendation(
        choice=choice,
        wins=wins.get(choice, 0),
        sessions=len(digests),
        losses=losses,
        wins_by_choice=dict(sorted(wins.items(), key=lambda item: -item[1])),
    )


# -- sweeps ----------------------------------------------------------------------------------


def point_spread(points: Sequence[Any]) -> list[dict[str, Any]]:
    """Per sweep point: mean and p10/p90 of the per-session recall and savings."""
    table = []
    for point in points:
        runs = point.runs
        recalls = [
            r["recall_found"] / r["recall_total"] if r["recall_total"] else 1.0 for r in runs
        ]
        entry: dict[str, Any] = {"point": point.index, "label": point.label}
        entry |= _spread("recall", recalls)
        entry |= _spread("savings_pct", [r["savings_pct"] for r in runs])
        entry |= _spread("tokens_after", [r["tokens_after"] for r in runs])
        entry["sessions_rejected"] = sum(
            1 for r in runs if r["openai_errors"] or r["anthropic_errors"]
        )
        table.append(entry)
    return table


def recommend_point(
    points: Sequence[Any], chosen: Any, min_savings_pct: float, sessions: Sequence[str]
) -> Recommendation:
    """How often the recommended sweep point `chosen` wins a session, and where it loses: per
    session, the valid points that save at least `min_savings_pct` there compete on recall."""
    wins: dict[str, int] = {}
    losses = []
    own = {r["conversation"]: r for r in chosen.runs}
    for number, session in enumerate(sessions):
        fair: dict[str, float] = {}
        for point in points:
            run = next((r for r in point.runs if r["conversation"] == number), None)
            if run is None or run["openai_errors"] or run["anthropic_errors"]:
                continue
            if run["savings_pct"] < min_savings_pct:
                continue
            total = run["recall_total"]
            fair[point.label] = run["recall_found"] / total if total else 1.0
        best = max(fair.values(), default=None)
        winners = [
            label for label, value in fair.items() if best is not None and value >= best - TIE
        ]
        for label in winners:
            wins[label] = wins.get(label, 0) + 1
        if chosen.label in winners:
            continue
        run = own.get(number)
        if run is None:
            reason, recall = "failed", None
        else:
            total = run["recall_total"]
            recall = run["recall_found"] / total if total else 1.0
            if run["openai_errors"] or run["anthropic_errors"]:
                reason = "rejected by a provider"
            elif run["savings_pct"] < min_savings_pct:
                reason = "saves less than asked"
            else:
                reason = "lower recall"
        losses.append(Loss(session, reason, recall, winners, best))
    return Recommendation(
        choice=chosen.label,
        wins=wins.get(chosen.label, 0),
        sessions=len(sessions),
        losses=losses,
        wins_by_choice=dict(sorted(wins.items(), key=lambda item: -item[1])),
    )
