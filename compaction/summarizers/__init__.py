"""Summarisers turn the middle of a conversation into the 13-section summary.

`ExtractiveSummarizer` (offline, deterministic) is the default; `StaticSummarizer` always yields the
static marker; `LLMSummarizer` (in `llm.py`) calls any model through litellm, imported lazily.
"""

from compaction.summarizers.base import (
    OnToken,
    StaticSummarizer,
    Summarizer,
    SummaryRequest,
)
from compaction.summarizers.extractive import ExtractiveSummarizer

__all__ = [
    "ExtractiveSummarizer",
    "OnToken",
    "StaticSummarizer",
    "Summarizer",
    "SummaryRequest",
]
