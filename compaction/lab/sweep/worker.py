"""One sweep point, evaluated: compaction, probe recall, provider validity, summary size.

Kept apart from `sweep.py` because this is what runs inside worker processes: the state a worker
needs (the conversations, their probe facts, the summariser) is sent once, through the pool's
initializer, and the token counter is warmed there once per conversation, so that each of the
many points a worker evaluates recounts nothing (the counter caches per content string).

How workers start (`pool_context`): "fork" when the caller is single-threaded (the CLI), which
costs milliseconds and inherits the warmed counter; "spawn" otherwise, because the caller may be
multi-threaded (Streamlit serves every browser session from a thread) and forking while another
thread holds a lock can deadlock the child. A spawned worker would normally re-run the caller's
`__main__` first; under Streamlit `__main__` is the page script being run (Streamlit installs
each script run as `__main__`), so every worker re-ran the Sweep page without a session, and
under AppTest a page that raises broke the pool. The workers' code lives in importable modules
and needs nothing from `__main__`, so a worker starts from a blank one (`_OwnMainProcess`).
A spawned worker still imports the package (about a second), so spawn pays off only for long
sweeps.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext, SpawnContext, SpawnProcess
from typing import Any

from compaction.compactor import compress
from compaction.config import CompactionConfig
from compaction.lab.memory import with_lab_cache
from compaction.lab.peers import Peer, PeerState
from compaction.lab.probes import Fact, recall
from compaction.lab.structural import StructuralFact, mine, structural_recall
from compaction.messages import Message
from compaction.provider_rules import PROVIDERS, errors, is_summary, validate
from compaction.summarizers.base import Summarizer
from compaction.summary.recorded import SessionRecord
from compaction.tokens import make_counter


@dataclass
class Evaluator:
    """Everything a point needs besides its config; built once per process."""

    conversations: list[list[Message]]
    facts: list[list[Fact]]
    summarizer: Summarizer | None
    #: The independent measure's facts (structural.py), mined once per conversation.
    structural_facts: list[list[StructuralFact]] = field(default_factory=list)
    #: Each conversation's marks (which user turns the harness sent), beside its messages.
    marks: list[dict[int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.marks:
            self.marks = [{} for _ in self.conversations]
        if not self.structural_facts:
            self.structural_facts = [
                mine(messages, marks)
                for messages, marks in zip(self.conversations, self.marks, strict=True)
            ]

    def warm(self, counters: Sequence[tuple[str, str]]) -> None:
        """Count every message once with each (counter, model) the grid uses."""
        for kind, model in counters:
            counter = make_counter(kind, model)
            for messages in self.conversations:
                counter.count_messages(messages)

    @with_lab_cache
    def run(
        self, config: CompactionConfig, conversation: int, peer: Peer | None = None
    ) -> dict[str, Any]:
        """One forced compaction of one conversation under `config`, with its measurements;
        with `peer`, that peer's policy at the config's window instead of our pipeline."""
        if peer is not None:
            return self.run_peer(config, conversation, peer)
        messages = self.conversations[conversation]
        record = SessionRecord(marks=tuple(sorted(self.marks[conversation].items())))
        started = time.perf_counter()
        result = compress(messages, config, self.summarizer, recorded=record)
        duration = time.perf_counter() - started
        counter = make_counter(config.counter, config.model)
        summary_tokens = sum(
            counter.count_message(m)
            for m in result.messages
            if isinstance(m, dict) and is_summary(m)
        )
        return self._measures(
            conversation, result.messages, result.tokens_before, result.tokens_after, duration
        ) | {
            "summary_tokens": summary_tokens,
            "skipped": result.skipped,
            "fallback_used": result.fallback_used,
        }

    @with_lab_cache
    def run_peer(self, config: CompactionConfig, conversation: int, peer: Peer) -> dict[str, Any]:
        """One forced application of `peer`'s policy (its summary is the inserted messages)."""
        from compaction.summarizers.extractive import ExtractiveSummarizer

        messages = self.conversations[conversation]
        counter = make_counter(config.counter, config.model)
        started = time.perf_counter()
        run = peer.compact(
            messages,
            config.context_length,
            counter,
            self.summarizer or ExtractiveSummarizer(),
            PeerState(marks=self.marks[conversation]),
        )
        duration = time.perf_counter() - started
        inserted = [
            m for m, origin in zip(run.messages, run.origins, strict=True) if origin is None
        ]
        return self._measures(
            conversation, run.messages, run.tokens_before, run.tokens_after, duration
        ) | {
            "summary_tokens": counter.count_messages(inserted),
            "skipped": not run.compacted,
            "fallback_used": "extractive" if run.fallback else None,
        }

    def _measures(
        self,
        conversation: int,
        output: list[Message],
        tokens_before: int,
        tokens_after: int,
        duration: float,
    ) -> dict[str, Any]:
        kept = recall(self.facts[conversation], output)
        structural = structural_recall(self.structural_facts[conversation], output)
        provider_errors = {
            provider: len(errors(validate(output, provider))) for provider in PROVIDERS
        }
        savings = (tokens_before - tokens_after) / tokens_before * 100 if tokens_before else 0.0
        return {
            "conversation": conversation,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "savings_pct": round(savings, 4),
            "messages_after": len(output),
            "recall_found": kept.found,
            "recall_total": kept.total,
            "structural_found": sum(structural.found.values()),
            "structural_total": sum(structural.total.values()),
            "categories": {
                name: [bucket.found, bucket.total] for name, bucket in kept.categories.items()
            },
            "openai_errors": provider_errors["openai"],
            "anthropic_errors": provider_errors["anthropic"],
            "duration_s": round(duration, 6),
        }

    @with_lab_cache
    def run_point(self, config: CompactionConfig, peer: Peer | None = None) -> list[dict[str, Any]]:
        return [self.run(config, index, peer) for index in range(len(self.conversations))]


