"""Cached computations behind the pages: token counts, compaction runs, regions, history saves.

Every cache is keyed by the conversation's content hash plus the settings, and receives the
messages as an underscore-prefixed argument that Streamlit does not hash (hashing a 5,000-message
list costs ~70 ms per call). So changing a parameter reruns the cheap phases instantly, and an LLM
summary is only ever produced by an explicit click (`run_llm`), never by a cache miss.
"""

from __future__ import annotations

import json
import os
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import streamlit as st

from compaction.cache import CompactionCache
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.errors import CompactionError, HistoryError
from compaction.litellm_loader import load_litellm
from compaction.messages import Message
from compaction.phases.regions import RegionPlan, plan_regions
from compaction.result import CompactionResult
from compaction.summarizers.base import OnToken, StaticSummarizer
from compaction.summarizers.factory import make_summarizer
from compaction.summary.recorded import SessionRecord
from compaction.tokens import make_counter
from compaction.ui.params import Settings
from compaction.ui.state import Loaded
from compaction.ui.stepper import SAVE_NEXT_KEY

LLM_RESULTS_KEY = "llm_results"  # run key -> CompactionResult produced by an explicit LLM click
SAVED_RUNS_KEY = "saved_runs"  # run key -> the history write (a Future of the run id)


#: The app's memory of content: twice an engine cache's default, shared by every browser session
#: of this server (the same samples and sessions come back in each).
APP_CACHE_BYTES = 128 * 1024 * 1024


@st.cache_resource(show_spinner=False)
def app_cache() -> CompactionCache:
    """One bounded CompactionCache for the whole app (ui/frame.py makes it current)."""
    return CompactionCache(APP_CACHE_BYTES)


@st.cache_data(max_entries=32, show_spinner=False)
def token_counts(
    content_hash: str, counter: str, model: str, _messages: list[Message]
) -> list[int]:
    """Per-message token counts, cached per conversation and tokenizer."""
    count = make_counter(counter, model, app_cache()).count_message
    return [count(message) for message in _messages]


@st.cache_resource(max_entries=24, show_spinner=False)
def _cached_run(
    run_key: str,
    _messages: list[Message],
    _config: CompactionConfig,
    _summarizer: str,
    _focus: str | None,
    _force: bool,
    _recorded: SessionRecord | None = None,
) -> CompactionResult:
    # cache_resource, not cache_data: results are only read, and copying (pickling) five phases
    # of a 5,000-message conversation on every rerun would cost more than the phases themselves.
    summarizer = StaticSummarizer() if _summarizer == "static" else make_summarizer(_summarizer)
    return Compactor(_config, summarizer, cache=app_cache()).compress(
        _messages, focus=_focus, force=_force, recorded=_recorded
    )


def config_key(config: CompactionConfig) -> str:
    return json.dumps(config.to_dict(), sort_keys=True)


def run_key(loaded: Loaded, settings: Settings, summarizer: str | None = None) -> str:
    """Identifies a run: conversation, config, focus, summariser (never the API key), force."""
    assert settings.config is not None
    config_json = config_key(settings.config)
    kind = summarizer or settings.summarizer_key()
    # The record changes the summary (its working directory): a stored copy of the same messages
    # without it is another run.
    record = "/".join(d.path for d in loaded.session_record.working_directories)
    return f"{loaded.content_hash}|{config_json}|{settings.focus}|{kind}|{settings.force}|{record}"


def offline_result(
    loaded: Loaded, settings: Settings, force: bool | None = None
) -> CompactionResult:
    """The run with an offline summariser (static stands in for an LLM until it is asked for)."""
    assert settings.config is not None
    kind = settings.summarizer if settings.summarizer != "llm" else "static"
    forced = settings.force if force is None else force
    key = run_key(loaded, settings, kind) + f"|{forced}"
    return _cached_run(
        key,
        loaded.messages,
        settings.config,
        kind,
        settings.focus,
        forced,
        loaded.session_record,
    )


