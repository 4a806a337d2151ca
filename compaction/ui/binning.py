"""Grouping consecutive messages into bars, so a per-message chart stays cheap to draw.

Headless Chromium without a GPU took ~20 s to draw 5,000 plotly bars, against the 3 s first
render goal; 600 bars draw in well under a second and are still more bars than a chart is wide
in pixels. Above the limit, consecutive messages are grouped into bins of equal message count.
Pure functions (no Streamlit, no chart library) so the grouping is tested on its own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

#: Up to this many messages, one bar per message; above it, at most about this many bars.
BAR_LIMIT = 600


class Bin(NamedTuple):
    """Messages start..end-1 drawn as one bar of `tokens`, coloured as `label`."""

    start: int
    end: int
    tokens: int
    label: str
    label_counts: dict[str, int]  # messages per label (a fate bin may hold several fates)
    role_counts: dict[str, int]

    @property
    def size(self) -> int:
        return self.end - self.start


def bin_size(count: int, limit: int = BAR_LIMIT) -> int:
    """Messages per bar: 1 up to `limit` messages, else the fewest that keep ≤ `limit` bars."""
    return 1 if count <= limit else math.ceil(count / limit)


def make_bins(
    tokens: Sequence[int],
    labels: Sequence[str],
    roles: Sequence[str],
    size: int,
    split_on_label: bool,
) -> list[Bin]:
    """Consecutive bins of `size` messages.

    `split_on_label` (regions: head, middle, tail are contiguous) cuts a bin where the label
    changes, so no bar mixes two regions; that adds at most one bar per boundary. Fates
    interleave message by message, so a fate bin is not split: it takes the label that holds
    the most of its tokens (ties: the most messages, then the first seen), and its hover lists
    every fate in it.
    """
    if not len(tokens) == len(labels) == len(roles):
        raise ValueError(
            f"tokens ({len(tokens)}), labels ({len(labels)}) and roles ({len(roles)}) "
            "must have one entry per message"
        )
    if size < 1:
        raise ValueError(f"bin size must be at least 1, got {size}")
    bins: list[Bin] = []
    start = 0
    count = len(tokens)
    while start < count:
        end = min(start + size, count)
        if split_on_label:
            for index in range(start + 1, end):
                if labels[index] != labels[start]:
                    end = index
                    break
        bins.append(_bin(start, end, tokens, labels, roles))
        start = end
    return bins


def _bin(
    start: int, end: int, tokens: Sequence[int], labels: Sequence[str], roles: Sequence[str]
) -> Bin:
    by_tokens: dict[str, int] = {}
    by_count: Counter[str] = Counter()
    for index in range(start, end):
        by_tokens[labels[index]] = by_tokens.get(labels[index], 0) + tokens[index]
        by_count[labels[index]] += 1
    order = list(by_count)  # first-seen order breaks the remaining ties deterministically
    label = max(order, key=lambda lab: (by_tokens[lab], by_count[lab], -order.index(lab)))
    return Bin(
        start=start,
        end=end,
        tokens=sum(tokens[start:end]),
        label=label,
        label_counts=dict(by_count),
        role_counts=dict(Counter(roles[start:end])),
    )
