"""Tool-call arguments are parsed once per compress: Phase 1 reads the input check's parse
(input/parsed_arguments.py), and nothing of it outlives the compress."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from engine_helpers import call, calls, coding_session, tool, user

from compaction import CompactionConfig, Compactor
from compaction.cache import CompactionCache
from compaction.input import parsed_arguments
from compaction.input.checks import validate_messages
from compaction.messages import parse_arguments
from compaction.summarizers.base import StaticSummarizer


def test_the_checks_parse_is_shared_inside_and_only_inside() -> None:
    arguments = '{"command": "pytest -q", "cwd": "/src"}'
    messages = [user("go"), calls(call("c1", "terminal", arguments)), tool("c1", "ok")]
    with parsed_arguments.sharing():
        validate_messages(messages)
        kept = parsed_arguments.kept_object(arguments)
        assert kept == {"command": "pytest -q", "cwd": "/src"}
        assert parsed_arguments.arguments_object(arguments) is kept  # no second parse
    assert parsed_arguments.kept_object(arguments) is None
    assert parsed_arguments.arguments_object(arguments) == kept  # parsed again, outside


@pytest.mark.parametrize("arguments", ["[1, 2]", '"text"', "null", "{not json", ""])
def test_arguments_that_are_not_an_object_are_not_kept(arguments: str) -> None:
    messages = [user("go"), calls(call("c1", "terminal", arguments)), tool("c1", "ok")]
    with parsed_arguments.sharing():
        validate_messages(messages)
        assert parsed_arguments.kept_object(arguments) is None
        assert parsed_arguments.arguments_object(arguments) == parse_arguments(arguments) == {}


def test_each_thread_shares_only_its_own_parses() -> None:
    seen: dict[str, Any] = {}

    def other() -> None:
        seen["other"] = parsed_arguments.kept_object('{"a": 1}')

    with parsed_arguments.sharing():
        parsed_arguments.keep('{"a": 1}', {"a": 1})
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert parsed_arguments.kept_object('{"a": 1}') == {"a": 1}
    assert seen == {"other": None}


def test_a_compress_parses_each_calls_arguments_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold compress (summary stubbed: the extractive summariser reads calls its own way)
    decodes each distinct arguments string once, though Phase 1 cuts results to one line and
    shortens long calls, and leaves nothing kept when it returns."""
    import compaction.input.checks as checks
    import compaction.messages as messages_module
    import compaction.phases.prune as prune

    parsed: Counter[str] = Counter()
    real = messages_module.loads_json

    def counting(text: str) -> Any:
        parsed[text] += 1
        return real(text)

    for module in (checks, messages_module, prune):
        monkeypatch.setattr(module, "loads_json", counting)
    messages = coding_session(turns=30, output_chars=2_000)
    messages.insert(3, calls(call("long", "write_file", {"path": "a.py", "content": "x" * 900})))
    messages.insert(4, tool("long", "written"))
    config = CompactionConfig(context_length=8_000)
    result = Compactor(config, StaticSummarizer(), cache=CompactionCache()).compress(
        messages, force=True
    )
    prune_details = result.phases[0].details
    assert prune_details["summarised_count"] > 5 and prune_details["args_truncated_count"] >= 1
    arguments = {c["function"]["arguments"] for m in messages for c in m.get("tool_calls", [])}
    assert arguments and all(parsed[text] == 1 for text in arguments), parsed
    assert all(parsed_arguments.kept_object(text) is None for text in arguments)
