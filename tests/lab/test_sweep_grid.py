"""Sweep grids: ranges and lists parsed into exact values, and bad ones refused by name."""

from __future__ import annotations

import pytest

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.lab.sweep.grid import (
    MAX_POINTS,
    grid_configs,
    grid_points,
    normalise_grid,
    parse_grid,
    parse_param,
)


def test_float_range_is_exact_and_includes_stop() -> None:
    name, values = parse_param("tail_token_ratio=0.05:0.5:0.05")
    assert name == "tail_token_ratio"
    # The float literals themselves: no 0.15000000000000002, and 0.5 is not lost to drift.
    assert values == [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5]
    assert all(type(v) is float for v in values)


def test_range_rounds_to_the_finest_decimals_given() -> None:
    assert parse_param("summary_ratio=0.1:0.35:0.125")[1] == [0.1, 0.225, 0.35]
    assert parse_param("threshold_ratio=0.3:0.9:0.3")[1] == [0.3, 0.6, 0.9]
    # A stop off the grid is not added.
    assert parse_param("summary_ratio=0.1:0.45:0.2")[1] == [0.1, 0.3]


def test_lists_and_integer_and_string_fields() -> None:
    assert parse_param("summary_ratio=0.1,0.2,0.3") == ("summary_ratio", [0.1, 0.2, 0.3])
    assert parse_param("orphan_strategy=stub,strip") == ("orphan_strategy", ["stub", "strip"])
    assert parse_param("counter = rough , tiktoken") == ("counter", ["rough", "tiktoken"])
    _, values = parse_param("protect_first_n=0:6:2")
    assert values == [0, 2, 4, 6] and all(type(v) is int for v in values)
    assert parse_param("context_length=20000,30000")[1] == [20_000, 30_000]
    # A float range on an int field is fine when every value is whole.
    assert parse_param("prune_min_chars=100:300:100.0")[1] == [100, 200, 300]
    # Repeats are merged, order kept.
    assert parse_param("summary_ratio=0.3,0.1,0.3")[1] == [0.3, 0.1]


def test_every_config_field_is_sweepable() -> None:
    for name in CompactionConfig.field_names():
        default = getattr(CompactionConfig(), name)
        assert parse_param(f"{name}={default}") == (name, [default])


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("tail_token_ratio=0:2:0.5", r"invalid value 1\.5 for parameter tail_token_ratio"),
        ("summary_ratio=0,0.2", r"invalid value 0\.0 for parameter summary_ratio"),
        ("protect_first_n=1.5", r"protect_first_n takes whole numbers, got 1\.5"),
        ("orphan_strategy=keep", r"invalid value 'keep' for parameter orphan_strategy"),
        ("tail_size=0.1,0.2", r"unknown parameter 'tail_size'"),
        ("tail_token_ratio=0.5:0.1:0.1", r"start 0\.5 is above stop 0\.1"),
        ("tail_token_ratio=0.1:0.5:0", r"the step must be positive"),
        ("tail_token_ratio=0.1:0.5:-0.1", r"the step must be positive"),
        ("tail_token_ratio=0.1:0.5", r"START:STOP:STEP \(three numbers\)"),
        ("tail_token_ratio=a:b:c", r"'a' is not a number"),
        ("tail_token_ratio=0.1:nan:0.1", r"'nan' is not a finite number"),
        ("summary_ratio=0.1,,0.2", r"an empty value in the list"),
        ("tail_token_ratio", r"expected FIELD=START:STOP:STEP"),
        ("tail_token_ratio=", r"expected FIELD=START:STOP:STEP"),
        ("context_length=1000:100000000:1", r"more than 1,000\); use a larger step"),
    ],
)
def test_bad_parameters_are_clear_errors(spec: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        parse_param(spec)


def test_grid_is_the_cartesian_product_first_parameter_slowest() -> None:
    grid = parse_grid(["tail_token_ratio=0.1,0.2", "orphan_strategy=stub,strip"])
    assert grid_points(grid) == [
        {"tail_token_ratio": 0.1, "orphan_strategy": "stub"},
        {"tail_token_ratio": 0.1, "orphan_strategy": "strip"},
        {"tail_token_ratio": 0.2, "orphan_strategy": "stub"},
        {"tail_token_ratio": 0.2, "orphan_strategy": "strip"},
    ]


def test_grid_errors() -> None:
    with pytest.raises(ConfigError, match="given more than once"):
        parse_grid(["summary_ratio=0.1", "summary_ratio=0.2"])
    with pytest.raises(ConfigError, match="at least one parameter"):
        parse_grid([])
    huge = {"context_length": list(range(1_000, 1_000 + 200)), "prune_min_chars": list(range(200))}
    assert MAX_POINTS < 200 * 200
    with pytest.raises(ConfigError, match="points \\(more than"):
        grid_points(huge)


def test_cross_field_rules_are_judged_per_combination() -> None:
    # Each value alone is within its field's range ...
    grid = parse_grid(["summary_min_tokens=1000,9000", "summary_max_tokens=8000,10000"])
    # ... but min 9000 with max 8000 is not a config: the error names the combination.
    with pytest.raises(ConfigError, match=r"summary_min_tokens=9000, summary_max_tokens=8000"):
        grid_configs(grid)
    ok = grid_configs(parse_grid(["summary_min_tokens=1000,9000", "summary_max_tokens=10000"]))
    assert [config.summary_min_tokens for _, config in ok] == [1000, 9000]


def test_grid_configs_apply_the_base() -> None:
    base = CompactionConfig(context_length=40_000, orphan_strategy="strip")
    [(params, config)] = grid_configs({"tail_token_ratio": [0.3]}, base)
    assert params == {"tail_token_ratio": 0.3}
    assert config == base.replace(tail_token_ratio=0.3)


def test_mapping_grids_are_checked_like_specs() -> None:
    assert normalise_grid({"summary_ratio": [1, 0.5]}) == {"summary_ratio": [1.0, 0.5]}
    with pytest.raises(ConfigError, match="non-empty list"):
        normalise_grid({"summary_ratio": []})
    with pytest.raises(ConfigError, match=r"invalid value 7\.0 for parameter threshold_ratio"):
        normalise_grid({"threshold_ratio": [0.5, 7]})
    with pytest.raises(ConfigError, match="unknown parameter 'nope'"):
        normalise_grid({"nope": [1]})


def test_a_switch_sweeps_both_of_its_values_and_refuses_anything_else() -> None:
    assert parse_param("cache_aware=false,true") == ("cache_aware", [False, True])
    with pytest.raises(ConfigError, match="cache_aware takes true or false, got 'maybe'"):
        parse_param("cache_aware=maybe")
