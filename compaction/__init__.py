"""Compaction Lab: the five-phase context compaction algorithm for LLM agents, as a library.

    from compaction import Compactor, CompactionConfig
    result = Compactor(CompactionConfig(context_length=128_000)).compress(messages)
    result.messages      # ready to send to the provider
    result.to_dict()     # what every phase did, for a report

The library never imports Streamlit, and imports litellm only when a model is actually called.
"""

from compaction.compactor import Compactor, compress
from compaction.config import CompactionConfig
from compaction.drift import drift
from compaction.errors import (
    CompactionError,
    ConfigError,
    FormatError,
    HistoryError,
    InvalidConversationError,
    SummarizationError,
    SummarizerUnavailable,
    TokenizerError,
    UnknownFormatError,
)
from compaction.evaluate import Evaluation, evaluate
from compaction.judge import judge
from compaction.messages import Message, validate_messages
from compaction.result import CompactionResult, OrphanFix, PhaseResult
from compaction.summarizers.base import StaticSummarizer, Summarizer, SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary import (
    SECTION_NAMES,
    SUMMARY_PREFIX,
    SYSTEM_NOTE,
    Summary,
    parse_summary,
    render_summary,
)
from compaction.timeline import Timeline, simulate
from compaction.tokens import RoughCounter, TiktokenCounter, TokenCounter, make_counter

__all__ = [
    "SECTION_NAMES",
    "SUMMARY_PREFIX",
    "SYSTEM_NOTE",
    "CompactionConfig",
    "CompactionError",
    "CompactionResult",
    "Compactor",
    "ConfigError",
    "Evaluation",
    "ExtractiveSummarizer",
    "FormatError",
    "HistoryError",
    "InvalidConversationError",
    "Message",
    "OrphanFix",
    "PhaseResult",
    "RoughCounter",
    "StaticSummarizer",
    "SummarizationError",
    "Summarizer",
    "SummarizerUnavailable",
    "Summary",
    "SummaryRequest",
    "TiktokenCounter",
    "Timeline",
    "TokenCounter",
    "TokenizerError",
    "UnknownFormatError",
    "compress",
    "drift",
    "evaluate",
    "judge",
    "make_counter",
    "parse_summary",
    "render_summary",
    "simulate",
    "validate_messages",
]
