"""Where each message falls — head, middle or tail — under a config, without summarising.

This is Phase 1 and Phase 2 alone: what `compaction inspect` prints and what the app colours before
anything is run. It is cheap (token counts are cached), so it can follow every slider move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.config import CompactionConfig
from compaction.input.growing import check_once
from compaction.messages import Marks, Message, split_marks
from compaction.phases.boundaries import Boundaries, find_boundaries, find_head_end, keep_pinned
from compaction.phases.pins import PinnedMessages, resolve_pins
from compaction.phases.prune import counts_after, prune
from compaction.phases.summarize import split_merged_summaries
from compaction.tokens import TokenCounter, make_counter


@dataclass
class RegionPlan:
    messages: list[Message]
    repairs: list[str]
    tokens: list[int]  # per message, as given
    pruned_tokens: list[int]  # per message, after Phase 1
    boundaries: Boundaries
    config: CompactionConfig
    #: What the config's pins keep (input indexes and why).
    pinned: PinnedMessages = field(default_factory=PinnedMessages)

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)

    def regions(self) -> list[str]:
        return self.boundaries.regions(len(self.messages))

    def region_tokens(self) -> dict[str, int]:
        totals = {"head": 0, "middle": 0, "tail": 0}
        for index, region in enumerate(self.regions()):
            totals[region] += self.tokens[index]
        return totals

    def region_counts(self) -> dict[str, int]:
        b = self.boundaries
        middle = len(b.middle)
        return {
            "head": b.head_end,
            "middle": middle,
            # The pinned request and the user's pinned middle messages included.
            "tail": len(self.messages) - b.head_end - middle,
        }


def plan_regions(
    messages: Sequence[Message],
    config: CompactionConfig | None = None,
    counter: TokenCounter | None = None,
    marks: Marks | None = None,
) -> RegionPlan:
    """Validate, count, prune and place the boundaries exactly as `compress` would (`marks`:
    which user turns the harness sent, as `compress(recorded=…)` is told).

    The check is `validate_messages`, reusing the last one made of these very messages, unchanged,
    with the current cache (input/growing.py): the app plans the regions again on every move of a
    budget's slider, and checking 5,000 messages again cost ~50 ms of each."""
    config = config or CompactionConfig()
    counter = counter or make_counter(config.counter, config.model)
    checked, repairs, _ = check_once(messages)
    checked, marks = split_marks(checked, marks)
    tokens = [counter.count_message(message) for message in checked]
    # As compress does: a message an earlier compaction merged the summary into is that
    # message again (its own text decides where the latest request is).
    head_end = find_head_end(checked, config.protect_first_n)
    working, merged = split_merged_summaries(checked, head_end)
    merged_at = {index for index, _ in merged}
    work_tokens = [
        counter.count_message(working[i]) if i in merged_at else count
        for i, count in enumerate(tokens)
    ]
    pinned = resolve_pins(checked, config.pins, marks)
    pruned = prune(working, config, counter, work_tokens, pinned=pinned.indexes)
    pruned_tokens = counts_after(pruned, work_tokens, counter)
    bounds = keep_pinned(
        find_boundaries(pruned.messages, pruned_tokens, config, marks), pinned.indexes
    )
    return RegionPlan(checked, repairs, tokens, list(pruned_tokens), bounds, config, pinned)