def llm_result(loaded: Loaded, settings: Settings) -> CompactionResult | None:
    """The LLM run for the current settings, if the user asked for it."""
    results: dict[str, CompactionResult] = st.session_state.get(LLM_RESULTS_KEY, {})
    return results.get(run_key(loaded, settings))


@st.cache_data(max_entries=16, show_spinner=False)
def _keys_litellm_wants(model: str) -> list[str]:
    # litellm's own check of the environment for this model's provider; imported only when an
    # LLM is chosen (the import costs seconds), and cached per model.
    try:
        litellm = load_litellm()
        report = litellm.validate_environment(model=model)
    except Exception:  # an unknown provider: let the call itself say what is wrong
        return []
    if report.get("keys_in_environment"):
        return []
    return [str(key) for key in report.get("missing_keys") or []]


def missing_llm_key(settings: Settings) -> str | None:
    """Why an LLM call would fail for want of credentials, said before it is made; else None.

    Without this the user waits for the call, then reads a provider's 'Missing credentials'
    dressed as a server error. A key in the password field, COMPACTION_API_KEY or an api_base
    (local OpenAI-compatible servers need no key) settles it."""
    if settings.api_key or settings.llm_api_base or os.environ.get("COMPACTION_API_KEY"):
        return None
    model = settings.llm_summary_model or settings.llm_model
    missing = _keys_litellm_wants(model)
    if not missing:
        return None
    return (
        f"No credentials for {model}: litellm looks for {' or '.join(missing)} in the "
        "environment. Enter an API key in the sidebar, set the variable, or give an API base for "
        "a local server; otherwise the call fails and the fallback summariser writes the summary."
    )


def run_llm(loaded: Loaded, settings: Settings, on_token: OnToken | None) -> CompactionResult:
    """Call the LLM summariser now (the only place the app does) and remember the result."""
    assert settings.config is not None
    summarizer = make_summarizer(
        "llm",
        model=settings.llm_model,
        summary_model=settings.llm_summary_model or None,
        api_base=settings.llm_api_base or None,
        api_key=settings.api_key,
        timeout=60,
    )
    result = Compactor(settings.config, summarizer, cache=app_cache()).compress(
        loaded.messages,
        focus=settings.focus,
        force=settings.force,
        on_token=on_token,
        recorded=loaded.session_record,
    )
    st.session_state.setdefault(LLM_RESULTS_KEY, {})[run_key(loaded, settings)] = result
    return result


@dataclass(frozen=True)
class Regions:
    """Where each message sits after Phase 2 (indices of the input) and the tokens of each part."""

    labels: list[str]
    head_end: int
    tail_start: int
    tokens: list[int]
    summarised_middle_tokens: int = 0  # the middle after Phase 1: what the summary budget uses
    #: Each message's tokens after Phase 1: what Phase 2 budgeted the tail with.
    pruned: list[int] | None = None

    def count(self, region: str) -> int:
        return sum(1 for label in self.labels if label == region)

    def tokens_of(self, region: str) -> int:
        return sum(t for t, label in zip(self.tokens, self.labels, strict=True) if label == region)

    def pruned_tokens_of(self, region: str) -> int:
        """The region's tokens after Phase 1 (as the budgets see it), else as it is."""
        if self.pruned is None:
            return self.tokens_of(region)
        return sum(t for t, label in zip(self.pruned, self.labels, strict=True) if label == region)


@st.cache_resource(max_entries=24, show_spinner=False)
def _cached_plan(
    plan_key: str,
    _messages: list[Message],
    _config: CompactionConfig,
    _marks: dict[int, str] | None = None,
) -> RegionPlan:
    # Phase 1 + 2 only: the overview needs where the cut falls, not a summary of the middle.
    return plan_regions(_messages, _config, marks=_marks)


def region_plan(loaded: Loaded, settings: Settings) -> RegionPlan:
    """The region plan (validate, count, prune, boundaries) for the current config, cached."""
    assert settings.config is not None
    key = f"{loaded.content_hash}|{config_key(settings.config)}"
    return _cached_plan(key, loaded.messages, settings.config, loaded.session_record.mark_map())


