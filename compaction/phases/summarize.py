"""Phase 3: the structured summary of the middle — the summariser's run, its provenance and the
fallback (the prompt it is given is phases/summary_prompt.py).

The Compactor, not the summariser, decides to fall back: every summariser then degrades the same
way and the result says plainly which fallback was used and why.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, later_details, resolve
from compaction.errors import SummarizationError
from compaction.messages import (
    SLASH_COMMAND,
    Marks,
    Message,
    content_text,
    is_user_request,
    last_user_index,
    mark_of,
)
from compaction.phases.boundaries import indices_between
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.result import Fate, PhaseResult
from compaction.summarizers.base import OnToken, Summarizer, SummaryRequest
from compaction.summary import (
    SECTION_NAMES,
    SUMMARY_OPENINGS,
    Summary,
    parse_cited_summary,
    parse_summary,
    render_summary,
    section_item_texts,
    static_marker,
    strip_summary_prefix,
    summary_parts,
)
from compaction.summary.check import SummaryScope, check_summary
from compaction.summary.items import CARRIED, SummaryItem
from compaction.summary.recorded import SessionRecord
from compaction.text.one_liners import DUPLICATE_MARKER, is_already_pruned
from compaction.text.user_words import own_words, request_text
from compaction.tokens import TokenCounter


@dataclass
class SummaryOutcome:
    text: str  # the summary text as it goes into the summary message
    summary: Summary | None  # parsed sections (None for the static marker)
    fallback_used: str | None
    fallback_reason: str | None


def find_previous_summaries(
    messages: Sequence[Message], start: int, stop: int | None = None
) -> list[tuple[int, str]]:
    """(index, body) of messages in messages[start:stop] that are compaction summaries and
    nothing else (ours, hermes' or Claude Code's; see summary.summary_parts)."""
    found = []
    end = len(messages) if stop is None else stop
    for index in range(start, end):
        content = messages[index].get("content")
        if isinstance(content, str):
            if not content.startswith(SUMMARY_OPENINGS):
                continue  # nearly every message: no call made for it
            text = content
        else:
            text = content_text(messages[index])
        parts = summary_parts(text) if text else None
        if parts is not None and parts.own_text is None:
            found.append((index, parts.body))
    return found


def split_merged_summaries(
    messages: list[Message], start: int
) -> tuple[list[Message], list[tuple[int, str]]]:
    """Give each message from `start` on that an earlier compaction merged the summary into its
    own text back; returns the messages (the same list when none was merged) and the (index,
    body) of each summary split off.

    Phase 3 step 1: only the part before the merge is the previous summary; the rest is that
    message's own text — when it is the latest request, it must stay the latest request.
    """
    split: list[tuple[int, str]] = []
    output = messages
    for index in range(start, len(messages)):
        message = messages[index]
        content = message.get("content")
        own: Any = None
        body: str | None = None
        if isinstance(content, str):
            if not content.startswith(SUMMARY_OPENINGS):
                continue  # nearly every message: no call made for it
            parts = summary_parts(content)
            if parts is not None and parts.own_text is not None:
                body, own = parts.body, parts.own_text or None
        elif isinstance(content, list) and content and isinstance(content[0], dict):
            first = content[0].get("text")
            parts = summary_parts(first) if isinstance(first, str) else None
            if parts is not None and parts.own_text is not None:
                body, own = parts.body, content[1:] or None
                if parts.own_text:
                    own = [{**content[0], "text": parts.own_text}, *content[1:]]
        if body is None:
            continue
        if output is messages:
            output = list(messages)
        output[index] = {**message, "content": own}
        split.append((index, body))
    return output, split


def summarize_phase(
    messages: list[Message],
    raw_messages: Sequence[Message],
    head_end: int,
    tail_start: int,
    middle_tokens: int | Deferred[int],
    config: CompactionConfig,
    summarizer: Summarizer,
    previous_summary: str | None = None,
    focus: str | None = None,
    on_token: OnToken | None = None,
    fallback_summarizer: Summarizer | None = None,
    *,
    pinned: int | None = None,
    kept: Collection[int] = (),
    merged_previous: Sequence[tuple[int, str]] = (),
    counter: TokenCounter | None = None,
    fit_outputs: Sequence[tuple[int, str]] = (),
    recorded: SessionRecord | None = None,
    marks: Marks | None = None,
    budget: int | None = None,
) -> tuple[PhaseResult, SummaryOutcome, set[int]]:
    """Summarise messages[head_end:tail_start] but the pinned request and the middle messages
    the user pinned (`kept`: both stay verbatim after the summary). Returns the phase, the
    outcome and the indices of earlier summary messages taken out of the conversation.

    `merged_previous` are the summaries split off merged messages (split_merged_summaries); the
    latest earlier summary, wherever it was, is the previous summary. `fit_outputs` are the
    (index, raw text) of what Fit is expected to cut from the head and tail (see
    compactor.expected_fit_cuts): they join `pruned_tail_outputs`, so the summary may keep their
    facts. `recorded` is what the session file recorded beside the messages (the working
    directory), which the summary states as fact over what the turns suggest; `marks` which
    user turns the harness sent (never the user's request, rules or questions).

    Every item of the summary carries the messages it came from (summary/items.py), and the
    provenance check (summary/check.py) flags any item its sources do not bear out.
    """
    started = time.perf_counter()
    previous = find_previous_summaries(messages, head_end)
    taken_out = {index for index, _ in previous}
    found = sorted([*previous, *merged_previous])
    if found:
        previous_summary = found[-1][1]
    skipped = taken_out | ({pinned} if pinned is not None else set()) | set(kept)
    middle_indices = indices_between(head_end, tail_start, skipped)
    middle = [messages[i] for i in middle_indices]
    raw_middle = [raw_messages[i] for i in middle_indices]
    if budget is None:  # `budget`: the summary budget as the caller decided it (tokens/tally.py)
        budget = config.summary_budget(resolve(middle_tokens))
    latest_index = last_user_index(messages, marks=marks)
    latest_user = request_text(messages[latest_index]) if latest_index is not None else None
    first_index = _first_request_index(messages, marks)
    first_message = messages[first_index] if first_index is not None else None
    pruned = [
        *_pruned_tail_outputs(messages, raw_messages, tail_start),
        *fit_outputs,
    ]
    # The turns as a model reads them and the prompt: made when read (a model's summariser, the
    # Phase 3 view), never for a summariser that reads the messages themselves.
    serialized = Deferred(lambda: serialize_turns(middle, middle_indices))
    latest = (
        (latest_index, latest_user)
        if latest_index is not None and latest_user and latest_index not in middle_indices
        else None
    )
    request = SummaryRequest(
        turns=middle,
        serialized=serialized,
        budget_tokens=budget,
        prompt=Deferred(
            lambda: build_prompt(serialized.value, budget, previous_summary, focus, latest)
        ),
        previous_summary=previous_summary,
        focus=focus or None,
        latest_user_request=latest_user,
        raw_turns=raw_middle,
        first_user_request=request_text(first_message) if first_message is not None else None,
        model=config.model,
        pruned_tail_outputs=[text for _, text in pruned],
        counter=counter,
        turn_indices=middle_indices,
        pruned_tail_indices=[index for index, _ in pruned],
        latest_user_index=latest_index,
        first_user_index=first_index,
        first_user_words=(
            own_words(first_message, mark_of(first_message, first_index, marks))
            if first_message is not None and first_index is not None
            else None
        ),
        turn_marks=[mark_of(messages[i], i, marks) for i in middle_indices],
        recorded=recorded,
    )
    outcome, error, used = _run_summarizer(summarizer, request, on_token, fallback_summarizer)
    if outcome.summary is not None:
        scope = SummaryScope(
            total=len(messages),
            summarised=frozenset(middle_indices),
            opening=first_index,
            pruned=frozenset(index for index, _ in pruned),
            previous_summary=previous_summary,
            marks=marks,
        )
        _attach_provenance(outcome.summary, used, request, scope, raw_messages)
    fates: dict[int, str] = dict.fromkeys(middle_indices, Fate.FOLDED_INTO_SUMMARY)
    fates.update({i: Fate.PREVIOUS_SUMMARY_REPLACED for i in taken_out})
    sent_prompt = getattr(summarizer, "last_prompt", None)  # what it sent, as it is now
    details: dict[str, Any] = {
        "summarizer": getattr(summarizer, "name", type(summarizer).__name__),
        "iterative": previous_summary is not None,
        "previous_summary": previous_summary,
        "previous_summary_indices": sorted(taken_out),
        "merged_summary_indices": [index for index, _ in merged_previous],
        "pinned_index": pinned,
        **({"kept_pinned": sorted(kept)} if kept else {}),
        "focus": focus or None,
        "budget_tokens": budget,
        "middle_tokens": None,  # below, with the prompt: made when read
        "turns": len(middle),
        "pruned_tail_outputs": len(request.pruned_tail_outputs),
        # What was sent: a summariser that calls a model keeps the redacted prompt it sent.
        "prompt": None,
        "latest_user_request": latest_user,
        "latest_user_index": latest_index,
        "latest_user_command": _command_of(
            messages[latest_index], mark_of(messages[latest_index], latest_index, marks)
        )
        if latest_index is not None
        else None,
        "summary_text": outcome.text,
        "fallback_used": outcome.fallback_used,
        "fallback_reason": outcome.fallback_reason,
        "error": error,
        "summarizer_details": dict(getattr(summarizer, "last_details", {}) or {}),
        "provenance": _provenance_details(outcome.summary),
    }
    result = PhaseResult(
        name="summarize",
        messages=messages,
        origins=list(range(len(messages))),
        tokens_before=0,
        tokens_after=0,
        fates=fates,
        details=later_details(
            details,
            {
                "middle_tokens": lambda: resolve(middle_tokens),
                "prompt": lambda: sent_prompt if isinstance(sent_prompt, str) else request.prompt,
            },
        ),
        duration_s=time.perf_counter() - started,
    )
    return result, outcome, taken_out


def _command_of(message: Message, mark: str | None) -> str | None:
    """`/create-checkpoint` when the latest request is a slash command the user invoked."""
    if mark != SLASH_COMMAND:
        return None
    first = request_text(message).split(None, 1)
    return first[0] if first and first[0].startswith("/") else None


def _attach_provenance(
    summary: Summary,
    summarizer: Summarizer | None,
    request: SummaryRequest,
    scope: SummaryScope,
    raw_messages: Sequence[Message],
) -> None:
    """Each section's items with their sources, from the summariser that wrote the summary
    (`last_items`) or else from the citations in its text; then the check."""
    items = getattr(summarizer, "last_items", None) if summarizer is not None else None
    verbatim = isinstance(items, dict)  # a summariser that knows its sources quotes them
    if isinstance(items, dict) and items:
        for name in SECTION_NAMES:
            section = items.get(name) or []
            texts = section_item_texts(name, summary.sections[name])
            if [item.text for item in section] == texts:
                summary.items[name] = list(section)
            elif texts:  # the text was changed after the summariser wrote it: cite nothing
                summary.items[name] = [
                    SummaryItem(text, (), None, ("no source",)) for text in texts
                ]
    task = summary.items.get("Active Task")
    if task and not task[0].sources and request.latest_user_index is not None:
        # A model copies the request from the tail, where there is no number to cite.
        summary.items["Active Task"] = [SummaryItem(task[0].text, (request.latest_user_index,))]
    if scope.previous_summary:
        _mark_carried(summary, scope.previous_summary)
    check_summary(summary, raw_messages, scope, verbatim)


def _mark_carried(summary: Summary, previous: str) -> None:
    """An uncited item whose text the previous summary holds was kept from it (a model is told
    that such an item needs no citation)."""
    kept = {line.strip() for line in previous.splitlines() if line.strip()}
    for name, items in summary.items.items():
        summary.items[name] = [
            SummaryItem(item.text, (), CARRIED, ())
            if not item.sources and item.origin is None and item.text.strip() in kept
            else item
            for item in items
        ]


def _provenance_details(summary: Summary | None) -> dict[str, Any] | None:
    """How many items cite a message and how many the check flagged, for the phase's details."""
    if summary is None or not summary.items:
        return None
    items = [item for section in summary.items.values() for item in section]
    return {
        "items": len(items),
        "cited": sum(1 for item in items if item.sources),
        "flagged": sum(1 for item in items if item.flags),
    }


def _run_summarizer(
    summarizer: Summarizer,
    request: SummaryRequest,
    on_token: OnToken | None,
    fallback_summarizer: Summarizer | None,
) -> tuple[SummaryOutcome, dict[str, Any] | None, Summarizer | None]:
    """The outcome, the error that made it fall back, and the summariser that wrote it."""
    try:
        text = strip_summary_prefix(summarizer.summarize(request, on_token=on_token))
    except SummarizationError as exc:
        error = {"kind": exc.kind, "message": str(exc), **exc.details}
        error.setdefault("error_class", type(exc).__name__)
        reason = f"{exc.kind}: {exc}"
        wants_extractive = getattr(summarizer, "fallback", "static") == "extractive"
        if wants_extractive and fallback_summarizer is not None:
            text = fallback_summarizer.summarize(request)
            parsed = parse_summary(text)
            outcome = SummaryOutcome(render_summary(parsed), parsed, "extractive", reason)
            return outcome, error, fallback_summarizer
        outcome = SummaryOutcome(static_marker(request.turn_count), None, "static", reason)
        return outcome, error, None
    if getattr(summarizer, "name", "") == "static":
        return SummaryOutcome(text, None, None, None), None, summarizer
    if isinstance(getattr(summarizer, "last_items", None), dict):
        parsed = parse_summary(text)
    else:
        # A model's summary: its `[#N]` citations become the items' sources, and leave the
        # text the agent reads (the numbers mean nothing once the turns are gone).
        parsed, _ = parse_cited_summary(text)
    if parsed.found_headings == 0:
        reason = "failed: the summary had none of the 13 section headings"
        error = {"kind": "failed", "message": reason, "error_class": "InvalidSummary"}
        outcome = SummaryOutcome(static_marker(request.turn_count), None, "static", reason)
        return outcome, error, None
    return SummaryOutcome(render_summary(parsed), parsed, None, None), None, summarizer


def _pruned_tail_outputs(
    messages: Sequence[Message], raw_messages: Sequence[Message], tail_start: int
) -> list[tuple[int, str]]:
    """(index, raw text) of each tail tool output that Phase 1 replaced with its one-liner.

    (A duplicate marker is not one of them: the newest copy of that output is still there.)
    """
    outputs = []
    for index in range(tail_start, min(len(messages), len(raw_messages))):
        message = messages[index]
        content = message.get("content")
        if (
            message.get("role") == "tool"
            and isinstance(content, str)
            and content != DUPLICATE_MARKER
            and is_already_pruned(content)
            and content_text(raw_messages[index]) != content
        ):
            outputs.append((index, content_text(raw_messages[index])))
    return outputs


def _first_request_index(messages: Sequence[Message], marks: Marks | None) -> int | None:
    """The user's first request (their own turn or a slash command), not an earlier summary."""
    for index, message in enumerate(messages):
        if is_user_request(message, mark_of(message, index, marks)):
            return index
    return None
