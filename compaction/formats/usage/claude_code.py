"""Claude Code's `message.usage`: one model call per distinct `message.id`.

One response is streamed as one record per content block; every record repeats the response's
`message.id` and usage, and the `output_tokens` of all but the last are the count so far (seen:
10 on five records, 441 on the sixth). A call is therefore the id, with the largest output
any of its records gives. Anthropic reports `input_tokens` without the cached parts, so the
prompt is input + cache writes + cache reads; `cache_creation.ephemeral_1h_input_tokens` says how
much of the write was at the 1-hour TTL (priced apart).

Not calls: records of the `<synthetic>` model (the client's own error messages) and responses
whose usage is all zero (a proxy that did not pass the provider's usage on). Each is a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compaction.formats.conversation import ModelCall
from compaction.formats.usage import count, text

SYNTHETIC = "<synthetic>"


def _usage(record: dict[str, Any]) -> dict[str, Any]:
    message = record.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    return usage if isinstance(usage, dict) else {}


def calls_of(
    records: Sequence[tuple[int, dict[str, Any]]],
    positions: Mapping[str, int],
    notes: list[str],
) -> list[ModelCall]:
    """The calls of the assistant records in `records` (line, record), in file order.

    `positions` maps a `message.id` to the index of the assistant message it became; a call
    whose id has none is noted (a usage record without a message), not placed.
    """
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for line, record in records:
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            continue
        key = text(message.get("id")) or text(record.get("uuid")) or f"line {line}"
        groups.setdefault(key, []).append((line, record))
    calls: list[ModelCall] = []
    synthetic: list[int] = []
    zero: list[int] = []
    unplaced: list[int] = []
    for key, group in groups.items():
        line, first = group[0]
        message = first["message"]
        model = text(message.get("model"))
        if model == SYNTHETIC:
            synthetic.append(line)
            continue
        usages = [_usage(record) for _, record in group]
        final = max(usages, key=lambda usage: count(usage.get("output_tokens")) or 0)
        fresh = count(final.get("input_tokens"))
        write = count(final.get("cache_creation_input_tokens"))
        read = count(final.get("cache_read_input_tokens"))
        output = count(final.get("output_tokens"))
        if fresh is None and output is None:
            continue  # no Anthropic usage here (another shape is another reader's)
        if not any((fresh, write, read, output)):
            zero.append(line)
            continue
        position = positions.get(key)
        if position is None:
            unplaced.append(line)
            continue
        split = final.get("cache_creation")
        split = split if isinstance(split, dict) else {}
        one_hour = count(split.get("ephemeral_1h_input_tokens"))
        calls.append(
            ModelCall(
                position=position,
                input_tokens=(fresh or 0) + (write or 0) + (read or 0),
                cache_read_tokens=read,
                cache_write_tokens=write,
                cache_write_1h_tokens=one_hour,
                output_tokens=output,
                model=model,
                timestamp=text(first.get("timestamp")),
                line=line,
                call_id=key if text(message.get("id")) else None,
            )
        )
    if synthetic:
        notes.append(
            f"{len(synthetic)} assistant response(s) of the `<synthetic>` model (Claude Code's own "
            "error messages, no model call) carry no usage"
        )
    if zero:
        notes.append(
            f"{len(zero)} response(s) record a usage of all zeros (first on line {zero[0]}): the "
            "provider's counts did not reach the file, so these calls have no usage (not zero)"
        )
    if unplaced:
        notes.append(
            f"{len(unplaced)} usage record(s) without a message in the conversation (first on "
            f"line {unplaced[0]}): their usage is left out"
        )
    return sorted(calls, key=lambda call: (call.position, call.line or 0))
