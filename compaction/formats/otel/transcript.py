"""A conversation rebuilt from the spans an agent exported: its model calls and its compactions.

What an agent sent lives on its spans when content capture is on: each model call's
`gen_ai.input.messages` (and `gen_ai.system_instructions`) and `gen_ai.output.messages`, each
compaction's messages before and after. Walked in time order, the contexts grow: a call whose
input begins with the context held so far adds only what is new; a compaction replaces the
context; the transcript is everything sent, in order, and each compaction is recorded where the
compacted context begins (as an agent's own file records it). A context rewritten with no
compaction span to explain it is kept and said (a warning), never called a compaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.conversation import ModelCall, RecordedCompaction
from compaction.formats.otel.parts import from_semconv_messages
from compaction.formats.otel.spans import Span
from compaction.messages import Message
from compaction.summary import SUMMARY_PREFIX

COMPACTION_SPAN_NAMES = ("compact_messages",)


def is_compaction(span: Span) -> bool:
    """A span that reports one compaction: named like Pydantic AI's and ours, or carrying the
    compaction counts."""
    attributes = span.attributes
    return span.name in COMPACTION_SPAN_NAMES or (
        "compaction.tokens_before" in attributes or "compaction.messages_before" in attributes
    )


def system_messages(value: Any) -> list[Message]:
    """`gen_ai.system_instructions` (parts, or their JSON) as one system message."""
    parts = from_semconv_messages([{"role": "system", "parts": _parts(value)}])
    return [m for m in parts if m.get("content")]


def _parts(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [{"type": "text", "content": value}]
    return value if isinstance(value, list) else []


@dataclass
class Transcript:
    messages: list[Message] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    used: int = 0  # spans that contributed
    models: list[str] = field(default_factory=list)
    _held: list[Message] = field(default_factory=list)  # the agent's context right now
    _pending: RecordedCompaction | None = None
    _call_ids: set[Any] = field(default_factory=set)

    def _fresh(self, context: list[Message], previous: list[Message]) -> list[Message]:
        """The messages of a rewritten `context` the agent had not sent before: not in the
        previous context, and no tool result or tool call already in the transcript (a changed
        copy of one: the transcript keeps the original)."""
        before = {_key(m) for m in previous}
        fresh = []
        for message in context:
            if _key(message) in before:
                continue
            if message.get("role") == "tool" and message.get("tool_call_id") in self._call_ids:
                continue
            calls = [c.get("id") for c in message.get("tool_calls") or []]
            if calls and all(c in self._call_ids for c in calls):
                continue
            if message.get("role") == "system" and any(
                m.get("role") == "system" for m in self.messages
            ):
                continue  # the system prompt with compaction's note: the prompt is there
            fresh.append(message)
        return fresh

    def _add(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.messages.append(message)
            self._call_ids.update(c.get("id") for c in message.get("tool_calls") or [])

    def _hold(self, context: list[Message], span: Span) -> None:
        held = self._held
        if context[: len(held)] == held:
            self._add(context[len(held) :])
        else:
            # The context was rewritten: a compaction whose span carried no messages, or one
            # the spans do not tell.
            position = len(self.messages)
            fresh = self._fresh(context, held)
            self._add(fresh)
            if self._pending is not None:
                self._pending.position = position
                self.compactions.append(self._pending)
                self._pending = None
            else:
                self.warnings.append(
                    f"the context sent by span {span.name!r} ({_where(span)}) does not continue "
                    f"the one before it, and no compaction span says why: its {len(fresh)} new "
                    f"messages are kept from message {position} on"
                )
        self._held = list(context)

    def model_call(self, span: Span) -> None:
        attributes = span.attributes
        context = system_messages(attributes.get("gen_ai.system_instructions"))
        context += from_semconv_messages(attributes.get("gen_ai.input.messages"))
        self._hold(context, span)
        position = len(self.messages)
        output = from_semconv_messages(attributes.get("gen_ai.output.messages"))
        self._add(output)
        self._held.extend(output)
        model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
        if isinstance(model, str) and model:
            self.models.append(model)
        inputs = attributes.get("gen_ai.usage.input_tokens")
        if isinstance(inputs, int):
            outputs = attributes.get("gen_ai.usage.output_tokens")
            self.calls.append(
                ModelCall(
                    position=position,
                    input_tokens=inputs,
                    output_tokens=outputs if isinstance(outputs, int) else None,
                    model=model if isinstance(model, str) else None,
                    line=span.line,
                )
            )
        self.used += 1

    def compaction(self, span: Span) -> None:
        attributes = span.attributes
        before = from_semconv_messages(attributes.get("gen_ai.input.messages"))
        after = from_semconv_messages(attributes.get("gen_ai.output.messages"))
        if before:
            self._hold(before, span)
        tokens = attributes.get("compaction.tokens_before")
        summary = attributes.get("compaction.summary")
        recorded = RecordedCompaction(
            position=len(self.messages),
            agent=str(attributes.get("compaction.framework") or _agent(span)),
            trigger=str(attributes.get("compaction.trigger") or "unknown"),
            tokens_before=tokens if isinstance(tokens, int) else None,
            summary=summary if isinstance(summary, str) else _summary_in(after),
            line=span.line,
            tokens_source="agent" if isinstance(tokens, int) else None,
        )
        if after:
            self._add(self._fresh(after, self._held))
            self._held = list(after)
            self.compactions.append(recorded)
        else:
            if self._pending is not None:  # two compactions and no context between them
                self.compactions.append(self._pending)
            self._pending = recorded
        self.used += 1

    def finish(self) -> None:
        if self._pending is not None:
            self._pending.position = len(self.messages)
            self.compactions.append(self._pending)
            self._pending = None


def _key(message: Message) -> str:
    return json.dumps(message, sort_keys=True, default=str)


def _summary_in(messages: Iterable[Message]) -> str | None:
    """The summary message of a compacted context of ours (it opens with SUMMARY_PREFIX)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) and content.startswith(SUMMARY_PREFIX):
            return content[len(SUMMARY_PREFIX) :].lstrip()
    return None


def _agent(span: Span) -> str:
    service = span.resource.get("service.name")
    if isinstance(service, str) and service and service != "unknown_service":
        return service
    return span.scope or "otel"


def _where(span: Span) -> str:
    return f"line {span.line}" if span.line is not None else f"span {span.span_id or '?'}"
