"""Compaction Lab's engine: the five-phase context compaction algorithm for LLM agents.

    from compaction import Compactor, CompactionConfig
    compactor = Compactor(CompactionConfig(context_length=128_000))   # one per conversation
    if compactor.should_compress(messages):
        result = compactor.compress(messages)
        messages = result.messages        # ready to send to the provider
        report = result.to_dict()         # what every phase did, and why

This is the whole public API (docs/library.md documents each name). The engine imports on its
own: `import compaction` loads no lab, history, app, chart or LLM module, and litellm is
imported only when an LLM summary is asked for (the `[llm]` extra). The lab (`compaction.lab`),
the run history (`compaction.history`), the app's helpers (`compaction.ui`) and the command line
(`compaction.cli`) are built on it and are imported by their full names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compaction.cache import CompactionCache
from compaction.compactor import Compactor, compress
from compaction.config import CompactionConfig
from compaction.errors import (
    CompactionError,
    ConfigError,
    FormatError,
    InvalidConversationError,
    SummarizationError,
)
from compaction.messages import Message
from compaction.phases.fit import FitReport
from compaction.provider_rules import Problem, validate
from compaction.result import CompactionResult, Fate, OrphanFix, PhaseResult
from compaction.summarizers.base import Summarizer, SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summarizers.factory import make_summarizer
from compaction.summary import Summary, parse_summary, render_summary
from compaction.tokens import TokenCounter, make_counter

if TYPE_CHECKING:
    from compaction.formats import (
        Conversation,
        dump_conversation,
        load_conversation,
        load_conversations,
    )

# The importers are engine (pure Python), but loading every agent's importer is a third of the
# import, which an agent that only compresses never needs: loaded on first use. Only engine
# modules are here (tests/test_architecture.py reads this table).
_ON_FIRST_USE = {
    "Conversation": "compaction.formats",
    "dump_conversation": "compaction.formats",
    "load_conversation": "compaction.formats",
    "load_conversations": "compaction.formats",
}


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'compaction' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_ON_FIRST_USE])


__all__ = [
    "CompactionCache",
    "CompactionConfig",
    "CompactionError",
    "CompactionResult",
    "Compactor",
    "ConfigError",
    "Conversation",
    "ExtractiveSummarizer",
    "Fate",
    "FitReport",
    "FormatError",
    "InvalidConversationError",
    "Message",
    "OrphanFix",
    "PhaseResult",
    "Problem",
    "SummarizationError",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "TokenCounter",
    "compress",
    "dump_conversation",
    "load_conversation",
    "load_conversations",
    "make_counter",
    "make_summarizer",
    "parse_summary",
    "render_summary",
    "validate",
]
