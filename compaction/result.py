"""What a compaction produced: the final messages and a PhaseResult for each of the five phases
and the Fit step that follows them.

What happened to each message is recorded here, keyed by its index in the input (its *fate*), and
never as metadata keys inside the messages: the output is clean and ready to send to a provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from compaction.deferred import LazyField, resolve_fields
from compaction.messages import Message
from compaction.summary import Summary

if TYPE_CHECKING:
    from compaction.phases.fit import FitReport


class Fate(StrEnum):
    """What a phase did to an input message (a message may have several; FATE_ORDER ranks them).

    A str: reports, the history and the app's palettes read the values."""

    KEPT = "kept"
    DEDUPLICATED = "deduplicated"  # an older copy of an output, replaced by a marker (Phase 1)
    CUT_TO_ONE_LINE = "cut_to_one_line"  # a tool output replaced by its one-line summary (Phase 1)
    ARGUMENTS_SHORTENED = "arguments_shortened"  # a call's long argument strings cut (Phase 1)
    FOLDED_INTO_SUMMARY = "folded"  # summarised into the structured summary (Phase 3/4)
    PREVIOUS_SUMMARY_REPLACED = "previous_summary"  # an earlier summary, replaced by the new one
    SUMMARY_MERGED_IN = "merged"  # the summary was prepended to this message (Phase 4)
    NOTE_ADDED = "note_added"  # the system message received the compaction note (Phase 4)
    ORPHAN_REMOVED = "removed"  # a tool result whose call is gone (Phase 5)
    RESULT_MOVED = "moved"  # a tool result moved next to its call (Phase 5)
    STUB_ADDED = "stubbed"  # this message's call received a stub result (Phase 5)
    CALL_STRIPPED = "stripped"  # this message lost a call that had no result (Phase 5)
    # Kept verbatim right after the summary: the latest request, or a middle message the user
    # pinned (CompactionConfig.pins) (Phase 2/4).
    PINNED = "pinned"
    CUT_TO_FIT = "cut_to_fit"  # a part of this message was cut so the result fits (Fit)


#: Values an earlier version stored (reports, the history): what they mean now.
LEGACY_FATES = {"summarised": Fate.CUT_TO_ONE_LINE, "args_truncated": Fate.ARGUMENTS_SHORTENED}


def as_fate(value: str) -> str:
    """A stored fate as today's value (an old report's "summarised" is CUT_TO_ONE_LINE)."""
    legacy = LEGACY_FATES.get(value)
    return legacy.value if legacy is not None else value


#: The order in which a message's fates are reported when several phases touched it.
FATE_ORDER = (
    Fate.ORPHAN_REMOVED,
    Fate.FOLDED_INTO_SUMMARY,
    Fate.PREVIOUS_SUMMARY_REPLACED,
    Fate.DEDUPLICATED,
    Fate.CUT_TO_ONE_LINE,
    Fate.CALL_STRIPPED,
    Fate.STUB_ADDED,
    Fate.CUT_TO_FIT,
    Fate.ARGUMENTS_SHORTENED,
    Fate.SUMMARY_MERGED_IN,
    Fate.PINNED,
    Fate.RESULT_MOVED,
    Fate.NOTE_ADDED,
    Fate.KEPT,
)

#: The five phases and the Fit step after them, in the order they run.
PHASE_NAMES = ("prune", "boundaries", "summarize", "assemble", "cleanup", "fit")


_FIX_ACTIONS = {
    "removed_result": "removed the tool result",
    "inserted_stub": "added a stub result",
    "stripped_call": "removed the tool call",
    "moved_result": "moved the tool result",
}


@dataclass
class OrphanFix:
    """One repair made by Phase 5, for the UI's orphan-fix list."""

    kind: str  # "removed_result" | "inserted_stub" | "stripped_call" | "moved_result"
    tool_call_id: str
    message_index: int | None  # input index of the affected message, when it came from the input
    output_index: int | None  # position in the final messages (stub or moved result)
    reason: str
    tool_name: str | None = None

    def describe(self) -> str:
        """One plain line: what was done, to which call, and why."""
        action = _FIX_ACTIONS.get(self.kind, self.kind)
        name = f" ({self.tool_name})" if self.tool_name else ""
        where = f", message {self.message_index}" if self.message_index is not None else ""
        return f"{action} for call {self.tool_call_id!r}{name}{where}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tool_call_id": self.tool_call_id,
            "message_index": self.message_index,
            "output_index": self.output_index,
            "reason": self.reason,
            "tool_name": self.tool_name,
        }


