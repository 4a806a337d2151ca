"""What a judged probe run produced: each strategy's answers and grades (judge.py runs it).

Its own module so that evaluate.py (an Evaluation may carry its Judgement) and judge.py (which
judges an Evaluation) both depend on it instead of on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: question id -> (question, the fact categories its answer is graded against)
QUESTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "recall": (
        "Which exact error messages and identifiers (URLs, commit hashes, issue numbers, "
        "versions, ports) appear in the conversation? Quote each one exactly.",
        ("errors", "identifiers"),
    ),
    "artifacts": (
        "Which files were created or modified, and which shell commands were run? "
        "List the paths and the commands exactly.",
        ("files", "commands"),
    ),
    "continuation": (
        "What is the user's latest request? Quote it as exactly as you can, then say what "
        "should be done next.",
        ("latest_request",),
    ),
    "decisions": (
        "Which constraints or preferences did the user state? Quote them.",
        ("constraints",),
    ),
}


@dataclass
class JudgedStrategy:
    """One strategy's answers and grades."""

    name: str
    answers: dict[str, str] = field(default_factory=dict)
    scores: dict[str, float | None] = field(default_factory=dict)  # None: no facts to grade
    found: dict[str, list[str]] = field(default_factory=dict)
    missed: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    duration_s: float = 0.0

    @property
    def score(self) -> float | None:
        graded = [value for value in self.scores.values() if value is not None]
        return sum(graded) / len(graded) if graded else None

    def row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"strategy": self.name, "score": _round(self.score)}
        for question in QUESTIONS:
            row[question] = _round(self.scores.get(question))
        row["error"] = self.error
        return row

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.row(),
            "answers": self.answers,
            "found": self.found,
            "missed": self.missed,
            "duration_s": round(self.duration_s, 6),
        }


@dataclass
class Judgement:
    """The judged probe run of one Evaluation (the model name only: never a key)."""

    model: str
    strategies: dict[str, JudgedStrategy]

    def rows(self) -> list[dict[str, Any]]:
        return [judged.row() for judged in self.strategies.values()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "questions": {name: text for name, (text, _) in QUESTIONS.items()},
            "strategies": {name: judged.to_dict() for name, judged in self.strategies.items()},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
