"""One OpenTelemetry span per compaction (compaction/telemetry.py), read with the SDK's
in-memory exporter; nothing imported or paid without OpenTelemetry."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from compaction import CompactionConfig, Compactor, Fate
from compaction.telemetry import CAPTURE_CONTENT_VARIABLE

CONFIG = CompactionConfig(
    context_length=3_000, threshold_ratio=0.5, summary_min_tokens=200, summary_max_tokens=500
)


def conversation(turns: int = 8) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a build assistant."},
        {"role": "user", "content": "Read the build log and say which test failed."},
    ]
    for n in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "read_page", "arguments": f'{{"page": {n}}}'},
                    }
                ],
            }
        )
        log = "\n".join(f"page {n} line {i}: test_{i} PASSED" for i in range(50))
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": log})
    return messages


def _exporter(span_sinks: list[Any]) -> Any:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    span_sinks.append(exporter)
    return exporter


def test_each_compaction_is_one_span_with_the_gen_ai_attributes(span_sinks: list[Any]) -> None:
    exporter = _exporter(span_sinks)
    compactor = Compactor(CONFIG)
    compactor.span_attributes = {"gen_ai.conversation.id": "conv-1"}
    messages = conversation()
    assert compactor.should_compress(messages)  # asking costs no span
    result = compactor.compress(messages)
    compactor.compress(messages[:2])  # below the threshold: skipped, no span

    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert span.name == "compact_messages"
    assert attributes["gen_ai.conversation.compacted"] is True
    assert attributes["gen_ai.conversation.id"] == "conv-1"
    assert attributes["compaction.tokens_before"] == result.tokens_before
    assert attributes["compaction.tokens_after"] == result.tokens_after
    assert attributes["compaction.messages_before"] == len(messages)
    assert attributes["compaction.messages_after"] == len(result.messages)
    assert attributes["compaction.trigger"] == "auto"
    assert attributes["compaction.fallback"] == ""
    assert attributes["compaction.summary_chars"] == len(result.summary.text)  # type: ignore[union-attr]
    assert attributes["compaction.summary_tokens"] > 0
    assert attributes["compaction.config.context_length"] == 3_000
    assert attributes["compaction.config.threshold_ratio"] == 0.5
    folded = sum(1 for fate in result.fates.values() if fate == Fate.FOLDED_INTO_SUMMARY)
    assert folded and attributes["compaction.fates.folded"] == folded
    assert "gen_ai.input.messages" not in attributes  # content only when asked for
    assert span.end_time is not None and span.start_time is not None
    assert span.end_time >= span.start_time


def test_content_capture_puts_the_messages_and_summary_on_the_span(
    span_sinks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction.formats.otel.parts import from_semconv_messages

    monkeypatch.setenv(CAPTURE_CONTENT_VARIABLE, "true")
    exporter = _exporter(span_sinks)
    messages = conversation()
    result = Compactor(CONFIG).compress(messages, force=True)
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert attributes["compaction.trigger"] == "manual"
    assert attributes["compaction.summary"] == result.summary.text  # type: ignore[union-attr]
    before = from_semconv_messages(json.loads(str(attributes["gen_ai.input.messages"])))
    after = from_semconv_messages(json.loads(str(attributes["gen_ai.output.messages"])))
    assert [m["role"] for m in before] == [m["role"] for m in messages]
    assert [m.get("content") for m in after] == [m.get("content") for m in result.messages]


def test_without_opentelemetry_nothing_is_imported_and_compaction_works() -> None:
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests/integrations')\n"
        "from test_telemetry import CONFIG, conversation\n"
        "from compaction import Compactor\n"
        "result = Compactor(CONFIG).compress(conversation(), force=True)\n"
        "assert not result.skipped\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_opentelemetry_imported_without_a_provider_records_nothing() -> None:
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests/integrations')\n"
        "import opentelemetry.trace\n"
        "from test_telemetry import CONFIG, conversation\n"
        "from compaction import Compactor\n"
        "print(Compactor(CONFIG).compress(conversation(), force=True).skipped)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
