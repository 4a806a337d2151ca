"""What a compaction freed, decided without counting the whole input: the anti-thrash verdict.

A compaction that frees less than `ineffective_savings_pct` of its input counts as ineffective
(two in a row stop automatic compaction). The saving is (before - after) / before: `after` is the
output's own count, exact; `before` is the input's total, which only a tally of every message
gives (tokens/tally.py). The verdict needs only whether `before` reaches the smallest total at
which the saving, computed as the Compactor always computed it (in floating point), is no longer
under the limit: that value is found once, and the tally settles `before >= it` from bounds.
The saving itself, a figure of the report, is computed when it is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, resolve, stored, then
from compaction.result import PhaseResult
from compaction.tokens.tally import TokenTally, at_least, smallest_where


def savings_pct(tokens_before: int, tokens_after: int) -> float:
    """The share of the input freed, in percent (0 for an empty input)."""
    if not tokens_before:
        return 0.0
    return (tokens_before - tokens_after) / tokens_before * 100


def freed_little(input_tokens: Sequence[int], tokens_after: int, limit_pct: float) -> bool:
    """savings_pct(sum(input_tokens), tokens_after) < limit_pct, as exact counts decide it.

    For a total of at least one token the saving only grows with the total (each float step is
    monotone), so it is under the limit exactly when the total is under the smallest one whose
    saving is not."""
    if (
        not isinstance(input_tokens, TokenTally)
        or limit_pct >= 100  # no total is enough (unless nothing is left): count it
        or not input_tokens.at_least(1)
    ):
        return savings_pct(sum(input_tokens), tokens_after) < limit_pct
    enough = smallest_where(lambda total: savings_pct(total, tokens_after) >= limit_pct, 1)
    return not at_least(input_tokens, enough)


def add_savings(
    cleaned: PhaseResult,
    input_tokens: Sequence[int],
    tokens_after: int,
    ineffective: bool,
    ineffective_count: int,
    config: CompactionConfig,
) -> None:
    """Cleanup's details gain the saving (computed when read), the verdict and the count."""

    def saving() -> float:
        return round(savings_pct(sum(input_tokens), tokens_after), 2)

    def completed(details: dict[str, Any]) -> dict[str, Any]:
        details.update(
            {
                "savings_pct": saving(),
                "ineffective": ineffective,
                "ineffective_count": ineffective_count,
                "max_ineffective": config.max_ineffective,
            }
        )
        return details

    details = stored(cleaned, "details")
    if isinstance(input_tokens, TokenTally) and not isinstance(details, Deferred):
        plain = details
        details = Deferred(lambda: resolve(plain))  # a plain dict: completed when read
    cleaned.details = then(details, completed)
