"""Compaction Lab: the five-phase context compaction algorithm for LLM agents, as a library.

    from compaction import Compactor, CompactionConfig
    result = Compactor(CompactionConfig(context_length=128_000)).compress(messages)
    result.messages      # ready to send to the provider
    result.to_dict()     # what every phase did, for a report

The library never imports Streamlit, and imports litellm only when a model is actually called.
The engine imports on its own: the lab (evaluate, judge, drift, simulate), the run history and
the importers (load_conversation...) are re-exported here but loaded on first use, so `import
compaction` inside an agent pays only for compressing (the history alone pulls in sqlite-utils,
pandas and pyarrow).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from compaction.compactor import Compactor, compress
from compaction.config import CompactionConfig
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
from compaction.input.checks import validate_messages
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
from compaction.tokens import RoughCounter, TiktokenCounter, TokenCounter, make_counter

# Eager, though only the validate command needs it: the function shares its name with the
# subpackage, and a lazy `validate` would be shadowed by the module once anything imported
# compaction.validate.rules first.
from compaction.validate import Problem, validate

if TYPE_CHECKING:
    from compaction.formats import (
        Conversation,
        detect_format,
        dump_conversation,
        load_conversation,
        load_conversations,
    )
    from compaction.history import History
    from compaction.lab.drift import drift
    from compaction.lab.evaluate import Evaluation, evaluate
    from compaction.lab.judge import judge
    from compaction.lab.timeline import Timeline, simulate

# Public names an agent that only compresses never needs: name -> module, imported on first
# access. The lab and the history live outside the engine; the importers (formats) are engine, but
# loading every agent's importer was a third of the import.
_LAZY = {
    "Conversation": "compaction.formats",
    "detect_format": "compaction.formats",
    "dump_conversation": "compaction.formats",
    "load_conversation": "compaction.formats",
    "load_conversations": "compaction.formats",
    "History": "compaction.history",
    "drift": "compaction.lab.drift",
    "Evaluation": "compaction.lab.evaluate",
    "evaluate": "compaction.lab.evaluate",
    "judge": "compaction.lab.judge",
    "Timeline": "compaction.lab.timeline",
    "simulate": "compaction.lab.timeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'compaction' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


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
