"""The extractive summariser: the 13-section summary built from the turns alone, offline.

It is the default when no LLM is configured, so it is the summary most users see. It reads the
middle as it was before Phase 1 (`raw_turns`) for exact errors, paths and identifiers, fills every
section by deterministic heuristics (scan.py, sections.py), folds in an earlier
summary by the iterative-update rules (merge.py), and fits the result into the token
budget with the lowest-priority lines dropped first (budget.py). Secrets are redacted in
every line before it is counted, so the budget holds for the text that is returned.
"""

from __future__ import annotations

import time
from typing import Any

from compaction.cache import remembered
from compaction.errors import SummarizationError
from compaction.summarizers.base import OnToken, SourcedItems, SummaryRequest
from compaction.summarizers.extractive.budget import fit, fit_details
from compaction.summarizers.extractive.items import Sections
from compaction.summarizers.extractive.merge import (
    finished_in_progress,
    merge_previous,
    previous_actions,
)
from compaction.summarizers.extractive.scan import scan
from compaction.summarizers.extractive.sections import build_sections
from compaction.summarizers.extractive.text import stems
from compaction.summary import parse_summary, section_item_texts
from compaction.summary.items import CARRIED, SummaryItem, limited
from compaction.text.redact import may_hold_secret, redact
from compaction.tokens import TokenCounter, make_counter

NO_REQUEST = "None."


def _redact(text: str) -> str:
    """Redaction runs over every line of every run; the same lines come back when a session is
    compacted again with other budgets, so each distinct line is redacted once per cache. Most
    lines hold nothing a secret needs (a colon, an equals sign, a key's prefix): seeing that
    costs less than looking the line up."""
    if not may_hold_secret(text):
        return text
    return remembered(("redacted", text), len(text), lambda: redact(text))


def as_stored(text: str) -> str:
    """`text` as the summary keeps it: parse_summary reads it line by line, so CRLF and other
    line breaks become plain newlines; returning that form keeps the budget count exact."""
    return "\n".join(text.splitlines()).strip()


def _line_counter(request: SummaryRequest) -> TokenCounter:
    """The counter the Compactor measures with, so the budget is in its units (and the rough
    counter never loads tiktoken); its counts of the candidate lines, which recur from one
    compaction to the next, are remembered in the Compactor's cache. A request built by hand,
    without a counter, counts exactly for its model."""
    counter = request.counter
    return counter if counter is not None else make_counter("tiktoken", request.model)


def _cite_conversation(sections: Sections, request: SummaryRequest) -> None:
    """Every item's sources as conversation indexes (they are built as turn indexes)."""
    for items in sections.values():
        for item in items:
            mapped = (request.conversation_index(source) for source in item.sources)
            item.sources = limited(index for index in mapped if index is not None)


def _sourced_items(lines: SourcedItems, active_task: str, request: SummaryRequest) -> SourcedItems:
    """The fitted sections' lines with the Active Task, as the text has them."""
    task = active_task if active_task != NO_REQUEST else ""
    items: SourcedItems = {}
    if task:
        index = request.latest_user_index
        items["Active Task"] = [
            SummaryItem(
                section_item_texts("Active Task", as_stored(task))[0],
                (index,) if index is not None else (),
                None if index is not None else "the latest request (not located)",
            )
        ]
    for name, section in lines.items():
        if section:
            items[name] = section
    return items


class ExtractiveSummarizer:
    """Deterministic, offline summariser; `last_details` reports what was kept and dropped."""

    name = "extractive"

    def __init__(self) -> None:
        self.last_details: dict[str, Any] = {}
        #: Each section's lines of the last summary with the messages they came from.
        self.last_items: SourcedItems = {}

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        started = time.perf_counter()
        turns = request.raw_turns or request.turns
        recorded = None
        if request.recorded is not None and request.turn_indices:
            recorded = request.recorded.working_directory_at(request.turn_indices[-1])
        findings = scan(
            turns,
            request.turns if request.raw_turns else None,
            request.pruned_tail_outputs,
            recorded,
            request.turn_marks if len(request.turn_marks) == len(turns) else None,
        )
        previous = None
        next_number = 1
        if request.previous_summary:
            parsed = parse_summary(request.previous_summary)
            if parsed.found_headings:
                previous = parsed
                _, next_number = previous_actions(parsed.sections["Completed Actions"])
        first_new = next_number
        if previous is not None:
            first_new += len(finished_in_progress(previous, findings))
        sections = build_sections(
            findings,
            len(turns),
            first_new,
            request.first_user_request,
            request.first_user_words,
        )
        moved: dict[str, Any] = {}
        if previous is not None:
            moved = merge_previous(sections, previous, findings, next_number, CARRIED)
        _cite_conversation(sections, request)
        for items in sections.values():
            for item in items:
                item.text = _redact(item.text)
        active_task = as_stored(redact(request.latest_user_request or "")) or NO_REQUEST
        counter = _line_counter(request)
        count_text = getattr(counter, "count_text", None)
        if not callable(count_text):  # every shipped counter has it; the protocol does not say so
            raise SummarizationError(
                f"the token counter for {request.model!r} cannot count plain text",
                kind="failed",
            )
        focus_words = stems(request.focus) if request.focus else None
        fitted = fit(active_task, sections, request.budget_tokens, count_text, focus_words)
        text = fitted.text
        self.last_items = _sourced_items(fitted.lines, fitted.active_task, request)
        self.last_details = {
            "summarizer": self.name,
            "turns": len(turns),
            "iterative": previous is not None,
            "next_action_number": next_number,
            "merged": moved,
            "focus_stems": sorted(focus_words) if focus_words else [],
            **fit_details(fitted, request.budget_tokens),
            "duration_s": round(time.perf_counter() - started, 4),
        }
        if on_token is not None:
            on_token(text)
        return text
