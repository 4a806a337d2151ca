"""Compare compaction strategies on one conversation at one token target.

Savings alone reward throwing everything away. Each strategy is scored on three things at once,
on the same conversation and the same target: how many tokens it leaves, whether a provider would
still accept the result (validate, OpenAI and Anthropic), and probe recall — the facts mined once
from the original conversation (latest request, constraints, files, errors, commands,
identifiers) that are still present afterwards. The strategies:

- `head-tail`, `truncate-outputs`, `prune-only`: the baselines of strategies.py;
- `compaction`: the full five-phase pipeline, its budgets derived from the target
  (`strategies.config_for_target`, clamped to the config's valid range however large the
  session), with the given summariser (extractive by default);
- `head-tail-matched`: head-tail given exactly the tokens `compaction` left. The pipeline may stay
  above the target (its head, its last-user anchor and its summary have a floor), and recall bought
  with more tokens proves little; this row compares the two at equal size.
- the peers (`hermes`, `codex`, `openhands`, `gemini-cli`, `observation-masking`): each peer's
  published policy (lab/peers/), forced once at the window whose trigger fires at the target, its
  summary written by the given summariser. Asked for by name only (not in the default set), and
  measured like the rest: an output a provider rejects is reported, never repaired.

`Evaluation.summary_row()` is a small, picklable digest of one conversation (what the CLI's worker
processes send back); `aggregate()` folds many digests into one row per strategy (the table the
CLI prints and the Evaluate page shows for a folder).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.compactor import Compactor, check_components
from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.input.checks import validate_messages
from compaction.lab.judgement import Judgement
from compaction.lab.memory import with_lab_cache
from compaction.lab.peers import PEER_NAMES, PEERS, PeerRun, run_at_target
from compaction.lab.probes import CATEGORIES, Fact, Recall, mine_facts, recall
from compaction.lab.strategies import BASELINES, config_for_target
from compaction.lab.structural import StructuralFact, StructuralRecall, mine, structural_recall
from compaction.lab.structural.report import COLUMNS, lost_examples, row_columns, summary
from compaction.lab.timeline import conversation_messages
from compaction.messages import Message, split_marks
from compaction.provider_rules import PROVIDERS, Problem, errors, validate
from compaction.result import CompactionResult
from compaction.summarizers.base import Summarizer
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary.recorded import SessionRecord
from compaction.tokens import make_counter

COMPACTION = "compaction"
MATCHED = "head-tail-matched"
STRATEGY_NAMES: tuple[str, ...] = (*BASELINES, COMPACTION, MATCHED)
#: Every name `--strategies` accepts: the default set above, then the peers (by name only).
KNOWN_STRATEGIES: tuple[str, ...] = (*STRATEGY_NAMES, *PEER_NAMES)
DEFAULT_TARGET_RATIO = 0.33
#: A row's structural columns, per category, then per third (lab/structural/report.py).
STRUCTURAL_COLUMNS: tuple[str, ...] = COLUMNS


@dataclass
class StrategyOutcome:
    """What one strategy made of the conversation."""

    name: str
    messages: list[Message] = field(repr=False)
    tokens_before: int
    tokens: int
    problems: dict[str, list[Problem]]
    recall: Recall
    duration_s: float
    result: CompactionResult | None = field(default=None, repr=False)
    #: A peer's run (what its policy kept, cut and dropped), for the peers only.
    peer: PeerRun | None = field(default=None, repr=False)
    #: The independent measure (structural.py): facts defined by the transcript's structure.
    structural: StructuralRecall | None = field(default=None, repr=False)

    @property
    def savings_pct(self) -> float:
        if self.tokens_before <= 0:
            return 0.0
        return (self.tokens_before - self.tokens) / self.tokens_before * 100

    def error_count(self, provider: str) -> int:
        return len(errors(self.problems.get(provider, [])))

    @property
    def valid(self) -> bool:
        """No provider would reject the result (warnings do not count)."""
        return all(self.error_count(provider) == 0 for provider in PROVIDERS)

    def row(self) -> dict[str, Any]:
        """One flat row: the numbers of a table or a scatter point."""
        row: dict[str, Any] = {
            "strategy": self.name,
            "tokens": self.tokens,
            "savings_pct": round(self.savings_pct, 2),
            "recall": round(self.recall.ratio, 4),
            "facts_found": self.recall.found,
            "facts_total": self.recall.total,
            "facts_lost": len(self.recall.lost),
            "recall_structural": (
                round(self.structural.ratio, 4) if self.structural is not None else None
            ),
        }
        for name in CATEGORIES:
            bucket = self.recall.categories.get(name)
            row[f"recall_{name}"] = (
                round(bucket.ratio, 4) if bucket is not None and bucket.total else None
            )
        row.update(row_columns(self.structural))
        for provider in PROVIDERS:
            row[f"{provider}_errors"] = self.error_count(provider)
        row["valid"] = self.valid
        row["duration_s"] = round(self.duration_s, 6)
        return row

    def to_dict(self, include_messages: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            **self.row(),
            "recall_detail": self.recall.to_dict(),
            "structural_detail": self.structural.to_dict() if self.structural else None,
            "problems": {
                provider: [problem.to_dict() for problem in problems]
                for provider, problems in self.problems.items()
            },
        }
        if self.result is not None:
            data["compaction"] = self.result.to_dict(include_phase_messages=False)
            data["compaction"].pop("messages", None)
        if self.peer is not None:
            data["peer"] = self.peer.to_dict()
        if include_messages:
            data["messages"] = self.messages
        return data


@dataclass
class Evaluation:
    """Every strategy's outcome on one conversation, at one token target."""

    tokens_before: int
    target_tokens: int
    messages_before: int
    facts: list[Fact]
    outcomes: dict[str, StrategyOutcome]
    source: str | None = None
    repairs: list[str] = field(default_factory=list)
    #: The input's own validity errors: a strategy cannot be blamed for what it was given.
    original_errors: dict[str, int] = field(default_factory=dict)
    judgement: Judgement | None = None

    def rows(self) -> list[dict[str, Any]]:
        """One row per strategy, in the order they ran."""
        return [outcome.row() for outcome in self.outcomes.values()]

    def lost_facts(self, strategy: str) -> list[Fact]:
        return list(self.outcomes[strategy].recall.lost)

    def structural_gap(self) -> dict[str, list[dict[str, Any]]] | None:
        """Examples, per category, of the structural facts the pipeline lost and head-tail kept
        at the same size (`head-tail-matched`): what the summary should have carried. None
        unless both ran."""
        ours = self.outcomes.get(COMPACTION)
        theirs = self.outcomes.get(MATCHED)
        if ours is None or theirs is None or ours.structural is None or theirs.structural is None:
            return None
        return lost_examples(ours.structural.lost_where_kept(theirs.structural))

    def summary_row(self) -> dict[str, Any]:
        """A compact, picklable digest of this evaluation (no messages), for aggregate()."""
        return {
            "source": self.source,
            "messages": self.messages_before,
            "tokens_before": self.tokens_before,
            "target_tokens": self.target_tokens,
            "facts": len(self.facts),
            "original_errors": dict(self.original_errors),
            "strategies": {name: outcome.row() for name, outcome in self.outcomes.items()},
            "structural": {
                name: summary(outcome.structural)
                for name, outcome in self.outcomes.items()
                if outcome.structural is not None
            },
            "structural_gap": self.structural_gap(),
            "judged": self.judgement.rows() if self.judgement is not None else None,
        }

    def to_dict(self, include_messages: bool = False) -> dict[str, Any]:
        return {
            "source": self.source,
            "messages": self.messages_before,
            "tokens_before": self.tokens_before,
            "target_tokens": self.target_tokens,
            "repairs": list(self.repairs),
            "original_errors": dict(self.original_errors),
            "facts": [fact.to_dict() for fact in self.facts],
            "strategies": {
                name: outcome.to_dict(include_messages) for name, outcome in self.outcomes.items()
            },
            "judgement": self.judgement.to_dict() if self.judgement is not None else None,
        }


