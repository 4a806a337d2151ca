"""OpenTelemetry for the span tests: the SDK's global tracer provider (it can be set once per
process), with an exporter that keeps spans only while a test listens, so the rest of the suite's
compactions cost no memory."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest


class Listening:
    """A span exporter forwarding to the sinks of the test that listens (none: dropped)."""

    def __init__(self) -> None:
        self.sinks: list[Any] = []
        self.lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        with self.lock:
            for sink in self.sinks:
                sink.export(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


_LISTENING: Listening | None = None


def _listening() -> Listening:
    global _LISTENING
    if _LISTENING is None:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        _LISTENING = Listening()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_LISTENING))  # type: ignore[arg-type]
        trace.set_tracer_provider(provider)
    return _LISTENING


@pytest.fixture
def span_sinks() -> Iterator[list[Any]]:
    """Add exporters to this list: they get every span ended during the test."""
    pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed")
    listening = _listening()
    sinks: list[Any] = []
    with listening.lock:
        listening.sinks = sinks
    yield sinks
    with listening.lock:
        listening.sinks = []
