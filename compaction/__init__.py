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
from compaction.formats import (
    Conversation,
    detect_format,
    dump_conversation,
    load_conversation,
    load_conversations,
)
from compaction.history import History
from compaction.judge import judge
from compaction.message_input import validate_messages
from compaction.messages import Message
from compaction.phases.fit import FitCut, FitReport
from compaction.result import CompactionResult, OrphanFix, PhaseResult
from compaction.summarizers.base import StaticSummarizer, Summarizer, SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summarizers.factory import make_summarizer
from compaction.summarizers.llm import LLMSummarizer
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
from compaction.validate import Problem, validate

__all__ = [
    "SECTION_NAMES",
    "SUMMARY_PREFIX",
    "SYSTEM_NOTE",
    "CompactionConfig",
    "CompactionError",
    "CompactionResult",
    "Compactor",
    "ConfigError",
    "Conversation",
    "Evaluation",
    "ExtractiveSummarizer",
    "FitCut",
    "FitReport",
    "FormatError",
    "History",
    "HistoryError",
    "InvalidConversationError",
    "LLMSummarizer",
    "Message",
    "OrphanFix",
    "PhaseResult",
    "Problem",
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
    "detect_format",
    "drift",
    "dump_conversation",
    "evaluate",
    "judge",
    "load_conversation",
    "load_conversations",
    "make_counter",
    "make_summarizer",
    "parse_summary",
    "render_summary",
    "simulate",
    "validate",
    "validate_messages",
]
