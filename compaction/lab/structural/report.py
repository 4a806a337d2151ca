"""The structural measure as the eval reports it: a strategy's row columns, per category and
per third of the conversation, and the small summary a worker process sends back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compaction.lab.structural.facts import CATEGORIES, POSITIONS, StructuralFact, StructuralRecall

#: A row's columns, per category, then per third.
COLUMNS: tuple[str, ...] = (
    *(f"recall_structural_{name}" for name in CATEGORIES),
    *(f"recall_structural_{position}" for position in POSITIONS),
)
#: Lost facts a summary keeps per category: examples to act on.
LOST_EXAMPLES = 5


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def row_columns(structural: StructuralRecall | None) -> dict[str, float | None]:
    """`recall_structural_<category>` and `recall_structural_<position>` (early, middle, late):
    the share of each category's facts kept, and of the facts mined from each third of the
    conversation; None where there was no fact to keep."""
    columns: dict[str, float | None] = {}
    for name in CATEGORIES:
        ratio = structural.category_ratio(name) if structural is not None else None
        columns[f"recall_structural_{name}"] = _rounded(ratio)
    for position in POSITIONS:
        ratio = structural.position_ratio(position) if structural is not None else None
        columns[f"recall_structural_{position}"] = _rounded(ratio)
    return columns


def lost_examples(facts: Iterable[StructuralFact]) -> dict[str, list[dict[str, Any]]]:
    """The first LOST_EXAMPLES facts of each category, oldest first."""
    examples: dict[str, list[dict[str, Any]]] = {}
    for fact in sorted(facts, key=lambda fact: fact.source_index):
        chosen = examples.setdefault(fact.category, [])
        if len(chosen) < LOST_EXAMPLES:
            chosen.append(fact.to_dict())
    return examples


def summary(structural: StructuralRecall) -> dict[str, Any]:
    """Found/total per category and per third, and the first LOST_EXAMPLES lost facts of each
    category (oldest first): small enough to send back from a worker for every strategy."""
    detail = structural.to_dict()
    return {
        "ratio": detail["ratio"],
        "categories": detail["categories"],
        "positions": detail["positions"],
        "lost_examples": lost_examples(structural.lost),
    }
