"""The structural measure per session: the pipeline against head-tail at the same size.

`aggregate()` averages over sessions, which hides the one session a summary fails. This module
reads the same `Evaluation.summary_row()` digests and puts `compaction` beside
`head-tail-matched` (head-tail given exactly the tokens the pipeline kept) session by session:
the structural recall in total, per category and per third of the conversation. A file of many
conversations (τ-bench's runs) is one row, each figure its mean over the conversations, with
the number of them where the pipeline's total is below head-tail's and equal to it. `losses()`
lists, conversation by conversation, the total and every category where the pipeline keeps
less than head-tail, with examples of the facts it lost that head-tail kept (the digest's
`structural_gap`): what the summariser should act on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compaction.lab.evaluate import COMPACTION, MATCHED, STRUCTURAL_COLUMNS
from compaction.lab.structural import CATEGORIES

#: The figures compared: the total, then each category, then each third.
FIGURES: tuple[str, ...] = ("recall_structural", *STRUCTURAL_COLUMNS)
_CONVERSATION = re.compile(r"#\d+$")


def figure_name(column: str) -> str:
    """`recall_structural_missing_paths` → `missing_paths`; the total is `total`."""
    return column.removeprefix("recall_structural").lstrip("_") or "total"


def compared(digest: dict[str, Any]) -> bool:
    """Both the pipeline and head-tail-matched ran on this session."""
    strategies = digest.get("strategies") or {}
    return COMPACTION in strategies and MATCHED in strategies


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _facts(digest: dict[str, Any]) -> int:
    ours = (digest.get("structural") or {}).get(COMPACTION) or {}
    return sum(int(bucket["total"]) for bucket in (ours.get("categories") or {}).values())


@dataclass
class SessionComparison:
    """One file's figures: the pipeline's and head-tail-matched's, per figure (None: no fact)."""

    source: str
    conversations: int
    facts: float
    ours: dict[str, float | None] = field(default_factory=dict)
    theirs: dict[str, float | None] = field(default_factory=dict)
    #: Conversations where the pipeline's total is below head-tail-matched's, and equal to it.
    lost: int = 0
    tied: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "conversations": self.conversations,
            "facts": round(self.facts, 1),
            "ours": {figure_name(c): _round(v) for c, v in self.ours.items()},
            "head_tail_matched": {figure_name(c): _round(v) for c, v in self.theirs.items()},
            "conversations_lost": self.lost,
            "conversations_tied": self.tied,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def compare_sessions(digests: Iterable[dict[str, Any]]) -> list[SessionComparison]:
    """One row per file (its conversations folded), in the order the files came."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for digest in digests:
        if compared(digest):
            groups.setdefault(_CONVERSATION.sub("", str(digest["source"])), []).append(digest)
    rows = []
    for source, group in groups.items():
        row = SessionComparison(
            source=source,
            conversations=len(group),
            facts=sum(_facts(digest) for digest in group) / len(group),
        )
        for column in FIGURES:
            for side, name in ((row.ours, COMPACTION), (row.theirs, MATCHED)):
                values = [digest["strategies"][name].get(column) for digest in group]
                side[column] = _mean([value for value in values if value is not None])
        row.lost = sum(1 for digest in group if _behind(digest, "recall_structural"))
        row.tied = sum(1 for digest in group if _tied(digest, "recall_structural"))
        rows.append(row)
    return rows


def _behind(digest: dict[str, Any], column: str) -> bool:
    ours = digest["strategies"][COMPACTION].get(column)
    theirs = digest["strategies"][MATCHED].get(column)
    return ours is not None and theirs is not None and ours < theirs


def _tied(digest: dict[str, Any], column: str) -> bool:
    ours = digest["strategies"][COMPACTION].get(column)
    theirs = digest["strategies"][MATCHED].get(column)
    return ours is not None and ours == theirs


@dataclass(frozen=True)
class Loss:
    """A figure of one conversation where the pipeline keeps less than head-tail-matched."""

    source: str
    figure: str
    ours: float
    theirs: float
    #: Facts the pipeline lost there and head-tail kept: {category, text, source_index, …}.
    examples: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "figure": self.figure,
            "ours": self.ours,
            "head_tail_matched": self.theirs,
            "examples": list(self.examples),
        }


def _examples(digest: dict[str, Any], figure: str, limit: int) -> tuple[dict[str, Any], ...]:
    gap: dict[str, list[dict[str, Any]]] = digest.get("structural_gap") or {}
    if figure in CATEGORIES:
        facts = list(gap.get(figure, []))
    else:
        facts = [fact for category in CATEGORIES for fact in gap.get(category, [])]
        facts.sort(key=lambda fact: int(fact.get("source_index", 0)))
    return tuple(facts[:limit])


def losses(digests: Iterable[dict[str, Any]], examples: int = 3) -> list[Loss]:
    """The total and every category of every conversation where the pipeline keeps less than
    head-tail-matched, with up to `examples` facts it lost there that head-tail kept (the
    thirds are in the per-session table: their losses are the categories' again)."""
    found = []
    for digest in digests:
        if not compared(digest):
            continue
        for column in FIGURES[: 1 + len(CATEGORIES)]:
            if _behind(digest, column):
                figure = figure_name(column)
                found.append(
                    Loss(
                        source=str(digest["source"]),
                        figure=figure,
                        ours=float(digest["strategies"][COMPACTION][column]),
                        theirs=float(digest["strategies"][MATCHED][column]),
                        examples=_examples(digest, figure, examples),
                    )
                )
    return found
