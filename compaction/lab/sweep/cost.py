"""What an LLM-summarised sweep would spend, known before a single request is sent.

A sweep with an LLM summariser makes one summary call per point and conversation; a 10×10 grid
over five sessions is 500 paid calls. `estimate_cost` answers "how many calls, about how many
tokens, about how much" offline: it runs the pipeline with the static summariser (which calls
nothing) to learn each point's middle size (≈ the prompt) and summary budget (≈ the completion),
and prices them with litellm's bundled cost map. The caller shows this and asks; nothing is sent
until the caller runs the sweep itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.memory import with_lab_cache
from compaction.lab.sweep.grid import grid_configs, normalise_grid, parse_grid
from compaction.litellm_loader import load_litellm
from compaction.summarizers.base import StaticSummarizer
from compaction.tokens import make_counter


@dataclass(frozen=True)
class CostEstimate:
    """The calls an LLM sweep would make and litellm's price for them (None: model unpriced)."""

    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None

    def describe(self) -> str:
        price = (
            f"about ${self.cost_usd:,.4f}"
            if self.cost_usd is not None
            else "cost unknown (litellm has no price for this model)"
        )
        return (
            f"{self.calls:,} summary call(s) to {self.model}: ~{self.prompt_tokens:,} prompt + "
            f"~{self.completion_tokens:,} completion tokens, {price}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """litellm's offline price in USD, or None for a model its cost map does not know."""
    litellm = load_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # litellm raises plain Exceptions for unknown models: "not known", not 0
        return None
    return float(prompt_cost) + float(completion_cost)


def counter(config: CompactionConfig) -> Any:
    return make_counter(config.counter, config.model)


@with_lab_cache
def estimate_cost(
    conversations: Sequence[Any],
    grid: Mapping[str, Sequence[Any]] | Sequence[str],
    model: str,
    base_config: CompactionConfig | None = None,
) -> CostEstimate:
    """The summary calls and price of sweeping `grid` over `conversations` with `model`.

    Sends nothing: a point that would have nothing to summarise counts no call.
    """
    checked = normalise_grid(grid) if isinstance(grid, Mapping) else parse_grid(grid)
    configs = grid_configs(checked, base_config)
    lists = [c if isinstance(c, list) else c.messages for c in conversations]
    calls = prompt_tokens = completion_tokens = 0
    static = StaticSummarizer()
    for _, config in configs:
        for messages in lists:
            result = Compactor(config, static).compress(messages, force=True)
            if result.skipped or len(result.phases) < 5:
                continue  # nothing to summarise at this point: no call would be made
            details = result.phase("summarize").details
            calls += 1
            # The prompt the LLM would get is built even for the static summariser: count it
            # (the middle plus the instructions); the middle alone when it is not there.
            prompt = details.get("prompt")
            prompt_tokens += (
                counter(config).count_text(prompt)
                if isinstance(prompt, str) and prompt
                else int(details.get("middle_tokens") or 0)
            )
            completion_tokens += int(details.get("budget_tokens") or 0)
    cost = price(model, prompt_tokens, completion_tokens) if calls else 0.0
    return CostEstimate(model, calls, prompt_tokens, completion_tokens, cost)
