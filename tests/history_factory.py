"""Hand-built CompactionResults for history tests: real types and to_dict, no Compactor."""

from __future__ import annotations

from typing import Any

from compaction.config import CompactionConfig
from compaction.messages import Message
from compaction.result import PHASE_NAMES, CompactionResult, Fate, PhaseResult
from compaction.summary import SECTION_NAMES, Summary


def conversation(topic: str = "the Stripe webhook", turns: int = 4) -> list[Message]:
    """A small conversation whose words depend on `topic` (so different topics hash apart)."""
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Turn {turn}: please fix {topic}."})
        messages.append({"role": "assistant", "content": f"Looking at {topic}, step {turn}."})
    return messages


def make_result(
    messages: list[Message],
    summary_words: str = "Stripe webhook signature error in handler.py",
    config: CompactionConfig | None = None,
    details: dict[str, Any] | None = None,
    fallback_used: str | None = None,
) -> CompactionResult:
    """A result that folds the middle of `messages` into a summary mentioning `summary_words`."""
    cfg = config or CompactionConfig(tail_token_ratio=0.3)
    head, tail = 1, max(len(messages) - 2, 1)
    summary = Summary({name: f"{name}: {summary_words}" for name in SECTION_NAMES})
    final: list[Message] = [
        messages[0],
        {"role": "user", "content": summary.text},
        *messages[tail:],
    ]
    fates = {
        i: (Fate.FOLDED_INTO_SUMMARY if head <= i < tail else Fate.KEPT)
        for i in range(len(messages))
    }
    phases = []
    for position, name in enumerate(PHASE_NAMES):
        phase_details: dict[str, Any] = {}
        if name == "summarize":
            phase_details = {"prompt_tokens": 1200, "completion_tokens": 300, "cost": 0.0042}
            phase_details["budget_tokens"] = 2000
            phase_details.update(details or {})
        if name == "boundaries":
            phase_details = {"head_end": head, "tail_start": tail, "middle_tokens": 900}
        phases.append(
            PhaseResult(
                name=name,
                messages=final if position >= 3 else list(messages),
                origins=[0, None, *range(tail, len(messages))]
                if position >= 3
                else list(range(len(messages))),
                tokens_before=1000,
                tokens_after=400 if position >= 3 else 1000,
                fates=fates if name == "summarize" else {},
                details=phase_details,
                duration_s=0.01 * (position + 1),
            )
        )
    return CompactionResult(
        messages=final,
        phases=phases,
        tokens_before=1000,
        tokens_after=400,
        summary=summary,
        fates=fates,
        fallback_used=fallback_used,
        config=cfg.to_dict(),
        summarizer="llm",
        focus="webhooks",
    )
