"""Spans to a file the lab opens: an OpenTelemetry `SpanExporter` that appends OTLP JSON.

An agent with no collector can still keep its traces where the app reads them:

```python
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from compaction.integrations.otlp_file import OtlpJsonFileExporter

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter("agent-spans.jsonl")))
trace.set_tracer_provider(provider)
```

Each export appends one line, `{"resourceSpans": [...]}`, in the protocol's JSON encoding (what
the Collector's file exporter writes: ids in hex, 64-bit integers as strings, attribute values
wrapped by type), so `compaction.formats.otel` reads it, and so does any OTLP JSON tool. Needs
the `compaction-lab[otel]` extra.
"""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


def any_value(value: Any) -> dict[str, Any]:
    """An attribute value in OTLP JSON's wrapped form."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Any) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": any_value(v)} for k, v in dict(attributes or {}).items()]


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    out: dict[str, Any] = {
        "traceId": format(context.trace_id, "032x") if context else "",
        "spanId": format(context.span_id, "016x") if context else "",
        "name": span.name,
        "kind": int(span.kind.value) + 1,  # the protocol counts from UNSPECIFIED = 0
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": _attributes(span.attributes),
        "status": {"code": int(span.status.status_code.value)},
    }
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
    return out


def otlp_document(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """One OTLP JSON document (`resourceSpans`) holding `spans`, grouped by resource and scope."""
    by_resource: dict[int, tuple[Any, dict[str, list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        _, scopes = by_resource.setdefault(id(resource), (resource, defaultdict(list)))
        scope = span.instrumentation_scope.name if span.instrumentation_scope else ""
        scopes[scope].append(_span(span))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(getattr(resource, "attributes", {}))},
                "scopeSpans": [
                    {"scope": {"name": scope}, "spans": found} for scope, found in scopes.items()
                ],
            }
            for resource, scopes in by_resource.values()
        ]
    }


class OtlpJsonFileExporter(SpanExporter):  # type: ignore[misc]
    """Appends each batch of spans to `path` as one OTLP JSON line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = json.dumps(otlp_document(spans), ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True
