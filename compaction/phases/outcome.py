"""What a compaction says when it ends early, and the fates it reports.

Three endings besides the summary spliced in: nothing left to summarise after Phase 1 (the
pruned conversation is the result), nothing left to summarise at all (a skip, which still names
the repairs Phase 5 made), and a summary that would grow the context (discarded). Each has its
note here; so do the two helpers every ending uses: the merged summary put back as given, and each
input message's final fate across the phases. (Split from compactor.py, which runs the phases.)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from compaction.messages import Message
from compaction.result import FATE_ORDER, Fate, OrphanFix, PhaseResult

NOTHING_TO_COMPRESS = "nothing to compress"
MAX_FIXES_IN_REASON = 3
PRUNE_ONLY_NOTE = (
    "After Phase 1 everything past the head fits the tail budget: nothing is left to summarise, "
    "so the pruned conversation is the result."
)
FIT_ONLY_NOTE = (
    "Nothing is left to summarise (the head and the tail hold the whole conversation), but the "
    "context is over the window: the conversation is the result, cut by Fit to fit it."
)
SUMMARY_NOT_WORTH_IT = (
    "With the summary spliced in the context would grow ({before:,} → {after:,} tokens): the "
    "middle ({middle:,} tokens after Phase 1) is too short to be worth the summary's fixed cost. "
    "The pruned conversation ({pruned:,} tokens) is the result; the summary is discarded."
)


def nothing_to_compress_reason(fixes: Sequence[OrphanFix]) -> str:
    """The skip reason when nothing is left to summarise; it names the repairs Phase 5 still
    made, since then the output differs from the input although nothing was compacted."""
    if not fixes:
        return NOTHING_TO_COMPRESS
    shown = "; ".join(fix.describe() for fix in fixes[:MAX_FIXES_IN_REASON])
    more = len(fixes) - MAX_FIXES_IN_REASON
    if more > 0:
        shown += f"; and {more} more (see orphan_fixes)"
    return f"{NOTHING_TO_COMPRESS}, but the input was repaired: {shown}"


def restore_merged(
    messages: list[Message], originals: Sequence[Message], indices: set[int]
) -> list[Message]:
    """`messages` with the messages at `indices` as they were given (Phase 1 never touches the
    user and assistant texts a merged summary lives in, so nothing else is lost)."""
    if not indices:
        return messages
    return [originals[i] if i in indices else m for i, m in enumerate(messages)]


def final_fates(count: int, phases: Sequence[PhaseResult]) -> dict[int, str]:
    """Each input message's most telling fate across the phases (see FATE_ORDER)."""
    rank: dict[str, int] = {fate: position for position, fate in enumerate(FATE_ORDER)}
    unranked = len(rank)
    kept = rank.get(Fate.KEPT, unranked)
    # The phases' fates grouped by fate, each group then written over the messages' fates from
    # the least telling to the most (one dict update each, in C), so each message ends with its
    # most telling fate: what comparing every fate with the one before gives, without a
    # comparison per message (nearly every phase gives one fate only: Summarize, "folded").
    groups: list[tuple[int, str, Collection[int]]] = []
    for phase in phases:
        given = phase.fates
        values = set(given.values())
        if len(values) == 1:
            (fate,) = values
            groups.append((rank.get(fate, unranked), fate, given.keys()))
        elif values:
            split: dict[str, list[int]] = {fate: [] for fate in values}
            for index, fate in given.items():
                split[fate].append(index)
            groups.extend((rank.get(fate, unranked), fate, at) for fate, at in split.items())
    fates: dict[int, str] = dict.fromkeys(range(count), Fate.KEPT)
    # Sorted by rank alone (stable: an equal rank is the same fate, or one that never wins).
    for position, fate, indexes in sorted(groups, key=lambda group: -group[0]):
        if position < kept:  # a fate no more telling than "kept" never replaces it
            fates.update(dict.fromkeys(indexes, fate))
    return fates
