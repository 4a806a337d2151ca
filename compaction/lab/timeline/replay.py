"""`simulate`: a session replayed through one Compactor, compacting at the threshold (the
rule is in the package docstring)."""

from __future__ import annotations

import time
from typing import Any

from compaction.compactor import INEFFECTIVE_REASON, Compactor
from compaction.config import CompactionConfig
from compaction.errors import InvalidConversationError
from compaction.input.checks import validate_messages
from compaction.lab.memory import with_lab_cache
from compaction.lab.timeline.records import (
    Step,
    Timeline,
    TimelineEvent,
    conversation_messages,
    may_compact_after,
)
from compaction.messages import Message, split_marks
from compaction.result import CompactionResult
from compaction.summarizers.base import Summarizer
from compaction.summary.recorded import SessionRecord


@with_lab_cache
def simulate(
    conversation: Any,
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
) -> Timeline:
    """Replay `conversation` (never modified) with automatic compaction; see the module doc."""
    started = time.perf_counter()
    messages, repairs = validate_messages(conversation_messages(conversation))
    messages, marks = split_marks(messages, getattr(conversation, "marks", None))
    compactor = Compactor(config, summarizer)
    config = compactor.config
    counter = compactor.counter
    threshold = config.threshold_tokens
    context: list[Message] = []
    context_marks: dict[int, str] = {}  # which messages of the context the harness sent
    running = 0
    steps: list[Step] = []
    events: list[TimelineEvent] = []
    open_skip: TimelineEvent | None = None  # the skipped event later skips fold into

    for index, message in enumerate(messages):
        if index in marks:
            context_marks[len(context)] = marks[index]
        context.append(message)
        running += counter.count_message(message)
        peak = running
        event_number: int | None = None
        model_call = may_compact_after(messages, index)
        if running >= threshold and model_call:
            suspended = compactor.ineffective_count >= config.max_ineffective
            # Over the window the provider rejects the call: the agent compacts anyway.
            forced = suspended and running > config.context_length
            if (
                suspended
                and not forced
                and open_skip is not None
                and open_skip.skip_reason == INEFFECTIVE_REASON
            ):
                # Anti-thrash holds until a manual compaction: the Compactor would skip again.
                open_skip.attempts += 1
                open_skip.last_step = index
                event_number = open_skip.number
            else:
                event = _compact(compactor, context, index, len(events), forced, context_marks)
                if (
                    event.skipped
                    and open_skip is not None
                    and (open_skip.skip_reason == event.skip_reason)
                ):
                    open_skip.attempts += 1
                    open_skip.last_step = index
                    event_number = open_skip.number
                else:
                    events.append(event)
                    event_number = event.number
                    open_skip = event if event.skipped else None
                if not event.skipped:
                    context = list(event.result.messages)
                    context_marks = dict(event.result.marks)
                    running = event.tokens_after
        steps.append(
            Step(
                index=index,
                role=str(message.get("role")),
                peak_tokens=peak,
                tokens=running,
                context_messages=len(context),
                event=event_number,
                model_call=model_call,
            )
        )
    return Timeline(
        steps=steps,
        events=events,
        window=config.context_length,
        threshold=threshold,
        config=config,
        summarizer=getattr(compactor.summarizer, "name", type(compactor.summarizer).__name__),
        repairs=repairs,
        duration_s=time.perf_counter() - started,
    )


def _compact(
    compactor: Compactor,
    context: list[Message],
    step: int,
    number: int,
    forced: bool = False,
    marks: dict[int, str] | None = None,
) -> TimelineEvent:
    began = time.perf_counter()
    record = SessionRecord(marks=tuple(sorted((marks or {}).items())))
    try:
        result = compactor.compress(context, force=forced, recorded=record)
    except InvalidConversationError as exc:
        # So far the transcript is nothing but tool results (no call made them): nothing of it
        # would survive, so the agent could not compact yet; a skip that says why.
        tokens = compactor.count_tokens(context)
        result = CompactionResult(
            messages=list(context),
            phases=[],
            tokens_before=tokens,
            tokens_after=tokens,
            skipped=True,
            skip_reason=exc.problem,
            ineffective_count=compactor.ineffective_count,
        )
    return TimelineEvent(
        number=number,
        step=step,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        messages_before=len(context),
        messages_after=len(result.messages),
        skipped=result.skipped,
        skip_reason=result.skip_reason,
        fallback_used=result.fallback_used,
        fallback_reason=result.fallback_reason,
        ineffective_count=result.ineffective_count,
        iterative=result.iterative,
        summary=result.summary.to_dict() if result.summary is not None else None,
        duration_s=time.perf_counter() - began,
        result=result,
        ineffective_pct=compactor.config.ineffective_savings_pct,
        window=compactor.config.context_length,
        forced=forced,
    )
