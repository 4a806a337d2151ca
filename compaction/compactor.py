"""Compactor: checks the input at its door, runs the phases (phases/pipeline.py: Prune,
Boundaries, Summarize, Assemble, Cleanup, Fit, each state in and its own result out), and keeps
what must survive between compactions.

Every compaction that runs ends with the Fit step (phases/fit.py): the result is at most
`context_length` tokens unless the system message and the latest request alone exceed it, which
the result then says (`result.fit.cannot_fit`, naming what fills the window). A conversation of
nothing but tool results (every one an orphan, which Phase 5 must remove) raises
InvalidConversationError: nothing of it would survive, and an empty list is no conversation to
send.

State across calls — the last summary, the ineffective-compaction count — is what stops an agent
from thrashing: after `max_ineffective` compactions in a row that freed little, automatic
compaction stops and suggests a new session instead of looping. Over the window it runs anyway
(Fit can cut), unless the last compaction found the latest request alone over the window: until
the request changes no compaction can help, so that one counts as ineffective at once and the
automatic calls after it skip. A manual (forced) compaction always runs.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

from compaction.cache import CompactionCache, current_cache
from compaction.config import CompactionConfig
from compaction.deferred import Deferred, detail, resolve
from compaction.errors import ConfigError, InvalidConversationError
from compaction.input.growing import GrowingConversation, check_and_count_once, memo_for
from compaction.input.parsed_arguments import sharing as sharing_parsed_arguments
from compaction.messages import Marks, Message, content_text, last_user_index, split_marks
from compaction.phases.outcome import final_fates
from compaction.phases.pins import resolve_pins
from compaction.phases.pipeline import PHASES, Cleanup, CompactionState, Phase, run_phases
from compaction.phases.savings import add_savings, freed_little
from compaction.result import CompactionResult, Fate, PhaseResult
from compaction.summarizers.base import OnToken, Summarizer
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary.recorded import SessionRecord
from compaction.telemetry import AttributeValue, record_compaction_span
from compaction.tokens import TokenCounter, count_each, make_counter
from compaction.tokens.tally import TokenTally, total_of

INEFFECTIVE_REASON = "ineffective compression — consider starting a new session (/new)"
REQUEST_OVER_WINDOW_REASON = (
    "the latest user request alone is over the window (the last compaction's Fit says by how "
    "much): compacting again cannot make it fit — shorten the request or start a new session"
)
NEW_SESSION_SUGGESTION = (
    "Compaction keeps freeing little context: consider starting a new session (/new)."
)
NOTHING_SURVIVES = (
    "nothing of the conversation survives compaction: every message is a tool result whose call "
    "is not in the conversation, and such orphan results are removed (a provider rejects them)"
)


class Compactor:
    """Compacts conversations; one instance per agent session (it remembers between calls)."""

    def __init__(
        self,
        config: CompactionConfig | None = None,
        summarizer: Summarizer | None = None,
        counter: TokenCounter | None = None,
        cache: CompactionCache | None = None,
    ) -> None:
        check_components(config, summarizer, counter, cache)
        self.config = config if config is not None else CompactionConfig()
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        # What this Compactor remembers about content (counts, one-liners, facts), bounded in
        # bytes; pass one cache to every Compactor that compacts the same content again. Made
        # inside another compaction's run (a lab strategy, a peer), it shares that one's.
        self.cache = cache if cache is not None else current_cache() or CompactionCache()
        self.counter: TokenCounter = counter or make_counter(
            self.config.counter, self.config.model, self.cache
        )
        self.previous_summary: str | None = None
        self.ineffective_count = 0
        self._fallback_summarizer = ExtractiveSummarizer()
        # The conversation as last checked and counted: an agent appends a message and asks
        # again, and only what it appended (or edited) is checked and counted again.
        self._conversation = GrowingConversation()
        # Each checked message's count (None until a decision needed it) and bounds, kept
        # across calls: each message is bounded once and counted at most once.
        self._counts: list[int | None] = []
        self._bounds: list[tuple[int, int] | None] = []
        self._counted_with: TokenCounter | None = None
        # The latest request (a digest of its text) that the last compaction found over the
        # window on its own: until it changes, compacting again cannot help.
        self._unfittable: str | None = None
        self.phases: tuple[Phase, ...] = PHASES
        #: Attributes every compaction span of this Compactor carries (telemetry.py), e.g. the
        #: conversation's id: an agent framework's adapter sets them.
        self.span_attributes: dict[str, AttributeValue] = {}

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return self.counter.count_messages(messages)

    def _checked_and_counted(
        self, messages: Sequence[Message], remember: bool = True
    ) -> tuple[list[Message], list[str], TokenTally]:
        """validate_messages(messages) and a tally of each checked message's tokens (counted as
        decisions need them: tokens/tally.py), reusing the work of the previous call for the
        unchanged messages it began with. `remember=False` (a compress) reuses but keeps nothing
        new: a one-shot compress never needs it again."""
        if not remember and not self._conversation.holds(messages):
            # Not the conversation this Compactor has been following: a one-shot compress, or a
            # re-run of one with other budgets (a new Compactor). The cache remembers the last
            # such conversation's check and counts.
            return check_and_count_once(messages, self.counter, self.cache)
        checked, repairs, counted = self._conversation.check(messages, remember)
        if self._counted_with is not self.counter:  # someone swapped the counter: recount all
            self._counts, self._bounds, self._counted_with, counted = [], [], self.counter, 0
        counted = min(counted, len(self._counts))  # checked further than counted: count the rest
        counts = self._counts if remember else self._counts[:counted]
        bounds = self._bounds if remember else self._bounds[:counted]
        del counts[counted:], bounds[counted:]
        if remember:
            # An agent appends a message and asks again: each is counted once, as it comes, and
            # a decision adds up counts. (Bounds would settle few of its decisions: between one
            # compaction and the next its context sits where they straddle the threshold.)
            counts.extend(count_each(self.counter, checked[counted:]))
        else:
            counts.extend([None] * (len(checked) - counted))
        bounds.extend([None] * (len(checked) - counted))
        return checked, repairs, TokenTally(checked, self.counter, counts, bounds)

    def should_compress(self, messages: Sequence[Message]) -> bool:
        """True when automatic compaction would run: at the threshold, and not thrashing."""
        with self.cache.active():
            return self._should_compress(messages)

    def _should_compress(self, messages: Sequence[Message]) -> bool:
        if isinstance(messages, list | tuple) and not messages:
            return False  # nothing to compact yet (compress() would reject it)
        # The same checks as compress(), so bad input fails here with the same clear error.
        checked, _, tokens = self._checked_and_counted(messages)
        if self.ineffective_count >= self.config.max_ineffective:
            # Anti-thrash waits for a manual compaction, but a context over the window cannot
            # be sent at all: then compaction runs regardless, unless the last one found the
            # latest request alone over the window (no compaction can fit it).
            if self._unfittable is not None and (
                _request_key(*split_marks(checked)) == self._unfittable
            ):
                return False
            return tokens.at_least(self.config.context_length + 1)
        return tokens.at_least(self.config.threshold_tokens)

    def compress(
        self,
        messages: Sequence[Message],
        focus: str | None = None,
        force: bool = False,
        on_token: OnToken | None = None,
        recorded: SessionRecord | None = None,
    ) -> CompactionResult:
        """Compact `messages` (never modified). `force=True` is the manual `/compress`.

        `recorded` is what the session file recorded beside the messages (the working
        directory, which user turns the harness sent: `Conversation.record()`); the summary
        states it as fact, with its origin. An imported Conversation may be passed as it is:
        its messages are compacted with its record."""
        if not isinstance(messages, list | tuple) and callable(getattr(messages, "record", None)):
            recorded = recorded if recorded is not None else messages.record()  # type: ignore[attr-defined]
            messages = messages.messages  # type: ignore[attr-defined]
        started = time.time_ns()
        # The input check's parses of tool-call arguments serve Phase 1 too (parsed once).
        with self.cache.active(), sharing_parsed_arguments():
            result = self._compress(messages, focus, force, on_token, recorded)
        trigger = {"compaction.trigger": "manual" if force else "auto"}
        record_compaction_span(
            result, messages, started, self.counter, {**trigger, **self.span_attributes}
        )
        return result

    def _compress(
        self,
        messages: Sequence[Message],
        focus: str | None,
        force: bool,
        on_token: OnToken | None,
        recorded: SessionRecord | None,
    ) -> CompactionResult:
        if focus is not None and not isinstance(focus, str):
            raise ConfigError(
                f"focus must be a topic as text (or None), got {type(focus).__name__}"
            )
        checked, repairs, tokens = self._checked_and_counted(messages, remember=False)
        # Which user turns the harness sent: beside the messages (the record's marks, and any
        # `injected` key a list still carries, taken out: the output carries provider fields
        # only).
        checked, marks = split_marks(checked, recorded.mark_map() if recorded else None)
        config = self.config
        # The input's total is a figure to report: decisions ask the tally (`at_least`).
        tokens_before: int | Deferred[int] = tokens.deferred_total()
        base: dict[str, Any] = {
            "repairs": repairs,
            "focus": focus or None,
            "config": config.to_dict(),
            "summarizer": getattr(self.summarizer, "name", type(self.summarizer).__name__),
        }

        if not force:
            reason = None
            if self.ineffective_count >= config.max_ineffective:
                over_window = tokens.at_least(config.context_length + 1)
                unfittable = self._unfittable is not None and (
                    _request_key(checked, marks) == self._unfittable
                )
                if over_window and unfittable:
                    reason = REQUEST_OVER_WINDOW_REASON
                elif over_window:
                    # Over the window the provider rejects the next call: anti-thrash yields.
                    base["forced_over_window"] = True
                else:
                    reason = INEFFECTIVE_REASON
            elif not tokens.at_least(config.threshold_tokens):
                tokens_before = resolve(tokens_before)
                reason = (
                    f"below the threshold: {tokens_before:,} tokens < "
                    f"{config.threshold_tokens:,} ({config.threshold_ratio:.0%} of "
                    f"{config.context_length:,})"
                )
            if reason is not None:
                return self._skipped(checked, [], tokens_before, reason, base)

        if all(message.get("role") == "tool" for message in checked):
            raise InvalidConversationError(NOTHING_SURVIVES)
        # What the user pinned, as input indexes, once: every phase reads the same set.
        pinned = resolve_pins(checked, config.pins, marks)
        if config.pins:
            base["pinned"] = pinned.to_dict()

        state = run_phases(
            CompactionState(
                checked=checked,
                input_tokens=tokens,
                marks=marks,
                config=config,
                counter=self.counter,
                summarizer=self.summarizer,
                fallback_summarizer=self._fallback_summarizer,
                focus=focus,
                on_token=on_token,
                recorded=recorded,
                previous_summary=self.previous_summary,
                pinned=pinned,
                memo=memo_for(tokens, self.cache),
            ),
            self.phases,
        )
        if state.skip_reason is not None:
            skipped = self._skipped(
                state.messages, state.results, tokens_before, state.skip_reason, base
            )
            skipped.orphan_fixes = state.fixes
            skipped.tokens_after = state.tokens
            skipped.fates = final_fates(len(checked), state.results[-1:])
            return skipped
        if state.outcome is not None and state.outcome.summary is not None:
            self.previous_summary = state.outcome.text
        return self._finish(state, base)

    def _finish(self, state: CompactionState, base: dict[str, Any]) -> CompactionResult:
        """Savings, the anti-thrash count and the result, for every compaction that ran."""
        config = self.config
        tokens_after = resolve(state.tokens)  # the output's own count, exact
        ineffective = freed_little(state.input_tokens, tokens_after, config.ineffective_savings_pct)
        self.ineffective_count = self.ineffective_count + 1 if ineffective else 0
        if state.fit is not None and state.fit.request_exceeds_window:
            # No compaction can make it fit until the request changes: say so once, and let
            # the anti-thrash rule skip the automatic calls that would only repeat this one.
            self.ineffective_count = max(self.ineffective_count, config.max_ineffective)
            self._unfittable = _request_key(state.checked, state.marks)
        else:
            self._unfittable = None
        cleaned = next(r for r in reversed(state.results) if r.name == Cleanup.name)
        add_savings(
            cleaned, state.input_tokens, tokens_after, ineffective, self.ineffective_count, config
        )
        suggestion = (
            NEW_SESSION_SUGGESTION if self.ineffective_count >= config.max_ineffective else None
        )
        outcome = state.outcome
        iterative = bool(state.summary_result and detail(state.summary_result, "iterative"))
        self._follow(state.messages)
        return CompactionResult(
            messages=state.messages,
            phases=state.results,
            tokens_before=total_of(state.input_tokens),
            tokens_after=tokens_after,
            summary=outcome.summary if outcome else None,
            orphan_fixes=state.fixes,
            fallback_used=outcome.fallback_used if outcome else None,
            fallback_reason=outcome.fallback_reason if outcome else None,
            fates=final_fates(len(state.checked), state.results),
            ineffective_count=self.ineffective_count,
            suggestion=suggestion,
            iterative=bool(outcome and iterative),
            fit=state.fit,
            marks=_output_marks(state.origins, state.marks),
            **base,
        )

    def _follow(self, messages: list[Message]) -> None:
        """An agent goes on from the compacted context: remember it as checked and counted, so
        that the next should_compress checks and counts only what the agent appends to it (it
        re-checked the whole context after every compaction, ~30 us a message). Done here, not
        at the next call: the snapshot must be of the output as compress made it, so that an
        agent's edit of it in the meantime is seen and checked (a one-shot compress pays this
        for nothing, a few ms at 190 messages)."""
        if self._conversation.adopt(messages):
            self._counts = list[int | None](count_each(self.counter, messages))
            self._bounds = [None] * len(messages)
            self._counted_with = self.counter

    def _skipped(
        self,
        messages: list[Message],
        phases: list[PhaseResult],
        tokens_before: int | Deferred[int],
        reason: str,
        base: dict[str, Any],
    ) -> CompactionResult:
        return CompactionResult(
            messages=list(messages),
            phases=phases,
            tokens_before=tokens_before,
            tokens_after=tokens_before,
            skipped=True,
            skip_reason=reason,
            fates=dict.fromkeys(range(len(messages)), Fate.KEPT),
            ineffective_count=self.ineffective_count,
            suggestion=NEW_SESSION_SUGGESTION
            if reason in (INEFFECTIVE_REASON, REQUEST_OVER_WINDOW_REASON)
            else None,
            **base,
        )


def _request_key(messages: Sequence[Message], marks: Marks) -> str | None:
    """A digest of the latest request's text: the same request after a compaction (it is kept
    verbatim, at another index) has the same key."""
    index = last_user_index(messages, marks=marks)
    if index is None:
        return None
    return hashlib.sha256(content_text(messages[index]).encode("utf-8", "replace")).hexdigest()


def _output_marks(origins: list[int | None], marks: Marks | None) -> dict[int, str]:
    """The marks of the output's messages, by their position (`result.marks`), for a caller that
    compacts the output again (`recorded=SessionRecord(marks=…)`)."""
    if not marks:
        return {}
    return {pos: marks[o] for pos, o in enumerate(origins) if o is not None and o in marks}


def check_components(
    config: object, summarizer: object, counter: object, cache: object = None
) -> None:
    """ConfigError naming the argument when one is not what the Compactor can use.

    Checked up front: otherwise a string given as `config` fails as an AttributeError deep in a
    phase, which names neither the argument nor what it should have been.
    """
    if config is not None and not isinstance(config, CompactionConfig):
        raise ConfigError(
            "config must be a CompactionConfig (or None for the defaults), "
            f"got {type(config).__name__}"
        )
    if summarizer is not None and not callable(getattr(summarizer, "summarize", None)):
        raise ConfigError(
            "summarizer must have a summarize(request, on_token=None) method, like "
            "ExtractiveSummarizer or make_summarizer(...) (or None), "
            f"got {type(summarizer).__name__}"
        )
    if cache is not None and not isinstance(cache, CompactionCache):
        raise ConfigError(
            f"cache must be a CompactionCache (or None for one of its own), got "
            f"{type(cache).__name__}"
        )
    if counter is not None and not all(
        callable(getattr(counter, method, None)) for method in ("count_message", "count_messages")
    ):
        raise ConfigError(
            "counter must be a TokenCounter with count_message and count_messages, like "
            f"make_counter('tiktoken') (or None), got {type(counter).__name__}"
        )


def compress(
    messages: Sequence[Message],
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
    focus: str | None = None,
    counter: TokenCounter | None = None,
    recorded: SessionRecord | None = None,
    cache: CompactionCache | None = None,
) -> CompactionResult:
    """One forced compaction with a fresh Compactor (what `/compress` does once). It remembers
    nothing after it returns unless given a `cache` to remember in (for re-runs)."""
    return Compactor(config, summarizer, counter, cache).compress(
        messages, focus=focus, force=True, recorded=recorded
    )
