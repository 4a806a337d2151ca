"""The middle's indices and each message's region, made in runs (phases/boundaries.py), held to
their definitions: every index between head and tail but those kept verbatim; `region(i)` of
each message."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.phases.boundaries import Boundaries, indices_between


@settings(max_examples=300, deadline=None)
@given(
    start=st.integers(0, 30),
    stop=st.integers(0, 60),
    left_out=st.lists(st.integers(-5, 70), max_size=12),
)
def test_indices_between_leave_out_exactly_the_given_ones(
    start: int, stop: int, left_out: list[int]
) -> None:
    expected = [i for i in range(start, stop) if i not in left_out]
    assert indices_between(start, stop, left_out) == expected


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(0, 40),
    head_end=st.integers(0, 45),
    tail_start=st.integers(0, 45),
    pinned=st.none() | st.integers(0, 44),
    kept=st.lists(st.integers(0, 44), max_size=6, unique=True),
)
def test_regions_and_the_middle_are_what_region_says_one_message_at_a_time(
    count: int, head_end: int, tail_start: int, pinned: int | None, kept: list[int]
) -> None:
    bounds = Boundaries(
        head_end=head_end,
        tail_start=tail_start,
        raw_walk_stop=tail_start,
        tail_tokens=0,
        pinned=pinned,
        kept=tuple(sorted(kept)),
    )
    assert bounds.regions(count) == [bounds.region(i) for i in range(count)]
    verbatim = set(bounds.verbatim)
    middle = [i for i in range(head_end, tail_start) if i not in verbatim]
    assert bounds.middle == middle
    assert bounds.middle_is_empty == (not middle)
