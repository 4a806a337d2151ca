"""OpenTelemetry spans (OTLP JSON) an agent exported: its model calls and its compactions.

Any agent instrumented with the GenAI semantic conventions writes a span per model call; an
agent compacting with this library (or Pydantic AI's compaction) writes a `compact_messages` span
per compaction (compaction/telemetry.py). Exported as OTLP JSON (the Collector's file exporter,
one document per line, or one document), the file opens here like a session file: the messages
the agent sent, rebuilt from the calls' recorded content (`transcript.py`), and each compaction
as a `RecordedCompaction` with the tokens before it as the compactor counted them — on the
Timeline and in Audit. The messages are on the spans only when the agent captured content
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`); a file of spans without any is an
error that says so.
"""

from __future__ import annotations

from collections import defaultdict

from compaction.errors import FormatError
from compaction.formats.common import first_user_text
from compaction.formats.conversation import Conversation, ImportReport
from compaction.formats.otel.spans import Span, is_otlp, spans_of
from compaction.formats.otel.transcript import Transcript, is_compaction
from compaction.formats.source import Document

NAME = "otel"
CONTENT_ATTRIBUTES = ("gen_ai.input.messages", "gen_ai.output.messages")


def sniff(doc: Document) -> tuple[bool, str]:
    objects = doc.objects()
    if objects and is_otlp(objects[0]):
        return True, "OTLP JSON: `resourceSpans` with OpenTelemetry spans"
    return False, "no OTLP `resourceSpans`"


def _read(doc: Document) -> list[Span]:
    if doc.kind == "jsonl":
        spans: list[Span] = []
        for record, line in zip(doc.records, doc.record_lines, strict=False):
            if is_otlp(record):
                spans.extend(spans_of(record, line))
        return spans
    return spans_of(doc.value)


def _conversation_key(trace: list[Span]) -> str:
    """A trace belongs to the conversation its spans name (`gen_ai.conversation.id`), so the
    runs of one conversation (one trace each) come together; else it is one of its own."""
    ids = {
        str(span.attributes["gen_ai.conversation.id"])
        for span in trace
        if span.attributes.get("gen_ai.conversation.id")
    }
    return f"conversation {ids.pop()}" if len(ids) == 1 else f"trace {trace[0].trace_id}"


def load(doc: Document) -> list[Conversation]:
    spans = _read(doc)
    if not spans:
        raise FormatError("an OTLP JSON file with no spans", source=doc.name)
    traces: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    groups: dict[str, list[Span]] = defaultdict(list)
    for trace in traces.values():
        groups[_conversation_key(trace)].extend(trace)
    conversations = [_conversation(key, group, doc) for key, group in groups.items()]
    found = [c for c in conversations if c.messages]
    if not found:
        compactions = sum(len(c.compactions) for c in conversations)
        raise FormatError(
            f"{len(spans)} spans ({compactions} compactions) but no messages on any of them: "
            "the agent did not capture content. Export again with "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (or your framework's "
            "include-content setting) to replay the session from its spans",
            source=doc.name,
        )
    return found


def _conversation(key: str, spans: list[Span], doc: Document) -> Conversation:
    report = ImportReport(records=len(spans))
    transcript = Transcript()
    # In the order they ended: a model call's span may open before the history it sends was
    # compacted (Pydantic AI's request span wraps its history processors), but it ends after.
    for span in sorted(spans, key=lambda s: (s.end_ns, s.start_ns)):
        if is_compaction(span):
            transcript.compaction(span)
        elif any(name in span.attributes for name in CONTENT_ATTRIBUTES):
            transcript.model_call(span)
        else:
            report.skip(
                "span without messages",
                "a span that records no messages (an agent run, a tool call, a call without "
                "captured content)",
                line=span.line,
            )
    transcript.finish()
    report.imported = transcript.used
    metadata: dict[str, object] = {"spans": len(spans), "grouped_by": key}
    if transcript.models:
        metadata["model"] = transcript.models[-1]
    # Our compaction spans record the settings: the window the agent compacted in is its own.
    windows = [
        s.attributes.get("compaction.config.context_length") for s in spans if is_compaction(s)
    ]
    window = next((w for w in reversed(windows) if isinstance(w, int) and w > 0), None)
    if window is not None:
        metadata["model_context_window"] = window
    service = next((s.resource.get("service.name") for s in spans), None)
    if isinstance(service, str):
        metadata["service"] = service
    return Conversation(
        messages=transcript.messages,
        format=NAME,
        title=first_user_text(transcript.messages) if transcript.messages else None,
        metadata=metadata,
        warnings=transcript.warnings,
        source=doc.name,
        compactions=transcript.compactions,
        report=report,
        calls=transcript.calls,
    )