def parse_strategies(names: str | Iterable[str]) -> tuple[str, ...]:
    """Strategy names from a comma-separated string or a sequence; ConfigError on unknown ones."""
    if not isinstance(names, str | list | tuple):
        raise ConfigError(
            "strategies must be a comma-separated string or a list of strategy names "
            f"({', '.join(KNOWN_STRATEGIES)}), got {type(names).__name__}"
        )
    items = names.split(",") if isinstance(names, str) else list(names)
    if not all(isinstance(name, str) for name in items):
        raise ConfigError(f"strategies must be names (text), got {items!r}")
    chosen = tuple(dict.fromkeys(name.strip() for name in items if name.strip()))
    unknown = [name for name in chosen if name not in KNOWN_STRATEGIES]
    if unknown or not chosen:
        shown = ", ".join(repr(name) for name in unknown) or "none given"
        raise ConfigError(f"unknown strategy {shown}; choose from {', '.join(KNOWN_STRATEGIES)}")
    return chosen


def resolve_target(
    tokens_before: int, target_tokens: int | None, target_ratio: float | None
) -> int:
    """The token target: explicit, else `target_ratio` of the conversation (at least 1)."""
    if target_tokens is not None:
        if isinstance(target_tokens, bool) or not isinstance(target_tokens, int):
            raise ConfigError(f"target_tokens must be a whole number, got {target_tokens!r}")
        if target_tokens < 1:
            raise ConfigError(f"target_tokens must be at least 1, got {target_tokens}")
        return target_tokens
    ratio = DEFAULT_TARGET_RATIO if target_ratio is None else target_ratio
    if not 0 < ratio <= 1:
        raise ConfigError(f"target_ratio must be in (0, 1], got {ratio!r}")
    return max(1, int(tokens_before * ratio))


