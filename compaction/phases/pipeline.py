"""The phase contract: one state in, one PhaseResult out, and `compress` a loop over phases.

Every phase implements `Phase`: `run(state)` reads what the earlier phases left in the
`CompactionState`, does its work, moves the state on (the messages, their origins and their total
tokens) and returns its own `PhaseResult` with its tokens before and after and its timing, or None
when it has nothing to do in this compaction (Phase 3 when the middle is empty). The Compactor
checks the input at its door, runs `PHASES` in order and turns the state into a result.

Three turns of the road are decided by the phases themselves, on the state:

- Boundaries finds an empty middle: nothing to summarise. If Prune freed something or the input
  is over the window, the pruned conversation goes on to Cleanup and Fit (the savings are real,
  and Fit can cut what is over); otherwise Cleanup repairs the input as it is and the compaction
  ends as skipped (`state.skip_reason`), so even a skipped result is sendable.
- Cleanup finds the summarised result no smaller than the input (a short conversation where the
  summary's fixed cost outweighs its middle): the summary is discarded, Assemble's result is
  withdrawn and the pruned conversation is cleaned instead.
- Fit runs last on every compaction that did not end as skipped.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, resolve, stored
from compaction.messages import Marks, Message
from compaction.phases.assemble import assemble
from compaction.phases.boundaries import Boundaries, boundaries_phase, find_head_end
from compaction.phases.cleanup import cleanup
from compaction.phases.fit import FitReport, expected_fit_cuts, fit_phase
from compaction.phases.outcome import (
    FIT_ONLY_NOTE,
    PRUNE_ONLY_NOTE,
    SUMMARY_NOT_WORTH_IT,
    nothing_to_compress_reason,
    restore_merged,
)
from compaction.phases.pins import PinnedMessages
from compaction.phases.prune import counts_after, prune, recounted
from compaction.phases.summarize import SummaryOutcome, split_merged_summaries, summarize_phase
from compaction.result import OrphanFix, PhaseResult
from compaction.summarizers.base import OnToken, Summarizer
from compaction.summary.recorded import SessionRecord
from compaction.tokens import TokenCounter
from compaction.tokens.tally import TokenTally, at_least, later_if, summary_budget


@dataclass
class CompactionState:
    """What one compaction's phases share: the checked input, the settings, and what each
    phase has made so far.

    `messages`, `origins` (each message's input index, None for one a phase inserted) and
    `tokens` (their total) are the conversation as it stands after the latest phase; the other
    fields are set by the phase named beside them and read by the later ones.
    """

    # The door's work: the checked input, its per-message tokens and marks, and the settings.
    checked: list[Message]
    #: Each input message's tokens: a TokenTally (tokens/tally.py) counts them as decisions need.
    input_tokens: Sequence[int]
    marks: Marks
    config: CompactionConfig
    counter: TokenCounter
    summarizer: Summarizer
    fallback_summarizer: Summarizer
    focus: str | None = None
    on_token: OnToken | None = None
    recorded: SessionRecord | None = None
    previous_summary: str | None = None
    #: The input indexes the config's pins keep, resolved once at the door (phases/pins.py):
    #: no phase summarises, cuts or drops them.
    pinned: PinnedMessages = field(default_factory=PinnedMessages)
    #: What phases keep of this conversation for a re-run with other budgets (the cache's, for
    #: the conversation it remembers: input/growing.memo_for); None keeps nothing.
    memo: dict[Hashable, Any] | None = None
    # The conversation as it stands.
    messages: list[Message] = field(default_factory=list)
    origins: list[int | None] = field(default_factory=list)
    #: Their total: exact from Assemble on; before it a figure only reports read (deferred).
    tokens: int | Deferred[int] = 0
    # Prune: the messages with earlier merged summaries split off, and their counts.
    working: list[Message] = field(default_factory=list)
    merged_previous: list[tuple[int, str]] = field(default_factory=list)
    merged_at: set[int] = field(default_factory=set)
    pruned: PhaseResult | None = None
    pruned_tokens: Sequence[int] = field(default_factory=list)
    # Boundaries: the middle's tokens (a figure, deferred) and the summary budget (decided).
    bounds: Boundaries | None = None
    middle_tokens: int | Deferred[int] = 0
    summary_budget: int | None = None
    # Summarize.
    summary_result: PhaseResult | None = None
    outcome: SummaryOutcome | None = None
    taken_out: set[int] = field(default_factory=set)
    # Cleanup.
    fixes: list[OrphanFix] = field(default_factory=list)
    # Fit.
    fit: FitReport | None = None
    # Every phase that ran, in order; a reason when the compaction ends as skipped.
    results: list[PhaseResult] = field(default_factory=list)
    skip_reason: str | None = None

    @property
    def tokens_before(self) -> int:
        return sum(self.input_tokens)

    def input_over(self, tokens: int) -> bool:
        """The input's total is over `tokens`, decided as exact counts decide it."""
        return at_least(self.input_tokens, tokens + 1)

    def advance(
        self, result: PhaseResult, tokens: int | Deferred[int] | None = None
    ) -> PhaseResult:
        """The conversation after `result`, with its total (counted when not given)."""
        self.messages = result.messages
        self.origins = list(result.origins)
        self.tokens = tokens if tokens is not None else self.counter.count_messages(result.messages)
        result.tokens_after = self.tokens
        return result


@runtime_checkable
class Phase(Protocol):
    """One step of a compaction: reads the state, moves it on, reports what it did."""

    name: str

    def run(self, state: CompactionState) -> PhaseResult | None:
        """This phase's result (its tokens before and after, its timing), or None when it has
        nothing to do in this compaction."""
        ...


class Prune:
    """Phase 1: old tool outputs deduplicated or cut to one line, long arguments shortened."""

    name = "prune"

    def run(self, state: CompactionState) -> PhaseResult:
        # Phase 3 step 1, done first so every phase sees it: a message an earlier compaction
        # merged the summary into is that message again (its summary is the previous summary).
        head_end = find_head_end(state.checked, state.config.protect_first_n)
        state.working, state.merged_previous = split_merged_summaries(state.checked, head_end)
        state.merged_at = {index for index, _ in state.merged_previous}
        work_tokens = recounted(state.input_tokens, state.working, state.merged_at, state.counter)
        result = prune(
            state.working,
            state.config,
            state.counter,
            work_tokens,
            pinned=state.pinned.indexes,
            memo=state.memo,
        )
        state.pruned = result
        state.pruned_tokens = counts_after(result, work_tokens, state.counter)
        return state.advance(result, stored(result, "tokens_after"))


class FindBoundaries:
    """Phase 2: the protected head, the token-budgeted tail, the pinned latest request."""

    name = "boundaries"

    def run(self, state: CompactionState) -> PhaseResult:
        result, bounds = boundaries_phase(
            state.messages, state.pruned_tokens, state.config, state.marks, state.pinned.indexes
        )
        result.tokens_before = result.tokens_after = state.tokens
        state.bounds = bounds
        middle = bounds.middle
        state.middle_tokens = later_if(
            isinstance(state.pruned_tokens, TokenTally),
            lambda: sum(state.pruned_tokens[i] for i in middle),
        )
        state.summary_budget = summary_budget(state.config, state.pruned_tokens, middle)
        if bounds.middle_is_empty:
            pruned = state.pruned
            over_window = state.input_over(state.config.context_length)
            if not (pruned is not None and pruned.fates) and not over_window:
                # Nothing to summarise and nothing pruned: the compaction ends as skipped, but
                # Cleanup still repairs the input (unpruned) so the output is always sendable.
                state.messages, state.origins = state.checked, list(range(len(state.checked)))
                state.tokens = state.tokens_before
                state.skip_reason = "nothing to compress"  # Cleanup words it with its fixes
        return result


class Summarize:
    """Phase 3: the structured summary of the middle (the pinned request left out)."""

    name = "summarize"

    def run(self, state: CompactionState) -> PhaseResult | None:
        bounds = state.bounds
        if bounds is None or bounds.middle_is_empty:
            return None
        fit_outputs = expected_fit_cuts(
            state.messages,
            state.working,
            state.pruned_tokens,
            bounds,
            state.config,
            state.middle_tokens,
            state.counter,
            state.marks,
            budget=state.summary_budget,
            pinned=state.pinned.indexes,
        )
        result, outcome, taken_out = summarize_phase(
            state.messages,
            state.working,
            bounds.head_end,
            bounds.tail_start,
            state.middle_tokens,
            state.config,
            state.summarizer,
            previous_summary=state.previous_summary,
            focus=state.focus,
            on_token=state.on_token,
            fallback_summarizer=state.fallback_summarizer,
            pinned=bounds.pinned,
            kept=bounds.kept,
            merged_previous=state.merged_previous,
            counter=state.counter,
            fit_outputs=fit_outputs,
            recorded=state.recorded,
            marks=state.marks,
            budget=state.summary_budget,
        )
        # Phase 3 writes the summary; the conversation changes in Phase 4.
        result.tokens_before = result.tokens_after = state.tokens
        state.summary_result, state.outcome, state.taken_out = result, outcome, taken_out
        return result


class Assemble:
    """Phase 4: head + summary (+ the pinned request) + tail, roles chosen to alternate."""

    name = "assemble"

    def run(self, state: CompactionState) -> PhaseResult | None:
        bounds, outcome = state.bounds, state.outcome
        if bounds is None or outcome is None:
            return None
        result = assemble(
            state.messages,
            state.origins,
            bounds.head_end,
            bounds.tail_start,
            outcome.text,
            is_marker=outcome.summary is None,
            excluded={i for i in state.taken_out if i >= bounds.tail_start},
            pinned=bounds.pinned,
            kept=bounds.kept,
            orphan_strategy=state.config.orphan_strategy,
        )
        result.tokens_before = state.tokens
        return state.advance(result)


class Cleanup:
    """Phase 5: orphaned results removed, unanswered calls stubbed or stripped, results moved
    next to their calls; and the summary discarded when it does not pay for itself."""

    name = "cleanup"

    def run(self, state: CompactionState) -> PhaseResult:
        config = state.config
        if state.skip_reason is not None:
            # The input as it is (see FindBoundaries): repaired, never compacted.
            result, state.fixes = cleanup(state.messages, state.origins, config.orphan_strategy)
            result.tokens_before = state.tokens
            state.skip_reason = nothing_to_compress_reason(state.fixes)
            return state.advance(result)
        if state.outcome is None:
            # An empty middle after pruning: the pruned conversation is the result (a merged
            # summary keeps its place: nothing replaces it).
            note = PRUNE_ONLY_NOTE if state.pruned is not None and state.pruned.fates else None
            return self._unsummarised(state, note or FIT_ONLY_NOTE)
        result, fixes = cleanup(
            state.messages, state.origins, config.orphan_strategy, state.checked
        )
        result.tokens_before = state.tokens
        tokens_after = state.counter.count_messages(result.messages)
        if not state.input_over(tokens_after):
            # Compaction must never grow the context. On a short conversation the summary's
            # fixed cost (13 headings, the reference-only framing) can outweigh the whole
            # middle; then the pruned conversation is the result, and Phase 3 shows the summary
            # as discarded. (Only against the input: a summary larger than the *pruned* middle
            # is still worth it, since it carries the errors and facts Phase 1 cut to one line.)
            return self._discard_summary(state, tokens_after)
        state.fixes = fixes
        return state.advance(result, tokens_after)

    def _unsummarised(self, state: CompactionState, note: str) -> PhaseResult:
        pruned = state.pruned
        assert pruned is not None  # Prune always runs first
        kept = restore_merged(pruned.messages, state.checked, state.merged_at)
        result, state.fixes = cleanup(
            kept, pruned.origins, state.config.orphan_strategy, state.checked
        )
        result.tokens_before = stored(pruned, "tokens_after")
        result.details["note"] = note
        return state.advance(result)

    def _discard_summary(self, state: CompactionState, summarised_tokens: int) -> PhaseResult:
        summary = state.summary_result
        assert summary is not None and state.pruned is not None
        state.results = [r for r in state.results if r.name != Assemble.name]
        state.outcome = None
        result = self._unsummarised(state, "")
        note = SUMMARY_NOT_WORTH_IT.format(
            before=state.tokens_before,
            after=summarised_tokens,
            middle=resolve(state.middle_tokens),
            pruned=result.tokens_after,
        )
        summary.fates = {}
        summary.details["discarded"] = result.details["note"] = note
        return result


class Fit:
    """The last step: cut the largest pieces until the result fits the window."""

    name = "fit"

    def run(self, state: CompactionState) -> PhaseResult | None:
        if state.skip_reason is not None:
            return None
        result, state.fit = fit_phase(
            state.messages,
            state.origins,
            state.config.context_length,
            state.counter,
            tokens_before=resolve(state.tokens),
            marks=state.marks,
            pinned=state.pinned.indexes,
        )
        return state.advance(result, result.tokens_after)


#: The phases every compaction runs, in order.
PHASES: tuple[Phase, ...] = (Prune(), FindBoundaries(), Summarize(), Assemble(), Cleanup(), Fit())


def run_phases(state: CompactionState, phases: Sequence[Phase] = PHASES) -> CompactionState:
    """Run each phase on `state` in order, collecting the results of those that ran."""
    for phase in phases:
        result = phase.run(state)
        if result is not None:
            state.results.append(result)
    return state
