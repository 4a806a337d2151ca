"""The cache model against the record: does it predict the cache reads and writes the provider
reported for the agent's own calls?

Replayed over the agent's context sequence (`record_requests`: the sizes the provider counted),
the model's reads and writes per call are set beside the recorded ones. Per session the error is
on the sums (predicted − recorded) / recorded; per call it is the absolute difference as a share
of the call's prompt, and the calls it misses most are listed with their line, so a reader can see
what happened there (a background task's notice that made Claude Code rewrite its context, an
OpenAI routing miss). OpenAI and Gemini report no cache writes: only reads are compared there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction.formats.conversation import Conversation, ModelCall
from compaction.lab.cost.cache import (
    ANTHROPIC,
    NO_CACHE,
    Block,
    CacheOutcome,
    CacheRules,
    Request,
    rules_for,
    simulate_cache,
)


@dataclass(frozen=True)
class CallCheck:
    number: int
    position: int
    line: int | None
    prompt: int
    recorded_read: int
    recorded_write: int | None
    predicted_read: int
    predicted_write: int

    @property
    def error(self) -> float:
        """|read error| + |write error| as a share of the prompt."""
        miss = abs(self.predicted_read - self.recorded_read)
        if self.recorded_write is not None:
            miss += abs(self.predicted_write - self.recorded_write)
        return miss / self.prompt if self.prompt else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "position": self.position,
            "line": self.line,
            "prompt": self.prompt,
            "recorded_read": self.recorded_read,
            "recorded_write": self.recorded_write,
            "predicted_read": self.predicted_read,
            "predicted_write": self.predicted_write,
            "error": round(self.error, 4),
        }


@dataclass
class CacheCheck:
    rules: CacheRules
    rows: list[CallCheck]

    def _sums(self, recorded: str, predicted: str) -> tuple[int, int]:
        rows = [r for r in self.rows if getattr(r, recorded) is not None]
        return (
            sum(int(getattr(r, recorded)) for r in rows),
            sum(int(getattr(r, predicted)) for r in rows),
        )

    def read_error(self) -> float | None:
        recorded, predicted = self._sums("recorded_read", "predicted_read")
        return (predicted - recorded) / recorded if recorded else None

    def write_error(self) -> float | None:
        if self.rules.provider != ANTHROPIC:
            return None
        recorded, predicted = self._sums("recorded_write", "predicted_write")
        return (predicted - recorded) / recorded if recorded else None

    def cached_error(self) -> float | None:
        """The error on reads + writes together: the tokens that went through the cache."""
        read_rec, read_pred = self._sums("recorded_read", "predicted_read")
        write_rec, write_pred = (0, 0)
        if self.rules.provider == ANTHROPIC:
            write_rec, write_pred = self._sums("recorded_write", "predicted_write")
        recorded = read_rec + write_rec
        return (read_pred + write_pred - recorded) / recorded if recorded else None

    def call_error(self) -> float | None:
        """Mean per-call error, weighted by prompt size."""
        prompt = sum(r.prompt for r in self.rows)
        return sum(r.error * r.prompt for r in self.rows) / prompt if prompt else None

    def worst(self, count: int = 5) -> list[CallCheck]:
        return sorted(self.rows, key=lambda r: -r.error)[:count]

    def line(self) -> str:
        if self.rules.provider == NO_CACHE:
            return "no prompt cache modelled for this provider"
        parts = []
        read, write = self.read_error(), self.write_error()
        if read is not None:
            parts.append(f"reads {read:+.1%}")
        if write is not None:
            parts.append(f"writes {write:+.1%}")
        per_call = self.call_error()
        if per_call is not None:
            parts.append(f"per call {per_call:.1%} of the prompt")
        return f"{self.rules.describe()}: " + (", ".join(parts) or "nothing to compare")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_dict(),
            "read_error": self.read_error(),
            "write_error": self.write_error(),
            "cached_error": self.cached_error(),
            "call_error": self.call_error(),
            "calls": [row.to_dict() for row in self.rows],
        }


def session_rules(conversation: Conversation) -> CacheRules:
    """The cache rules of the session's main model and the TTL its writes were recorded at."""
    models = [c.model for c in conversation.calls if c.model]
    model = max(set(models), key=models.count) if models else conversation.metadata.get("model")
    one_hour = any((c.cache_write_1h_tokens or 0) > 0 for c in conversation.calls)
    return rules_for(model if isinstance(model, str) else None, one_hour)


def check_cache(
    conversation: Conversation,
    requests: list[Request],
    rules: CacheRules | None = None,
    warm: Sequence[Block] = (),
) -> tuple[CacheCheck, list[CacheOutcome]]:
    """The model over the record's requests, against the recorded reads and writes."""
    rules = rules or session_rules(conversation)
    outcomes = simulate_cache(requests, rules, warm)
    calls: list[ModelCall] = [c for c in conversation.calls if c.input_tokens]
    rows = [
        CallCheck(
            number=number,
            position=call.position,
            line=call.line,
            prompt=int(call.input_tokens or 0),
            recorded_read=call.cache_read_tokens or 0,
            recorded_write=call.cache_write_tokens,
            predicted_read=outcome.read,
            predicted_write=outcome.write,
        )
        for number, (call, outcome) in enumerate(zip(calls, outcomes, strict=True))
    ]
    return CacheCheck(rules, rows), outcomes
