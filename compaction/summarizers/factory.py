"""Build a summariser from the names the CLI and the app use ("extractive", "static", "llm").

Why a factory: the CLI, the app and tests all turn user settings into a summariser; doing it in one
place keeps the validation (an LLM needs a model) and its error messages the same everywhere, and
keeps litellm unimported unless an LLM summariser is actually used.
"""

from __future__ import annotations

from compaction.errors import ConfigError
from compaction.summarizers.base import StaticSummarizer, Summarizer
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summarizers.llm import FALLBACKS, LLMSummarizer

SUMMARIZER_KINDS = ("extractive", "static", "llm")


def make_summarizer(
    kind: str,
    *,
    model: str | None = None,
    summary_model: str | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    fallback: str = "static",
    timeout: float = 120,
) -> Summarizer:
    """The summariser called `kind`; raises ConfigError naming the bad setting."""
    name = (kind or "").strip().lower()
    if name not in SUMMARIZER_KINDS:
        raise ConfigError(
            f"unknown summarizer {kind!r}: choose one of {', '.join(SUMMARIZER_KINDS)}."
        )
    if fallback not in FALLBACKS:
        raise ConfigError(f"unknown fallback {fallback!r}: choose one of {', '.join(FALLBACKS)}.")
    if name == "extractive":
        return ExtractiveSummarizer()
    if name == "static":
        return StaticSummarizer()
    if not model or not model.strip():
        raise ConfigError(
            "the llm summarizer needs a model: pass --model (for example gpt-4o-mini, "
            "anthropic/claude-3-5-haiku-latest, or openai/NAME with --api-base URL)."
        )
    return LLMSummarizer(
        model,
        summary_model=summary_model,
        api_base=api_base,
        api_key=api_key,
        timeout=timeout,
        fallback=fallback,
    )
