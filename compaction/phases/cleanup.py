"""Phase 5: repair orphaned tool calls and results so the provider accepts the conversation.

An orphan is the classic compaction bug: a tool result whose call was summarised away, or a call
whose result was. Providers answer both with a 400. The fix is linear: one pass indexes the calls,
one pass emits each group with exactly its results, in call order of arrival, and repairs the rest.
Orphans already present in the input are fixed the same way, and the reason says which it was: a
result whose call was summarised away is compaction's own doing, one whose call never existed was
broken before compaction saw it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from compaction.messages import Message, call_name, has_tool_calls, tool_calls
from compaction.result import Fate, OrphanFix, PhaseResult
from compaction.text.one_liners import STUB_RESULT

CALL_REMOVED_TEXT = "(tool call removed)"
CALL_NEVER_IN_INPUT = "its call was never in the input"
CALL_SUMMARISED = "its call was summarised away with the middle of the conversation"


def cleanup(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    orphan_strategy: str,
    input_messages: Sequence[Message] | None = None,
) -> tuple[PhaseResult, list[OrphanFix]]:
    """Repair `messages`; `input_messages` is the conversation given to the compactor (None when
    `messages` is that conversation), so an orphan's reason can say where its call went."""
    started = time.perf_counter()
    # The latest non-tool message at or before each position: a result is in its group exactly
    # when that message is its call's message (computed once, so the check stays linear).
    group_head: list[int] = []
    latest = -1
    for position, message in enumerate(messages):
        if message.get("role") != "tool":
            latest = position
        group_head.append(latest)
    owner: dict[str, int] = {}  # call id -> position of the assistant message that made it
    names: dict[str, str] = {}
    for position, message in enumerate(messages):
        if has_tool_calls(message):
            for call in tool_calls(message):
                call_id = str(call.get("id"))
                if call_id not in owner:
                    owner[call_id] = position
                    names[call_id] = call_name(call)

    # Every call id of the input: only an orphan's reason reads it (most compactions have none,
    # and it is a pass over every input message), so it is gathered when first read.
    input_call_ids: set[str] | None = set(owner) if input_messages is None else None

    results: dict[int, list[int]] = {}  # assistant position -> positions of its results
    answered: set[str] = set()
    fixes: list[OrphanFix] = []
    dropped: set[int] = set()
    moved: set[int] = set()
    for position, message in enumerate(messages):
        if message.get("role") != "tool":
            continue
        call_id = str(message.get("tool_call_id"))
        source = owner.get(call_id)
        reason = None
        if source is None:
            if input_call_ids is None:
                input_call_ids = {
                    str(call.get("id"))
                    for message in input_messages or ()
                    for call in tool_calls(message)
                }
            reason = CALL_SUMMARISED if call_id in input_call_ids else CALL_NEVER_IN_INPUT
        elif source > position:
            reason = "it came before its call"
        elif call_id in answered:
            reason = "its call was already answered by an earlier result"
        if reason is not None:
            dropped.add(position)
            fixes.append(
                OrphanFix(
                    "removed_result", call_id, origins[position], None, reason, names.get(call_id)
                )
            )
            continue
        assert source is not None
        answered.add(call_id)
        results.setdefault(source, []).append(position)
        if group_head[position] != source:
            moved.add(position)

    output: list[Message] = []
    output_origins: list[int | None] = []
    fates: dict[int, str] = {}
    for position, message in enumerate(messages):
        if message.get("role") == "tool":
            continue  # emitted with its group, or dropped
        if not has_tool_calls(message):
            output.append(message)
            output_origins.append(origins[position])
            continue
        own_calls = [c for c in tool_calls(message) if owner.get(str(c.get("id"))) == position]
        if len(own_calls) != len(tool_calls(message)):
            # A call id already used by an earlier message: a second result could not be told
            # apart from the first, so the duplicate call is removed whatever the strategy.
            for call in tool_calls(message):
                if owner.get(str(call.get("id"))) != position:
                    fixes.append(
                        OrphanFix(
                            "stripped_call",
                            str(call.get("id")),
                            origins[position],
                            None,
                            "an earlier message already used this call id; removed",
                            call_name(call),
                        )
                    )
            message = _strip_calls(message, {str(c.get("id")) for c in own_calls})
            _set_fate(fates, origins[position], Fate.CALL_STRIPPED)
        missing = [c for c in own_calls if str(c.get("id")) not in answered]
        if missing and orphan_strategy == "strip":
            keep_ids = {str(c.get("id")) for c in own_calls} - {str(c.get("id")) for c in missing}
            message = _strip_calls(message, keep_ids)
            for call in missing:
                fixes.append(
                    OrphanFix(
                        "stripped_call",
                        str(call.get("id")),
                        origins[position],
                        None,
                        "the call lost its result; removed (orphan_strategy=strip)",
                        call_name(call),
                    )
                )
            _set_fate(fates, origins[position], Fate.CALL_STRIPPED)
        output.append(message)
        output_origins.append(origins[position])
        for result_position in results.get(position, []):
            if result_position in moved:
                fixes.append(
                    OrphanFix(
                        "moved_result",
                        str(messages[result_position].get("tool_call_id")),
                        origins[result_position],
                        len(output),
                        "the result was separated from its call; moved next to it",
                        names.get(str(messages[result_position].get("tool_call_id"))),
                    )
                )
                _set_fate(fates, origins[result_position], Fate.RESULT_MOVED)
            output.append(messages[result_position])
            output_origins.append(origins[result_position])
        if missing and orphan_strategy != "strip":
            for call in missing:
                call_id = str(call.get("id"))
                fixes.append(
                    OrphanFix(
                        "inserted_stub",
                        call_id,
                        origins[position],
                        len(output),
                        "the call lost its result; a stub result was inserted",
                        call_name(call),
                    )
                )
                output.append({"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT})
                output_origins.append(None)
            _set_fate(fates, origins[position], Fate.STUB_ADDED)
    for position in dropped:
        _set_fate(fates, origins[position], Fate.ORPHAN_REMOVED)
    details: dict[str, Any] = {
        "orphan_strategy": orphan_strategy,
        "fixes": [fix.to_dict() for fix in fixes],
        "removed_results": sum(1 for f in fixes if f.kind == "removed_result"),
        "inserted_stubs": sum(1 for f in fixes if f.kind == "inserted_stub"),
        "stripped_calls": sum(1 for f in fixes if f.kind == "stripped_call"),
        "moved_results": sum(1 for f in fixes if f.kind == "moved_result"),
    }
    result = PhaseResult(
        name="cleanup",
        messages=output,
        origins=output_origins,
        tokens_before=0,
        tokens_after=0,
        fates=fates,
        details=details,
        duration_s=time.perf_counter() - started,
    )
    return result, fixes


def _strip_calls(message: Message, keep_ids: set[str]) -> Message:
    kept = [c for c in tool_calls(message) if str(c.get("id")) in keep_ids]
    copy = {key: value for key, value in message.items() if key != "tool_calls"}
    if kept:
        copy["tool_calls"] = kept
    elif not copy.get("content"):
        copy["content"] = CALL_REMOVED_TEXT
    return copy


def _set_fate(fates: dict[int, str], origin: int | None, fate: str) -> None:
    if origin is not None and origin not in fates:
        fates[origin] = fate