def regions(loaded: Loaded, settings: Settings) -> Regions:
    """Head / middle / tail of the input: Phases 1 and 2 exactly as `compress` runs them."""
    assert settings.config is not None
    tokens = token_counts(
        loaded.content_hash, settings.config.counter, settings.config.model, loaded.messages
    )
    plan = region_plan(loaded, settings)
    bounds = plan.boundaries
    return Regions(
        plan.regions(),
        bounds.head_end,
        bounds.tail_start,
        tokens,
        sum(plan.pruned_tokens[index] for index in bounds.middle),
        list(plan.pruned_tokens) if len(plan.pruned_tokens) == len(tokens) else None,
    )


def shown_result(loaded: Loaded, settings: Settings, step: int) -> CompactionResult | None:
    """The offline run when the page shows any of it; None before the first step when it would
    summarise (nothing of it is on view then, and the region plan drew the overview).

    Before the first step only a skipped run is shown (its reason). The plan tells, without
    summarising, whether `compress` would skip: it skips below the threshold unless forced, and
    when the head and tail leave no middle. (A fresh Compactor never skips for anti-thrash.)
    """
    assert settings.config is not None
    if step == 0:
        plan = region_plan(loaded, settings)
        below = plan.total_tokens < settings.config.threshold_tokens and not settings.force
        no_middle = plan.boundaries.middle_is_empty
        if not below and not no_middle:
            return None
    return offline_result(loaded, settings)


@st.cache_resource(show_spinner=False)
def _history_writer() -> ThreadPoolExecutor:
    # One background writer per server: recording a 5,000-message run takes seconds (redaction
    # and the report JSON), which must not freeze the page. SQLite serialises writes anyway.
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="history-writer")


def _record(loaded: Loaded, result: CompactionResult, info: dict[str, Any], path: str) -> int:
    from compaction.history import History

    with History(path) as history:
        # Loaded has the .messages/.title/.format that History.record reads.
        # An identical run of the same conversation (a second click, a reload) is stored once.
        return history.record(loaded, result, summarizer_info=info, dedupe=True)


SAVE_REQUESTED_KEY = "_save_requested"  # run keys the person asked to keep


def request_save(key: str) -> None:
    """The person asked to keep the run `key` (a stepper click that ran the phases to the end,
    or the "Save this run" button): only such runs go to the history, not every view."""
    st.session_state.setdefault(SAVE_REQUESTED_KEY, set()).add(key)


def save_requested(key: str) -> bool:
    if st.session_state.pop(SAVE_NEXT_KEY, False):
        request_save(key)  # the click that ran the phases to the end asked for this run
    return key in st.session_state.get(SAVE_REQUESTED_KEY, set())


@dataclass(frozen=True)
class SaveState:
    run_id: int | None = None
    problem: str | None = None
    pending: bool = False


def save_run(
    loaded: Loaded, result: CompactionResult, settings: Settings, key: str, wait_s: float = 1.0
) -> SaveState:
    """Record a completed run once per run key, in the background; wait up to `wait_s` for it.

    History failures are reported, never raised: the app works without history.
    """
    saves: dict[str, Future[int]] = st.session_state.setdefault(SAVED_RUNS_KEY, {})
    if key not in saves:
        from compaction.history import default_path

        # The file is resolved now, not when the writer gets to it: a queued write must land in
        # the history this session uses, even if COMPACTION_LAB_DB changes meanwhile (as it does
        # between tests, which share the writer).
        path = str(default_path())
        info = settings.summarizer_info()
        saves[key] = _history_writer().submit(_record, loaded, result, info, path)
    future = saves[key]
    try:
        return SaveState(run_id=future.result(timeout=wait_s))
    except FutureTimeout:
        return SaveState(pending=True)
    except (HistoryError, CompactionError, OSError, sqlite3.Error) as exc:
        return SaveState(problem=f"history is unavailable, so this run was not saved: {exc}")
