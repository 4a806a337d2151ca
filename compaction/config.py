"""CompactionConfig: every budget of the algorithm in one frozen, validated value.

The derived budgets (threshold, tail, soft ceiling, summary) are properties rather than stored
fields so that they can never disagree with the ratios they come from.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from compaction.errors import ConfigError
from compaction.litellm_loader import load_litellm
from compaction.phases.pins import Pins

OrphanStrategy = Literal["stub", "strip"]
CounterName = Literal["tiktoken", "rough"]

#: (field, lowest allowed, highest allowed) for the numeric fields; None means unbounded.
_NUMERIC_RANGES: dict[str, tuple[float, float | None]] = {
    "context_length": (1_000, 100_000_000),
    "threshold_ratio": (0.05, 1.0),
    "protect_first_n": (0, 1_000),
    "tail_token_ratio": (0.0, 1.0),
    "tail_soft_factor": (1.0, 10.0),
    "min_tail_messages": (1, 1_000),
    "summary_ratio": (0.01, 1.0),
    "summary_min_tokens": (50, 1_000_000),
    "summary_max_tokens": (50, 1_000_000),
    "prune_min_chars": (0, None),
    "args_max_chars": (10, None),
    "args_keep_chars": (1, None),
    "ineffective_savings_pct": (0.0, 100.0),
    "max_ineffective": (1, 1_000),
}

_INT_FIELDS = {
    "context_length",
    "protect_first_n",
    "min_tail_messages",
    "summary_min_tokens",
    "summary_max_tokens",
    "prune_min_chars",
    "args_max_chars",
    "args_keep_chars",
    "max_ineffective",
}


#: The share of the tail budget a cache-aware compaction keeps. Measured with the cache model on
#: the corpus sessions that compact (docs/cost.md): half the tail saves 9.0% of the dollars on a
#: Claude Code session and 1.7% on a Codex one; keeping earlier summaries in the cached head
#: instead cost 0.7-1.9% more (each is carried, and read, at every later call).
CACHE_AWARE_TAIL = 0.5


def whole_tokens(product: float) -> int:
    """The whole tokens in a budget product, forgiving binary float error: 45,000 × 0.7 is
    31,499.999… in floating point, and a 70% threshold of 45,000 tokens is 31,500."""
    return int(product + 1e-6)


@dataclass(frozen=True)
class CompactionConfig:
    """The budgets of ALGORITHM.md, with its defaults (a 128K window, compaction at 50%)."""

    context_length: int = 128_000
    threshold_ratio: float = 0.50
    protect_first_n: int = 3
    tail_token_ratio: float = 0.20
    tail_soft_factor: float = 1.5
    min_tail_messages: int = 3
    summary_ratio: float = 0.20
    summary_min_tokens: int = 2_000
    summary_max_tokens: int = 8_000
    prune_min_chars: int = 200
    args_max_chars: int = 500
    args_keep_chars: int = 200
    ineffective_savings_pct: float = 10.0
    max_ineffective: int = 2
    orphan_strategy: OrphanStrategy = "stub"
    model: str = "gpt-4o"
    counter: CounterName = "tiktoken"
    #: Compact for a provider's prompt cache: keep a smaller tail (CACHE_AWARE_TAIL of the
    #: budget). After a compaction only the head is still a cached prefix; the kept tail is
    #: written to the cache again at the write premium and then read at every later call, so
    #: keeping less of it costs less (measured by lab/cost's cache model: docs/cost.md).
    cache_aware: bool = False
    #: What compaction keeps verbatim whatever the budgets say (phases/pins.py): message
    #: numbers, roles, tools, text patterns, the user's messages, instruction files. A mapping
    #: of those rules is accepted and turned into Pins.
    pins: Pins = field(default_factory=Pins)
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pins", Pins.of(self.pins))
        for name, (low, high) in _NUMERIC_RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{name} must be a number, got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                # NaN compares false with every bound, so the range check below would let it
                # through, and int(nan) fails deep inside a phase with a traceback.
                raise ConfigError(f"{name} must be a finite number, got {value!r}")
            if name in _INT_FIELDS and not isinstance(value, int):
                if float(value).is_integer():
                    object.__setattr__(self, name, int(value))
                    value = int(value)
                else:
                    raise ConfigError(f"{name} must be a whole number, got {value!r}")
            upper = "" if high is None else f" and {high}"
            allowed = f"between {low}{upper}" if high is not None else f"at least {low}"
            if value < low or (high is not None and value > high):
                raise ConfigError(f"{name} must be {allowed}, got {value!r}")
        if self.summary_min_tokens > self.summary_max_tokens:
            raise ConfigError(
                "summary_min_tokens must not exceed summary_max_tokens "
                f"(got {self.summary_min_tokens} > {self.summary_max_tokens})"
            )
        if self.args_keep_chars > self.args_max_chars:
            raise ConfigError(
                "args_keep_chars must not exceed args_max_chars "
                f"(got {self.args_keep_chars} > {self.args_max_chars})"
            )
        if self.orphan_strategy not in ("stub", "strip"):
            raise ConfigError(
                f"orphan_strategy must be 'stub' or 'strip', got {self.orphan_strategy!r}"
            )
        if self.counter not in ("tiktoken", "rough"):
            raise ConfigError(f"counter must be 'tiktoken' or 'rough', got {self.counter!r}")
        if not isinstance(self.cache_aware, bool):
            raise ConfigError(f"cache_aware must be true or false, got {self.cache_aware!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError("model must be a non-empty model name such as 'gpt-4o'")

    # -- derived budgets -------------------------------------------------------------------

    @property
    def threshold_tokens(self) -> int:
        """Compaction triggers when the conversation reaches this many tokens."""
        return whole_tokens(self.context_length * self.threshold_ratio)

    @property
    def tail_budget_tokens(self) -> int:
        """The tail's token budget: a share of the threshold, not a message count (half of it
        when `cache_aware`: a kept tail is not cached after a compaction, it is written again)."""
        share = self.tail_token_ratio * (CACHE_AWARE_TAIL if self.cache_aware else 1.0)
        return whole_tokens(self.threshold_tokens * share)

    @property
    def tail_soft_ceiling(self) -> int:
        """How far the tail may run past its budget before the backward walk stops."""
        return whole_tokens(self.tail_budget_tokens * self.tail_soft_factor)

    def summary_budget(self, middle_tokens: int) -> int:
        """The summary's token budget for a middle of `middle_tokens`, clamped to [min, max]."""
        return max(
            self.summary_min_tokens,
            min(whole_tokens(middle_tokens * self.summary_ratio), self.summary_max_tokens),
        )

    # -- construction helpers --------------------------------------------------------------

    def replace(self, **changes: Any) -> CompactionConfig:
        """A copy with `changes` applied (validated like a new config)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (derived budgets included, for reports; `pins` only
        when some are set)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        # Pins only when there are any: a report (and the history's run key) of a compaction
        # without pins reads as it always did.
        pins = data.pop("pins")
        if pins:
            data["pins"] = pins.to_dict()
        data["threshold_tokens"] = self.threshold_tokens
        data["tail_budget_tokens"] = self.tail_budget_tokens
        data["tail_soft_ceiling"] = self.tail_soft_ceiling
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompactionConfig:
        """Build from `to_dict()` output or any mapping of field names (derived keys ignored)."""
        names = {f.name for f in fields(cls) if f.name != "extra"}
        unknown = (
            set(data) - names - {"threshold_tokens", "tail_budget_tokens", "tail_soft_ceiling"}
        )
        if unknown:
            raise ConfigError(f"unknown config field(s): {', '.join(sorted(unknown))}")
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def clamp(cls, name: str, value: int) -> int:
        """`value` moved into the valid range of the whole-number field `name`: for budgets a
        caller derives (from a session's size, say), which must not fail validation because
        the session is unusually large or small."""
        low, high = _NUMERIC_RANGES[name]
        value = max(value, math.ceil(low))
        return value if high is None else min(value, math.floor(high))

    @classmethod
    def field_names(cls) -> list[str]:
        """The user-settable budgets and switches, in declaration order: one value each (a
        sweep axis, a sidebar widget, a `--set` flag). `pins`, a rule set, is set apart."""
        return [f.name for f in fields(cls) if f.name not in ("extra", "pins")]

    @classmethod
    def for_model(cls, model: str, **overrides: Any) -> CompactionConfig:
        """A config whose `context_length` is the model's window from litellm's model map.

        litellm is imported here, lazily, with its bundled (offline) cost map.
        """
        window = model_context_length(model)
        overrides.setdefault("context_length", window)
        return cls(model=model, **overrides)


def model_context_length(model: str) -> int:
    """The input window of `model` from litellm's bundled model map, or a ConfigError."""
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception as exc:  # litellm raises a plain Exception subclass for unknown models
        raise ConfigError(
            f"unknown model {model!r}: litellm's model map has no context window for it; "
            "pass context_length=... explicitly"
        ) from exc
    window = info.get("max_input_tokens") or info.get("max_tokens")
    if not isinstance(window, int) or window <= 0:
        raise ConfigError(
            f"litellm's model map has no context window for {model!r}; "
            "pass context_length=... explicitly"
        )
    return window
