"""One OpenTelemetry span per compaction, the way agent frameworks report their work.

The span follows the GenAI semantic conventions where they speak (`gen_ai.conversation.compacted`
is true: the context from here on is a compacted view of the conversation; `gen_ai.conversation.id`
when an adapter knows it) and Pydantic AI's compaction span where they do not: it is named
`compact_messages` and carries `compaction.messages_before/after` and
`compaction.tokens_before/after`, plus what only this engine knows: the summary's size, the
fallback, every setting, the fates. `compaction.formats.otel` reads such spans back.

No cost without OpenTelemetry: nothing here imports it. A span is made only when the program
has already imported `opentelemetry.trace` (a tracer provider cannot be set without it) and the
provider records; otherwise a compaction pays one dictionary look-up. The conversation's text is
not put on the span unless the program opts in with the GenAI instrumentations' variable
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: then the summary and the messages
before and after (`gen_ai.input.messages`, `gen_ai.output.messages`, in the conventions' parts
form) are recorded, so the lab can replay the session from the spans alone.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from compaction.messages import Message
from compaction.result import CompactionResult
from compaction.tokens import TokenCounter

SPAN_NAME = "compact_messages"
INSTRUMENTATION_SCOPE = "compaction-lab"
CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
AttributeValue = str | int | float | bool


def capture_content() -> bool:
    return os.environ.get(CAPTURE_CONTENT_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def record_compaction_span(
    result: CompactionResult,
    messages: Sequence[Message],
    started_ns: int,
    counter: TokenCounter,
    extra: Mapping[str, AttributeValue] | None = None,
) -> None:
    """A `compact_messages` span for `result` (a compaction that ran), from `started_ns` to now,
    in the current context (a child of the agent's span when there is one). `counter` counts the
    summary; `extra` adds attributes (the conversation's id, the trigger)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or result.skipped:
        return
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return  # no provider set: nothing would record the span
    tracer = provider.get_tracer(INSTRUMENTATION_SCOPE)
    span = tracer.start_span(SPAN_NAME, start_time=started_ns)
    try:
        if span.is_recording():
            span.set_attributes(compaction_attributes(result, messages, counter, extra))
    finally:
        span.end()


def compaction_attributes(
    result: CompactionResult,
    messages: Sequence[Message],
    counter: TokenCounter | None = None,
    extra: Mapping[str, AttributeValue] | None = None,
) -> dict[str, AttributeValue]:
    """The span's attributes (primitive values only, as OpenTelemetry takes them)."""
    summary_text = result.summary.text if result.summary is not None else ""
    summary_tokens = (
        counter.count_message({"role": "user", "content": summary_text})
        if counter is not None and summary_text
        else 0
    )
    attributes: dict[str, AttributeValue] = {
        "gen_ai.conversation.compacted": True,
        "compaction.strategy": "compaction-lab",
        "compaction.messages_before": len(messages),
        "compaction.messages_after": len(result.messages),
        "compaction.tokens_before": result.tokens_before,
        "compaction.tokens_after": result.tokens_after,
        "compaction.savings_pct": round(result.savings_pct, 2),
        "compaction.summarizer": result.summarizer,
        "compaction.summary_tokens": summary_tokens,
        "compaction.summary_chars": len(summary_text),
        "compaction.fallback": result.fallback_used or "",
        "compaction.fits": bool(result.fit.fits) if result.fit is not None else True,
    }
    if result.fallback_reason:
        attributes["compaction.fallback_reason"] = result.fallback_reason[:500]
    model = result.config.get("model")
    if isinstance(model, str) and model:
        attributes["gen_ai.request.model"] = model
    for name, value in result.config.items():
        if isinstance(value, bool | int | float | str) and not name.startswith("_"):
            attributes[f"compaction.config.{name}"] = value
    for fate, count in Counter(str(f) for f in result.fates.values()).items():
        attributes[f"compaction.fates.{fate}"] = count
    if extra:
        attributes.update(extra)
    if capture_content():
        from compaction.formats.otel.parts import to_semconv_messages

        if summary_text:
            attributes["compaction.summary"] = summary_text
        attributes["gen_ai.input.messages"] = json.dumps(to_semconv_messages(messages))
        attributes["gen_ai.output.messages"] = json.dumps(to_semconv_messages(result.messages))
    return attributes


def span_settings(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a span records (`compaction.config.*`), by field name."""
    prefix = "compaction.config."
    return {k[len(prefix) :]: v for k, v in attributes.items() if k.startswith(prefix)}