# -- worker processes ---------------------------------------------------------------------------


def start_method() -> str:
    """ "fork" for a single-threaded caller where the platform has it, else "spawn"."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return "fork"
    return "spawn"


_MAIN_SWAP = threading.Lock()


class _OwnMainProcess(SpawnProcess):
    """A spawned process that does not re-run the parent's `__main__`.

    multiprocessing tells the child which main module to re-run from `sys.modules["__main__"]`
    at the moment the process is launched (its `__spec__` name, else its `__file__`). For that
    instant only, the parent's entry is a blank module with neither, so the child keeps its own.
    """

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with _MAIN_SWAP:
            parent_main = sys.modules.get("__main__")
            blank = types.ModuleType("__main__")
            sys.modules["__main__"] = blank
            try:
                return SpawnProcess._Popen(process_obj)
            finally:
                # Put it back unless another thread (a Streamlit script run) replaced it since.
                if sys.modules.get("__main__") is blank and parent_main is not None:
                    sys.modules["__main__"] = parent_main


class _OwnMainSpawnContext(SpawnContext):
    Process = _OwnMainProcess


def pool_context() -> BaseContext:
    """The multiprocessing context for a worker pool (see the module docstring): fork for a
    single-threaded caller, else spawn with workers that start from a blank `__main__`."""
    if start_method() == "fork":
        return multiprocessing.get_context("fork")
    return _OwnMainSpawnContext()


_WORKER: Evaluator | None = None


def init_worker(evaluator: Evaluator, counters: list[tuple[str, str]]) -> None:
    """Pool initializer: keep the evaluator for this process and warm its token counters."""
    global _WORKER
    evaluator.warm(counters)
    _WORKER = evaluator


def run_in_worker(
    index: int, config: CompactionConfig, peer: Peer | None = None
) -> tuple[int, list[dict[str, Any]]]:
    if _WORKER is None:  # only reachable if the pool was built without init_worker
        raise RuntimeError("sweep worker used before its initializer ran")
    return index, _WORKER.run_point(config, peer)