@with_lab_cache
def evaluate(
    conversation: Any,
    strategies: str | Sequence[str] = STRATEGY_NAMES,
    target_tokens: int | None = None,
    target_ratio: float = DEFAULT_TARGET_RATIO,
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
) -> Evaluation:
    """Run each strategy on `conversation` (never modified) at the same token target."""
    chosen = parse_strategies(strategies)
    check_components(config, summarizer, None)
    messages, repairs = validate_messages(conversation_messages(conversation, "evaluate"))
    # Which user turns the harness sent: the conversation's marks (an imported session), or the
    # keys a message list still carries; beside the messages from here on.
    messages, marks = split_marks(messages, getattr(conversation, "marks", None))
    record = SessionRecord(marks=tuple(sorted(marks.items())))
    base = config or CompactionConfig()
    counter = make_counter(base.counter, base.model)
    tokens_before = counter.count_messages(messages)
    target = resolve_target(tokens_before, target_tokens, target_ratio)
    facts = mine_facts(messages, marks=marks)
    structural_facts: list[StructuralFact] = mine(messages, marks)
    outcomes: dict[str, StrategyOutcome] = {}
    # The matched row needs the pipeline's size: run the pipeline first, even when not shown.
    order = sorted(chosen, key=lambda name: name == MATCHED)
    if MATCHED in chosen and COMPACTION not in chosen:
        order.insert(0, COMPACTION)
    for name in order:
        began = time.perf_counter()
        result: CompactionResult | None = None
        peer_run: PeerRun | None = None
        if name in PEERS:
            peer_run = run_at_target(
                PEERS[name], messages, target, counter, summarizer or ExtractiveSummarizer(), marks
            )
            output = peer_run.messages
        elif name == COMPACTION:
            compactor = Compactor(config_for_target(target, base), summarizer, counter)
            result = compactor.compress(messages, force=True, recorded=record)
            output = result.messages
        elif name == MATCHED:
            output = BASELINES["head-tail"](list(messages), outcomes[COMPACTION].tokens, counter)
        else:
            output = BASELINES[name](list(messages), target, counter)
        duration = time.perf_counter() - began
        outcomes[name] = StrategyOutcome(
            name=name,
            messages=output,
            tokens_before=tokens_before,
            tokens=counter.count_messages(output),
            problems={provider: validate(output, provider) for provider in PROVIDERS},
            recall=recall(facts, output),
            duration_s=duration,
            result=result,
            peer=peer_run,
            structural=structural_recall(structural_facts, output),
        )
    outcomes = {name: outcomes[name] for name in chosen}  # the order asked for, nothing extra
    source = getattr(conversation, "source", None)
    return Evaluation(
        tokens_before=tokens_before,
        target_tokens=target,
        messages_before=len(messages),
        facts=facts,
        outcomes=outcomes,
        source=source if isinstance(source, str) else None,
        repairs=repairs,
        original_errors={
            provider: len(errors(validate(messages, provider))) for provider in PROVIDERS
        },
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(digests: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per strategy over many `Evaluation.summary_row()` digests.

    Means are over sessions; a per-category recall is averaged over the sessions that have facts
    of that category (None when none has). Validity failures count sessions with at least one
    error for that provider. `mean_target_ratio` (output tokens / target) and `over_target`
    (sessions left above the target) say whether a strategy really ran at the shared target:
    recall bought with more tokens is not the same result.
    """
    per_strategy: dict[str, list[dict[str, Any]]] = {}
    targets: dict[str, list[int]] = {}
    judged: dict[str, list[float]] = {}
    for digest in digests:
        for name, row in digest["strategies"].items():
            per_strategy.setdefault(name, []).append(row)
            targets.setdefault(name, []).append(max(1, int(digest["target_tokens"])))
        for judged_row in digest.get("judged") or []:
            if judged_row.get("score") is not None:
                judged.setdefault(judged_row["strategy"], []).append(judged_row["score"])
    table = []
    for name, rows in per_strategy.items():
        entry: dict[str, Any] = {
            "strategy": name,
            "sessions": len(rows),
            "mean_tokens": _mean([row["tokens"] for row in rows]),
            "mean_savings_pct": _mean([row["savings_pct"] for row in rows]),
            "mean_target_ratio": _mean(
                [row["tokens"] / target for row, target in zip(rows, targets[name], strict=True)]
            ),
            "over_target": sum(
                1 for row, target in zip(rows, targets[name], strict=True) if row["tokens"] > target
            ),
            "mean_recall": _mean([row["recall"] for row in rows]),
            "mean_recall_structural": _mean(
                [
                    row["recall_structural"]
                    for row in rows
                    if row.get("recall_structural") is not None
                ]
            ),
            # The judged probe run's mean score, over the sessions a model answered for.
            "mean_judged": _mean(judged.get(name, [])),
        }
        for category in CATEGORIES:
            values = [row[f"recall_{category}"] for row in rows]
            entry[f"recall_{category}"] = _mean([v for v in values if v is not None])
        for column in STRUCTURAL_COLUMNS:
            values = [row.get(column) for row in rows]
            entry[column] = _mean([v for v in values if v is not None])
        for provider in PROVIDERS:
            entry[f"{provider}_failures"] = sum(1 for row in rows if row[f"{provider}_errors"])
        table.append(entry)
    return table
