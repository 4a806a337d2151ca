"""The structural measure's value types: a fact, where it sits, and what a context kept of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CATEGORIES: tuple[str, ...] = (
    "latest_request",
    "constraints",
    "paths",
    "errors",
    "urls",
    "missing_paths",
    "early_errors",
    "definitions",
    "skills",
    "decisions",
)
#: The five categories the measure began with; its figures before the rest were added (the
#: README's earlier tables, the engine's regression tests) are over these.
BASE_CATEGORIES: tuple[str, ...] = CATEGORIES[:5]
#: Thirds of the original conversation, by the index of the message a fact was mined from.
POSITIONS: tuple[str, ...] = ("early", "middle", "late")
#: Long facts are matched on their first characters: a summary may cut a long line at its end.
FACT_PREFIX_CHARS = 100
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: str) -> str:
    return " ".join(text.lower().translate(_QUOTES).split())


def position_of(index: int, length: int) -> str:
    """The third of a `length`-message conversation that message `index` sits in."""
    return POSITIONS[min(len(POSITIONS) - 1, max(0, index) * len(POSITIONS) // max(1, length))]


@dataclass(frozen=True)
class StructuralFact:
    category: str
    #: The fact as a reader sees it (a definition with the file it is in).
    text: str
    source_index: int
    #: The part that is matched, when it is not the whole text: the signature of a definition.
    key_text: str = ""
    #: early, middle or late: the third of the conversation it was mined from.
    position: str = ""

    @property
    def key(self) -> str:
        key = normalise(self.key_text or self.text)
        return key[:FACT_PREFIX_CHARS]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "category": self.category,
            "text": self.text,
            "source_index": self.source_index,
            "position": self.position,
        }
        if self.key_text:
            data["key"] = self.key_text
        return data


@dataclass
class Tally:
    found: int = 0
    total: int = 0

    @property
    def ratio(self) -> float | None:
        return self.found / self.total if self.total else None

    def to_dict(self) -> dict[str, int]:
        return {"found": self.found, "total": self.total}


@dataclass
class StructuralRecall:
    found: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    lost: list[StructuralFact] = field(default_factory=list)
    #: category -> position -> found/total: where in the conversation the kept facts came from.
    by_position: dict[str, dict[str, Tally]] = field(default_factory=dict)

    def count(self, fact: StructuralFact, kept: bool) -> None:
        self.total[fact.category] = self.total.get(fact.category, 0) + 1
        tally = self.by_position.setdefault(fact.category, {}).setdefault(fact.position, Tally())
        tally.total += 1
        if kept:
            self.found[fact.category] = self.found.get(fact.category, 0) + 1
            tally.found += 1
        else:
            self.lost.append(fact)

    @property
    def ratio(self) -> float:
        total = sum(self.total.values())
        return sum(self.found.values()) / total if total else 1.0

    def ratio_of(self, categories: tuple[str, ...]) -> float:
        """The share kept of the facts of `categories` only (1.0 when there are none)."""
        total = sum(self.total.get(name, 0) for name in categories)
        return sum(self.found.get(name, 0) for name in categories) / total if total else 1.0

    def category_ratio(self, name: str) -> float | None:
        total = self.total.get(name, 0)
        return self.found.get(name, 0) / total if total else None

    def position_tally(self, position: str, category: str | None = None) -> Tally:
        """Found/total of the facts mined from one third (of one category, or of all)."""
        names = [category] if category is not None else list(self.by_position)
        tally = Tally()
        for name in names:
            part = self.by_position.get(name, {}).get(position)
            if part is not None:
                tally.found += part.found
                tally.total += part.total
        return tally

    def position_ratio(self, position: str, category: str | None = None) -> float | None:
        return self.position_tally(position, category).ratio

    def lost_where_kept(self, other: StructuralRecall) -> list[StructuralFact]:
        """The facts this context lost that `other` (scored on the same facts) kept."""
        lost_there = set(other.lost)
        return [fact for fact in self.lost if fact not in lost_there]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ratio": round(self.ratio, 4),
            "categories": {
                name: {
                    "found": self.found.get(name, 0),
                    "total": self.total.get(name, 0),
                    "positions": {
                        position: self.position_tally(position, name).to_dict()
                        for position in POSITIONS
                    },
                }
                for name in CATEGORIES
            },
            "positions": {
                position: self.position_tally(position).to_dict() for position in POSITIONS
            },
            "lost": [fact.to_dict() for fact in self.lost],
        }
