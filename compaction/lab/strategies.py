"""Baseline compaction strategies, to measure the full pipeline against.

What agents do instead of structured compaction, each as a function
`(messages, target_tokens, counter) -> messages`:

- `head_tail`: keep the first few messages and as many of the last as fit (the naive
  `messages[:N] + messages[-M:]`). It deliberately does NOT repair tool pairs: that is the baseline
  being measured, and provider validity shows what it breaks.
- `truncate_outputs`: every tool output cut to its first 500 characters; no further fitting, so
  it may stay over the target — which is the point of comparing it.
- `prune_only`: Phase 1 alone (observation masking), with the budgets derived from the target.

None of them mutates its input; each returns a new list of (shallow-copied) messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from compaction.config import CompactionConfig
from compaction.messages import Message, content_text, with_content
from compaction.tokens import TokenCounter

Strategy = Callable[[list[Message], int, TokenCounter], list[Message]]

HEAD_MESSAGES = 3  # as the pipeline's protect_first_n: the system prompt and the opening exchange
OUTPUT_KEEP_CHARS = 500
TRUNCATION_MARK = "..."


def head_tail(
    messages: Sequence[Message], target_tokens: int, counter: TokenCounter
) -> list[Message]:
    """The first up to 3 messages, then as many of the last messages as fit in `target_tokens`.

    The head is taken greedily (a message that does not fit ends it); the tail is contiguous from
    the end and stops at the first message that does not fit. Tool groups are cut wherever the
    budget falls — no repair, on purpose.
    """
    tokens = [counter.count_message(message) for message in messages]
    if sum(tokens) <= target_tokens:
        return [dict(message) for message in messages]
    used = 0
    head_end = 0
    while head_end < min(HEAD_MESSAGES, len(messages)) and used + tokens[head_end] <= target_tokens:
        used += tokens[head_end]
        head_end += 1
    tail_start = len(messages)
    while tail_start > head_end and used + tokens[tail_start - 1] <= target_tokens:
        tail_start -= 1
        used += tokens[tail_start]
    kept = [*messages[:head_end], *messages[tail_start:]]
    return [dict(message) for message in kept]


def truncate_outputs(
    messages: Sequence[Message],
    target_tokens: int,
    counter: TokenCounter,
    keep_chars: int = OUTPUT_KEEP_CHARS,
) -> list[Message]:
    """Every tool output longer than `keep_chars` cut to its first `keep_chars` chars + "...".

    `target_tokens` and `counter` are unused: this baseline does not fit itself to a target (the
    signature is shared by every strategy). A parts-list output becomes its text, cut.
    """
    del target_tokens, counter
    result: list[Message] = []
    for message in messages:
        if message.get("role") == "tool":
            text = content_text(message)
            if len(text) > keep_chars:
                result.append(with_content(message, text[:keep_chars] + TRUNCATION_MARK))
                continue
        result.append(dict(message))
    return result


def config_for_target(
    target_tokens: int, base: CompactionConfig | None = None, fill_target: bool = True
) -> CompactionConfig:
    """`base` (default config) with a window whose compaction threshold is `target_tokens`.

    Strategies compared at one target should share its budgets; the pipeline's budgets all derive
    from the threshold, so the window is chosen to put the threshold at the target. The summary
    budget is fitted to the target too: head + summary + tail should land near it, the tail taking
    up to 30% (20% budget x 1.5 soft ceiling) and the summary 40%. With `fill_target` the summary
    may use all of its 40% (the baselines use the whole target, so the pipeline may too);
    without it, the config's own clamp applies, only scaled down so small targets are not
    overshot by a fixed 2,000-token minimum.
    """
    base = base if base is not None else CompactionConfig()
    # Every derived budget is clamped to the config's valid range: a 13M-token session asks
    # for a summary budget above the 1M allowed, and the comparison should run, not fail.
    clamp = CompactionConfig.clamp
    context_length = clamp("context_length", math.ceil(target_tokens / base.threshold_ratio))
    cap = clamp("summary_max_tokens", max(500, int(target_tokens * 0.4)))
    summary_min = cap if fill_target else min(base.summary_min_tokens, cap)
    summary_max = max(summary_min, min(base.summary_max_tokens, cap))
    return base.replace(
        context_length=context_length,
        summary_min_tokens=summary_min,
        summary_max_tokens=summary_max,
    )


def prune_only(
    messages: Sequence[Message],
    target_tokens: int,
    counter: TokenCounter,
    config: CompactionConfig | None = None,
) -> list[Message]:
    """Phase 1 alone: dedupe, one-line summaries of old tool outputs, long arguments shrunk."""
    # Imported here: the phases import the whole engine, and the two other baselines need none.
    from compaction.phases.prune import prune

    result = prune(list(messages), config_for_target(target_tokens, config), counter)
    return [dict(message) for message in result.messages]


#: The baselines by the names the CLI and the Evaluate page use.
BASELINES: dict[str, Strategy] = {
    "head-tail": head_tail,
    "truncate-outputs": truncate_outputs,
    "prune-only": prune_only,
}
