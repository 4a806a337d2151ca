"""`argument` finds what its definition finds: the first wanted key held exactly, else the first
wanted key held loosely (case, "_" and "-" ignored), where the last argument of a loose form wins.

The definition is the dict of every argument's loose form it was written as; the lookup no
longer builds that dict per call (most lookups miss: ~6% of the one-liners' instructions)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text.tool_calls.reading import argument

NAMES = ["path", "Path", "file_path", "filePath", "FILE-PATH", "file__path", "offset", "Offset"]
NAMES += ["start_line", "StartLine", "line", "mode", "command", "cmd", "Cmd", "commandline"]
VALUES = st.one_of(st.none(), st.just(""), st.text(max_size=3), st.integers(), st.just([1]))


def _loose(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def by_definition(arguments: dict[Any, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        value = arguments.get(key)
        if value is not None and not (isinstance(value, str) and not value):
            return value
    loose = {
        _loose(key): value
        for key, value in arguments.items()
        if isinstance(key, str) and value is not None and not (isinstance(value, str) and not value)
    }
    for key in keys:
        if _loose(key) in loose:
            return loose[_loose(key)]
    return default


@settings(max_examples=1_500, deadline=None)
@given(
    st.dictionaries(st.one_of(st.sampled_from(NAMES), st.integers()), VALUES, max_size=6),
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=4),
)
def test_argument_finds_what_its_definition_finds(
    arguments: dict[Any, Any], keys: list[str]
) -> None:
    assert argument(arguments, *keys, default="absent") == by_definition(
        arguments, *keys, default="absent"
    )


def test_long_argument_names_are_found_and_not_remembered() -> None:
    from compaction.text.tool_calls import reading

    name = "Very_Long-" * 20
    before = reading._remembered_loose.cache_info().currsize
    assert argument({name.upper(): "found"}, name.lower()) == "found"
    assert reading._remembered_loose.cache_info().currsize == before  # nothing held in bytes
