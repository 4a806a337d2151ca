"""Invariants every compacted conversation must satisfy, shared by the property and corpus tests."""

from __future__ import annotations

from typing import Any

from compaction.messages import content_text, last_user_index, tool_calls
from compaction.summary import SYSTEM_NOTE, summary_parts

Message = dict[str, Any]


def tool_structure_problems(messages: list[Message]) -> list[str]:
    """Every result directly follows its call's group; every call is answered exactly once."""
    problems = []
    pending: set[str] = set()
    seen_calls: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"{index}: result {call_id!r} is not answering its group's call")
            pending.discard(call_id)
            continue
        if pending:
            problems.append(f"{index}: calls {sorted(pending)} left without results")
            pending = set()
        for call in tool_calls(message):
            call_id = call.get("id")
            if call_id in seen_calls:
                problems.append(f"{index}: call id {call_id!r} used twice")
            seen_calls.add(call_id)
            pending.add(call_id)
    if pending:
        problems.append(f"end: calls {sorted(pending)} left without results")
    return problems


def assert_well_formed_compaction(original: list[Message], result: Any, head_end: int) -> None:
    output = result.messages
    assert tool_structure_problems(output) == []
    if original[0].get("role") == "system":
        assert output[0]["role"] == "system"
        assert content_text(output[0]).startswith(content_text(original[0]))
        assert content_text(output[0]).count(SYSTEM_NOTE) <= 1
        assert all(m.get("role") != "system" for m in output[1:] if m is not output[0]) or any(
            m.get("role") == "system" for m in original[1:]
        )
    last_user = last_user_index(original)
    if last_user is not None:
        wanted = content_text(original[last_user])
        # An earlier pass may have merged its summary into this message: the user's words are
        # what follows the separator (a second pass replaces the summary part, as it should).
        parts = summary_parts(wanted)
        if parts is not None and parts.own_text:
            wanted = parts.own_text
        assert any(m.get("role") == "user" and wanted in content_text(m) for m in output), (
            "the latest user message must survive verbatim"
        )
    if not result.skipped:
        # The head is unchanged, apart from the note on the system message, orphan results that
        # Phase 5 removed and stub results it inserted (either would break the provider).
        origins = result.phases[-1].origins
        start = 1 if original[0].get("role") == "system" else 0
        surviving = [o for o in origins if o is not None and start <= o < head_end]
        expected = [i for i in range(start, head_end) if result.fates[i] != "removed"]
        assert surviving == expected
        for position, origin in enumerate(origins):
            # (strip removes an unanswered call, Fit cuts what cannot fit the window: that head
            # message may change)
            in_head = origin is not None and start <= origin < head_end
            if in_head and result.fates[origin] not in ("stripped", "cut_to_fit"):
                assert output[position] == original[origin]


def pinned_problems(original: list[Message], result: Any) -> list[str]:
    """Every message the pins kept (`result.pinned_indexes`) is in the output as it was given.

    Verbatim allows the two additions a compaction documents: the compaction note appended to
    the system message, and the summary merged in front of a message (its own text follows the
    separator). Nothing else of a pinned message may change."""
    origins = result.phases[-1].origins if result.phases else list(range(len(result.messages)))
    where = {origin: position for position, origin in enumerate(origins) if origin is not None}
    problems = []
    for index in result.pinned_indexes:
        if index not in where:
            problems.append(f"pinned #{index} is not in the output")
            continue
        kept, given = result.messages[where[index]], original[index]
        if kept == given:
            continue
        same_fields = {k: v for k, v in kept.items() if k != "content"} == {
            k: v for k, v in given.items() if k != "content"
        }
        text, wanted = content_text(kept), content_text(given)
        parts = summary_parts(text)
        if same_fields and (
            (text.startswith(wanted) and text[len(wanted) :].strip() == SYSTEM_NOTE)
            or (parts is not None and parts.own_text == wanted)
        ):
            continue
        problems.append(f"pinned #{index} changed: {given!r} became {kept!r}")
    return problems
