"""A dollars axis for one compaction (the Sweep's points, Evaluate's strategies).

A sweep point or a strategy is one forced compaction, not a session, so its dollars are those of
the compaction when it happens, at one model's price:
- the summary call, when one was written: the summarised part sent fresh (the context less what
  was kept, plus the summary that replaces it) and the summary as output;
- the next request, which can no longer read the compacted context from the cache: all of it is
  written again (Anthropic: at the cache-write rate; OpenAI and Gemini: at the input rate).
Everything after that — the reads of later calls — is the session's, which `compaction cost`
prices with the cache model. Tokens are the lab's counts (no calibration: a sweep spans sessions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from compaction.lab.cost.pricing import Price

P = TypeVar("P", bound=Mapping[str, Any])


def compaction_usd(
    tokens_before: int, tokens_after: int, summary_tokens: int, price: Price | None
) -> float | None:
    """One compaction's dollars at `price` (None when the price is unknown)."""
    if price is None:
        return None
    rates = price.rates_for(tokens_before)
    summary = 0.0
    if summary_tokens > 0:
        summarised = max(tokens_before - tokens_after + summary_tokens, 0)
        summary = summarised * rates.input + summary_tokens * rates.output
    return summary + tokens_after * rates.cache_write


def with_usd(
    rows: Sequence[P], price: Price | None, before_key: str = "tokens_before"
) -> list[dict[str, Any]]:
    """`rows` with a `usd` column (tokens_before, tokens_after or tokens, summary_tokens)."""
    out = []
    for row in rows:
        after = row.get("tokens_after", row.get("tokens", 0))
        usd = compaction_usd(
            int(row.get(before_key) or 0),
            int(after or 0),
            int(row.get("summary_tokens") or 0),
            price,
        )
        out.append({**row, "usd": usd})
    return out


def cost_frontier(rows: Sequence[Mapping[str, Any]], recall: str = "recall") -> list[int]:
    """Indices of the rows no other row beats on both: fewer dollars and more recall."""
    priced = [
        (i, float(r["usd"]), float(r[recall]))
        for i, r in enumerate(rows)
        if r.get("usd") is not None and r.get(recall) is not None
    ]
    frontier = []
    for i, usd, found in priced:
        beaten = any(
            (u <= usd and f >= found) and (u < usd or f > found) for j, u, f in priced if j != i
        )
        if not beaten:
            frontier.append(i)
    return sorted(frontier, key=lambda i: float(rows[i]["usd"]))
