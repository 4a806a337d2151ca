"""`final_fates`: each input message's most telling fate across the phases, as FATE_ORDER ranks
them — checked against that definition on random phases, and on a hand-built case."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.phases.outcome import final_fates
from compaction.result import FATE_ORDER, Fate, PhaseResult

FATES = [*Fate, "a fate no version ranks"]


def phase(fates: dict[int, str]) -> PhaseResult:
    return PhaseResult(
        name="p", messages=[], origins=[], tokens_before=0, tokens_after=0, fates=fates
    )


def most_telling(count: int, phases: list[PhaseResult]) -> dict[int, str]:
    """The definition: of every fate a phase gave a message, the one ranked first, when it
    ranks before "kept" (a fate FATE_ORDER does not rank never replaces "kept")."""
    rank = {fate: position for position, fate in enumerate(FATE_ORDER)}
    given: dict[int, list[str]] = {}
    for one in phases:
        for index, fate in one.fates.items():
            given.setdefault(index, []).append(fate)
    result: dict[int, str] = {}
    for index in range(count):
        ranked = [fate for fate in given.get(index, []) if fate in rank]
        result[index] = min([*ranked, Fate.KEPT], key=rank.__getitem__)
    return result


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(0, 40),
    phases=st.lists(
        st.dictionaries(st.integers(0, 39), st.sampled_from(FATES), max_size=40), max_size=6
    ),
)
def test_each_message_gets_its_most_telling_fate(count: int, phases: list[dict[int, str]]) -> None:
    in_range = [{i: f for i, f in fates.items() if i < count} for fates in phases]
    fates = final_fates(count, [phase(one) for one in in_range])
    assert fates == most_telling(count, [phase(one) for one in in_range])
    assert list(fates) == list(range(count))  # in input order


def test_folded_outranks_what_prune_did_and_a_removed_orphan_outranks_folded() -> None:
    phases = [
        phase({1: Fate.CUT_TO_ONE_LINE, 2: Fate.DEDUPLICATED, 5: Fate.ARGUMENTS_SHORTENED}),
        phase({1: Fate.FOLDED_INTO_SUMMARY, 2: Fate.FOLDED_INTO_SUMMARY}),
        phase({2: Fate.ORPHAN_REMOVED, 4: Fate.NOTE_ADDED}),
    ]
    assert final_fates(6, phases) == {
        0: Fate.KEPT,
        1: Fate.FOLDED_INTO_SUMMARY,
        2: Fate.ORPHAN_REMOVED,
        3: Fate.KEPT,
        4: Fate.NOTE_ADDED,
        5: Fate.ARGUMENTS_SHORTENED,
    }
