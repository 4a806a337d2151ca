"""Why a compaction was skipped, which budget decided it, and the change that would compact.

"Compaction skipped: nothing to compress" is the default on most real uploads (the tail's token
allowance covers everything after the head), and on its own it leaves the user guessing which of
a dozen sliders to move. The advice here names the budget with its numbers and tries the
boundary walk itself with smaller windows and tail ratios on the conversation's real (pruned)
token counts, so the suggested change is one that does leave a middle to summarise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.phases.boundaries import find_boundaries
from compaction.phases.regions import RegionPlan

#: Windows people actually configure, largest first: a suggestion reads "32K", not "31,744".
NICE_WINDOWS = (
    1_000_000, 400_000, 272_000, 200_000, 128_000, 100_000, 64_000, 48_000, 32_000,
    24_000, 16_000, 12_000, 8_000, 6_000, 4_000, 2_000,
)  # fmt: skip
RATIO_STEP = 0.05  # the sidebar sliders' step
LOWEST_RATIO = 0.05


@dataclass(frozen=True)
class SkipAdvice:
    """Which budget decided the skip (`cause`) and the changes that would compact (`changes`)."""

    cause: str
    changes: tuple[str, ...]
    #: Each alternative as a setting and its value ({"context_length": 32000, ...}).
    alternatives: tuple[tuple[str, Any], ...] = ()

    def sentence(self) -> str:
        """One line: the cause, then "To compact, lower … or …" when a change would help."""
        if not self.changes:
            return self.cause
        return f"{self.cause} To compact, {' or '.join(self.changes)}."


def window_label(tokens: int) -> str:
    """128000 → "128K", 1000000 → "1M", 31500 → "31,500"."""
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000}M"
    if tokens % 1_000 == 0:
        return f"{tokens // 1_000}K"
    return f"{tokens:,}"


def _ratio_label(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _leaves_middle(plan: RegionPlan, config: CompactionConfig) -> bool:
    bounds = find_boundaries(plan.messages, plan.pruned_tokens, config)
    return not bounds.middle_is_empty


def _try(config: CompactionConfig, **changes: object) -> CompactionConfig | None:
    try:
        return config.replace(**changes)
    except (ConfigError, TypeError, ValueError):
        return None


def _smaller_window(plan: RegionPlan, config: CompactionConfig) -> int | None:
    for window in NICE_WINDOWS:
        if window >= config.context_length:
            continue
        candidate = _try(config, context_length=window)
        if candidate is not None and _leaves_middle(plan, candidate):
            return window
    return None


def _smaller_tail_ratio(plan: RegionPlan, config: CompactionConfig) -> float | None:
    steps = round(config.tail_token_ratio / RATIO_STEP)
    for step in range(steps - 1, 0, -1):
        ratio = round(step * RATIO_STEP, 2)
        if ratio < LOWEST_RATIO or ratio >= config.tail_token_ratio:
            continue
        candidate = _try(config, tail_token_ratio=ratio)
        if candidate is not None and _leaves_middle(plan, candidate):
            return ratio
    return None


def _fewer_head_messages(plan: RegionPlan, config: CompactionConfig) -> int | None:
    for n in range(config.protect_first_n - 1, -1, -1):
        candidate = _try(config, protect_first_n=n)
        if candidate is not None and _leaves_middle(plan, candidate):
            return n
    return None


def nothing_to_compress(plan: RegionPlan) -> SkipAdvice:
    """The head and the tail left no middle: say which of them took it, and what would not."""
    config = plan.config
    bounds = plan.boundaries
    n = len(plan.messages)
    after_head = sum(plan.pruned_tokens[bounds.head_end :])
    changes: list[str] = []
    if bounds.head_end >= n:
        cause = (
            f"The protected head (the first {config.protect_first_n} messages, whole tool "
            f"groups) holds all {n:,} messages."
        )
        if (head := _fewer_head_messages(plan, config)) is not None:
            changes.append(f"protect only the first {head} message(s)")
            return SkipAdvice(cause, tuple(changes), (("protect_first_n", head),))
        return SkipAdvice(cause, ())
    if n - bounds.head_end <= config.min_tail_messages:
        cause = (
            f"The tail keeps at least {config.min_tail_messages} messages, and only "
            f"{n - bounds.head_end:,} follow the head."
        )
        return SkipAdvice(cause, ("lower “Minimum tail messages”",))  # nothing else helps
    if bounds.raw_walk_stop > bounds.head_end and bounds.anchor == "moved":
        cause = (
            f"The tail budget stopped after the head, but the latest request (#{bounds.last_user})"
            " sits right after the head, and it is always kept verbatim, so the tail reaches "
            "back to the head."
        )
    else:
        cause = (
            f"The tail allowance (soft ceiling {config.tail_soft_ceiling:,} tokens = "
            f"{window_label(config.context_length)} window × threshold "
            f"{_ratio_label(config.threshold_ratio)} × tail ratio "
            f"{_ratio_label(config.tail_token_ratio)} × soft factor "
            f"{_ratio_label(config.tail_soft_factor)}) covers all {after_head:,} tokens after "
            "the head (after Phase 1), so nothing is left to summarise."
        )
    alternatives: list[tuple[str, Any]] = []
    if (window := _smaller_window(plan, config)) is not None:
        changes.append(f"lower the window to {window_label(window)}")
        alternatives.append(("context_length", window))
    if (ratio := _smaller_tail_ratio(plan, config)) is not None:
        changes.append(f"the tail ratio to {_ratio_label(ratio)}")
        alternatives.append(("tail_token_ratio", ratio))
    if changes and not changes[0].startswith("lower"):
        changes[0] = f"lower {changes[0]}"
    return SkipAdvice(cause, tuple(changes), tuple(alternatives))


def below_threshold(plan: RegionPlan) -> SkipAdvice:
    """Automatic compaction would not trigger: the threshold decided, and what would reach it."""
    config = plan.config
    total = plan.total_tokens
    cause = (
        f"The conversation's {total:,} tokens are below the threshold of "
        f"{config.threshold_tokens:,} ({config.threshold_ratio:.0%} of the "
        f"{config.context_length:,}-token window)."
    )
    changes: list[str] = []
    alternatives: list[tuple[str, Any]] = []
    window = next(
        (
            w
            for w in NICE_WINDOWS
            if w < config.context_length
            and (c := _try(config, context_length=w)) is not None
            and c.threshold_tokens <= total
        ),
        None,
    )
    if window is not None:
        changes.append(f"lower the window to {window_label(window)}")
        alternatives.append(("context_length", window))
    steps = int(total / config.context_length / RATIO_STEP)
    ratio = round(steps * RATIO_STEP, 2)
    if LOWEST_RATIO <= ratio < config.threshold_ratio:
        changes.append(f"the threshold ratio to {_ratio_label(ratio)}")
        alternatives.append(("threshold_ratio", ratio))
    if changes and not changes[0].startswith("lower"):
        changes[0] = f"lower {changes[0]}"
    changes.append("turn on “Compact below the threshold”")
    return SkipAdvice(cause, tuple(changes), tuple(alternatives))


def skip_advice(plan: RegionPlan, skip_reason: str | None) -> SkipAdvice | None:
    """The advice for a skipped run's reason; None for a reason the budgets do not explain
    (anti-thrash: the Cleanup phase already suggests a new session)."""
    reason = skip_reason or ""
    if reason.startswith("below the threshold"):
        return below_threshold(plan)
    if reason.startswith("nothing to compress"):
        return nothing_to_compress(plan)
    return None