@dataclass
class PhaseResult:
    """One phase's outcome.

    `messages` are the messages after the phase; `origins[i]` is the input index the i-th output
    message came from (None for a message the phase inserted: the summary, a stub); `fates` maps
    input indices to what this phase did to them; `details` is the phase's own account (dedupe
    table, boundary moves, prompt, role choice, fixes...).
    """

    name: str
    messages: list[Message]
    origins: list[int | None]
    # Each may be given as a Deferred (compaction/deferred.py): a figure no decision needed,
    # counted when it is first read.
    tokens_before: LazyField[int] = LazyField()
    tokens_after: LazyField[int] = LazyField()
    fates: dict[int, str] = field(default_factory=dict)
    details: LazyField[dict[str, Any]] = LazyField(dict)
    duration_s: float = 0.0

    def __getstate__(self) -> dict[str, Any]:
        resolve_fields(self)  # values, never computations, cross a process or a cache
        return self.__dict__

    def to_dict(self, include_messages: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "fates": {str(k): v for k, v in sorted(self.fates.items())},
            "details": self.details,
            "duration_s": round(self.duration_s, 6),
            "origins": self.origins,
        }
        if include_messages:
            data["messages"] = self.messages
        return data


@dataclass
class CompactionResult:
    """The whole run: final messages, the five phases and Fit, the summary, fixes and the
    figures. `fit` is the Fit step's record (None for a skipped run)."""

    messages: list[Message]
    phases: list[PhaseResult]
    tokens_before: LazyField[int] = LazyField()  # may be given deferred: see PhaseResult
    tokens_after: LazyField[int] = LazyField()
    summary: Summary | None = None
    orphan_fixes: list[OrphanFix] = field(default_factory=list)
    skipped: bool = False
    skip_reason: str | None = None
    fallback_used: str | None = None  # None, "static" or "extractive"
    fallback_reason: str | None = None
    repairs: list[str] = field(default_factory=list)
    fates: dict[int, str] = field(default_factory=dict)
    ineffective_count: int = 0
    suggestion: str | None = None
    iterative: bool = False
    focus: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    summarizer: str = ""
    fit: FitReport | None = None
    # Ran although anti-thrash had suspended automatic compaction: the input was over the window.
    forced_over_window: bool = False
    #: Which output messages the harness sent (messages.Marks, by output position): beside the
    #: messages, which carry the provider's fields only.
    marks: dict[int, str] = field(default_factory=dict)
    #: What the config's pins kept (CompactionConfig.pins, phases/pins.py):
    #: {"pinned": {input index: why}, "unresolved": [a pin that kept nothing, and why]}, empty
    #: when no pins were set.
    pinned: dict[str, Any] = field(default_factory=dict)

    @property
    def pinned_indexes(self) -> list[int]:
        """The input indexes the pins kept verbatim."""
        return sorted(int(index) for index in self.pinned.get("pinned", {}))

    def __getstate__(self) -> dict[str, Any]:
        resolve_fields(self)
        return self.__dict__

    @property
    def savings_pct(self) -> float:
        if self.tokens_before <= 0:
            return 0.0
        return (self.tokens_before - self.tokens_after) / self.tokens_before * 100

    def phase(self, name: str) -> PhaseResult:
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(f"no phase named {name!r}; phases run: {[p.name for p in self.phases]}")

    def to_dict(self, include_phase_messages: bool = True) -> dict[str, Any]:
        """A JSON-ready report of everything the run did (the CLI's --report)."""
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "savings_pct": round(self.savings_pct, 2),
            "messages_before": len(self.phases[0].origins) if self.phases else len(self.messages),
            "messages_after": len(self.messages),
            "skipped": self.skipped,
            "skip_reason": self.skip_reason,
            "fallback_used": self.fallback_used,
            "fallback_reason": self.fallback_reason,
            "iterative": self.iterative,
            "forced_over_window": self.forced_over_window,
            "focus": self.focus,
            "summarizer": self.summarizer,
            "ineffective_count": self.ineffective_count,
            "suggestion": self.suggestion,
            "repairs": list(self.repairs),
            "config": self.config,
            "summary": self.summary.to_dict() if self.summary else None,
            # Each section's items with the messages they came from and the check's flags.
            "summary_items": self.summary.items_to_dict() if self.summary else None,
            "orphan_fixes": [fix.to_dict() for fix in self.orphan_fixes],
            "fit": self.fit.to_dict() if self.fit is not None else None,
            "fates": {str(k): v for k, v in sorted(self.fates.items())},
            "phases": [p.to_dict(include_messages=include_phase_messages) for p in self.phases],
            "messages": self.messages,
            "marks": {str(index): kind for index, kind in sorted(self.marks.items())},
            **({"pinned": self.pinned} if self.pinned else {}),
        }


def without_timings(report: Any) -> Any:
    """A report (`CompactionResult.to_dict()`, or any part of one) without its timings
    (`duration_s`, at any depth): what two runs of the same compaction must agree on, since
    their timings differ on every run."""
    if isinstance(report, dict):
        return {key: without_timings(value) for key, value in report.items() if key != "duration_s"}
    if isinstance(report, list):
        return [without_timings(item) for item in report]
    return report
