"""CompactionConfig: the defaults of ALGORITHM.md's budget table, the derived budgets (the seed's
worked example), validation messages that name the field and its range, and for_model."""

from __future__ import annotations

import json

import pytest

from compaction.config import CompactionConfig
from compaction.errors import ConfigError


def test_defaults_match_the_budget_table() -> None:
    config = CompactionConfig()
    assert config.context_length == 128_000
    assert config.threshold_ratio == 0.50
    assert config.protect_first_n == 3
    assert config.tail_token_ratio == 0.20
    assert config.tail_soft_factor == 1.5
    assert config.min_tail_messages == 3
    assert (config.summary_ratio, config.summary_min_tokens, config.summary_max_tokens) == (
        0.20,
        2000,
        8000,
    )
    assert config.prune_min_chars == 200
    assert (config.args_max_chars, config.args_keep_chars) == (500, 200)
    assert (config.ineffective_savings_pct, config.max_ineffective) == (10.0, 2)
    assert config.orphan_strategy == "stub"
    assert config.model == "gpt-4o"
    assert config.counter == "tiktoken"


def test_derived_budgets_of_the_seed_example() -> None:
    config = CompactionConfig()
    assert config.threshold_tokens == 64_000
    assert config.tail_budget_tokens == 12_800
    assert config.tail_soft_ceiling == 19_200
    # 20% of the 49.2K middle is 9,840, which the 2K-8K clamp caps at 8,000.
    assert config.summary_budget(49_200) == 8_000
    assert config.replace(summary_max_tokens=20_000).summary_budget(49_200) == 9_840
    # The lower clamp: a tiny middle still gets the minimum budget.
    assert config.summary_budget(1_000) == 2_000
    assert config.summary_budget(0) == 2_000
    assert config.summary_budget(20_000) == 4_000


def test_derived_budgets_follow_the_ratios() -> None:
    config = CompactionConfig(context_length=200_000, threshold_ratio=0.8, tail_token_ratio=0.25)
    assert config.threshold_tokens == 160_000
    assert config.tail_budget_tokens == 40_000
    assert config.tail_soft_ceiling == 60_000


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("threshold_ratio", 1.5, "threshold_ratio must be between 0.05 and 1.0, got 1.5"),
        ("threshold_ratio", 0.0, "threshold_ratio must be between 0.05 and 1.0, got 0.0"),
        ("tail_token_ratio", -0.1, "tail_token_ratio must be between 0.0 and 1.0, got -0.1"),
        ("tail_soft_factor", 0.5, "tail_soft_factor must be between 1.0 and 10.0, got 0.5"),
        ("context_length", 10, "context_length must be between 1000 and 100000000, got 10"),
        ("protect_first_n", -1, "protect_first_n must be between 0 and 1000, got -1"),
        ("min_tail_messages", 0, "min_tail_messages must be between 1 and 1000, got 0"),
        ("prune_min_chars", -5, "prune_min_chars must be at least 0, got -5"),
        ("max_ineffective", 0, "max_ineffective must be between 1 and 1000, got 0"),
    ],
)
def test_out_of_range_values_name_the_field_and_range(
    field: str, value: float, expected: str
) -> None:
    with pytest.raises(ValueError, match="^" + expected.replace(".", r"\.") + "$"):
        CompactionConfig(**{field: value})


def test_config_error_is_a_value_error_and_covers_types_and_choices() -> None:
    with pytest.raises(ConfigError, match="context_length must be a number"):
        CompactionConfig(context_length="big")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="protect_first_n must be a whole number"):
        CompactionConfig(protect_first_n=2.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="orphan_strategy must be 'stub' or 'strip'"):
        CompactionConfig(orphan_strategy="drop")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="counter must be 'tiktoken' or 'rough'"):
        CompactionConfig(counter="exact")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="model must be a non-empty"):
        CompactionConfig(model="  ")
    with pytest.raises(ConfigError, match="summary_min_tokens must not exceed summary_max_tokens"):
        CompactionConfig(summary_min_tokens=9_000)
    with pytest.raises(ConfigError, match="args_keep_chars must not exceed args_max_chars"):
        CompactionConfig(args_keep_chars=600)
    assert issubclass(ConfigError, ValueError)


#: Every numeric field: NaN compares false with both bounds, so a range check alone lets it in.
NUMERIC_FIELDS = [
    name
    for name in CompactionConfig.field_names()
    if isinstance(getattr(CompactionConfig(), name), int | float)
    and not isinstance(getattr(CompactionConfig(), name), bool)  # cache_aware is a switch
]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("field", NUMERIC_FIELDS)
def test_non_finite_numbers_are_rejected_for_every_numeric_field(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"^{field} must be a finite number, got {value!r}$"):
        CompactionConfig(**{field: value})
    with pytest.raises(ConfigError, match="must be a finite number"):
        CompactionConfig().replace(**{field: value})


def test_whole_floats_become_ints() -> None:
    config = CompactionConfig(context_length=32_000.0)  # type: ignore[arg-type]
    assert config.context_length == 32_000
    assert isinstance(config.context_length, int)


def test_replace_validates_and_leaves_the_original() -> None:
    config = CompactionConfig()
    changed = config.replace(protect_first_n=5)
    assert changed.protect_first_n == 5
    assert config.protect_first_n == 3
    with pytest.raises(ConfigError, match="threshold_ratio"):
        config.replace(threshold_ratio=2)


def test_to_dict_from_dict_round_trip_is_json_ready() -> None:
    config = CompactionConfig(context_length=32_000, orphan_strategy="strip")
    data = config.to_dict()
    assert data["threshold_tokens"] == 16_000
    assert data["tail_budget_tokens"] == 3_200
    assert data["tail_soft_ceiling"] == 4_800
    assert "extra" not in data
    assert CompactionConfig.from_dict(json.loads(json.dumps(data))) == config
    with pytest.raises(ConfigError, match="unknown config field\\(s\\): bogus"):
        CompactionConfig.from_dict({"bogus": 1})
    assert CompactionConfig.field_names()[0] == "context_length"
    assert "extra" not in CompactionConfig.field_names()


def test_for_model_reads_the_window_from_litellm() -> None:
    config = CompactionConfig.for_model("gpt-4o")
    assert config.context_length == 128_000
    assert config.model == "gpt-4o"
    assert config.threshold_tokens == 64_000
    overridden = CompactionConfig.for_model("gpt-4o", context_length=50_000)
    assert overridden.context_length == 50_000


def test_for_model_unknown_model_suggests_context_length() -> None:
    with pytest.raises(ConfigError) as info:
        CompactionConfig.for_model("no-such-model-xyz")
    message = str(info.value)
    assert "no-such-model-xyz" in message
    assert "context_length=" in message


def test_budgets_are_not_a_token_short_from_float_error() -> None:
    # 45,000 × 0.7 is 31,499.999… in binary floating point: the threshold is still 31,500.
    config = CompactionConfig(context_length=45_000, threshold_ratio=0.7, tail_token_ratio=0.3)
    assert config.threshold_tokens == 31_500
    assert config.tail_budget_tokens == 9_450
    assert CompactionConfig(summary_ratio=0.7).summary_budget(4_500) == 3_150
