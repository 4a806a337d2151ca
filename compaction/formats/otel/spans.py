"""Spans from an OTLP JSON file: the OpenTelemetry protocol's JSON encoding, as the Collector's
file exporter and OTLP/HTTP JSON write it (one `{"resourceSpans": [...]}` document, or one per
line).

Attribute values arrive wrapped (`{"stringValue": …}`, `{"intValue": "12"}` — a 64-bit integer is
a JSON string —, `{"arrayValue": {"values": […]}}`, `{"kvlistValue": …}`); `value_of` unwraps
them to plain Python values. Ids are hex strings (the spec's JSON mapping), times nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""
    line: int | None = None  # the JSONL line, when the file is JSON Lines


def value_of(wrapped: Any) -> Any:
    """A plain value from an OTLP AnyValue."""
    if not isinstance(wrapped, dict):
        return wrapped
    if "stringValue" in wrapped:
        return wrapped["stringValue"]
    if "boolValue" in wrapped:
        return bool(wrapped["boolValue"])
    if "intValue" in wrapped:
        try:
            return int(wrapped["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in wrapped:
        try:
            return float(wrapped["doubleValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in wrapped:
        return [value_of(v) for v in (wrapped["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in wrapped:
        return attributes_of((wrapped["kvlistValue"] or {}).get("values"))
    if "bytesValue" in wrapped:
        return wrapped["bytesValue"]
    return None


def attributes_of(pairs: Any) -> dict[str, Any]:
    if not isinstance(pairs, list):
        return {}
    return {
        str(pair["key"]): value_of(pair.get("value"))
        for pair in pairs
        if isinstance(pair, dict) and "key" in pair
    }


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def is_otlp(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("resourceSpans"), list)


def spans_of(document: Any, line: int | None = None) -> list[Span]:
    """Every span of one OTLP JSON document (`{"resourceSpans": [...]}`)."""
    spans: list[Span] = []
    for resource_spans in document.get("resourceSpans") or []:
        if not isinstance(resource_spans, dict):
            continue
        resource = attributes_of((resource_spans.get("resource") or {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans") or []:
            if not isinstance(scope_spans, dict):
                continue
            scope = str((scope_spans.get("scope") or {}).get("name") or "")
            for raw in scope_spans.get("spans") or []:
                if not isinstance(raw, dict):
                    continue
                spans.append(
                    Span(
                        trace_id=str(raw.get("traceId") or ""),
                        span_id=str(raw.get("spanId") or ""),
                        parent_id=str(raw.get("parentSpanId") or ""),
                        name=str(raw.get("name") or ""),
                        start_ns=_nanos(raw.get("startTimeUnixNano")),
                        end_ns=_nanos(raw.get("endTimeUnixNano")),
                        attributes=attributes_of(raw.get("attributes")),
                        resource=resource,
                        scope=scope,
                        line=line,
                    )
                )
    return spans
