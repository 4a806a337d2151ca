"""hermes-agent: usage where its session file has it, and a note where it has none.

The session JSON (`{session_id, model, system_prompt, tools, messages}`) records no per-call
usage in any version seen: hermes keeps token counts per *session* (input, output, cache read and
write, reasoning) in its SQLite state database, not in this file. An assistant message that does
carry a `usage` object (an OpenAI-style `prompt_tokens`/`completion_tokens`, with the cached part
in `prompt_tokens_details.cached_tokens`, or Anthropic's `input_tokens` and cache fields) is read
as a call; totals at the top of the file are reported as a note, never spread over calls.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.conversation import ModelCall
from compaction.formats.usage import count, text

TOTAL_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _details(usage: dict[str, Any], key: str, field: str) -> int | None:
    details = usage.get(key)
    return count(details.get(field)) if isinstance(details, dict) else None


def call_of(usage: Any, position: int, model: str | None) -> ModelCall | None:
    """A message's `usage` object as a call (None when it is not one)."""
    if not isinstance(usage, dict):
        return None
    if count(usage.get("prompt_tokens")) is not None:  # OpenAI: the prompt holds the cache
        read = _details(usage, "prompt_tokens_details", "cached_tokens")
        write = count(usage.get("cache_creation_input_tokens"))
        return ModelCall(
            position=position,
            input_tokens=count(usage.get("prompt_tokens")),
            cache_read_tokens=read if read is not None else count(usage.get("cache_read_tokens")),
            cache_write_tokens=write,
            output_tokens=count(usage.get("completion_tokens")),
            reasoning_tokens=_details(usage, "completion_tokens_details", "reasoning_tokens"),
            model=model,
        )
    fresh = count(usage.get("input_tokens"))
    if fresh is None:
        return None
    read = count(usage.get("cache_read_input_tokens"))
    write = count(usage.get("cache_creation_input_tokens"))
    return ModelCall(
        position=position,
        input_tokens=fresh + (read or 0) + (write or 0),  # Anthropic: input is the fresh part
        cache_read_tokens=read,
        cache_write_tokens=write,
        output_tokens=count(usage.get("output_tokens")),
        model=model,
    )


def calls_of(value: dict[str, Any], offset: int, notes: list[str]) -> list[ModelCall]:
    """The calls of a hermes session's raw `messages` (message i is at position i + offset)."""
    model = text(value.get("model"))
    calls = []
    for index, message in enumerate(value.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            call = call_of(message.get("usage"), index + offset, model)
            if call is not None:
                calls.append(call)
    totals = {key: count(value.get(key)) for key in TOTAL_KEYS}
    if any(v is not None for v in totals.values()):
        shown = ", ".join(f"{key} {v:,}" for key, v in totals.items() if v is not None)
        notes.append(f"the file gives session totals only ({shown}): not per call")
    elif not calls:
        notes.append(
            "hermes writes no per-call usage in its session file (it keeps token totals per "
            "session in its state database)"
        )
    return calls
