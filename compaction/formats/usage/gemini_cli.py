"""Gemini CLI's per-message `tokens`: one model call per `gemini` message.

`tokens` is `{input, output, cached, thoughts, tool, total}` with `total = input + output +
thoughts + tool`: Gemini's `promptTokenCount` (`input`) already holds the cached part
(`cachedContentTokenCount`), `thoughts` are billed as output but counted apart, and `tool` is the
tool-use prompt (0 in every file seen), added to the prompt. The JSONL recording writes a
message again (same `id`) when it changes; the importer keeps its last version, so each id is one
call. stream-json records only per-run totals (`result.stats`), which are not calls.
"""

from __future__ import annotations

from typing import Any

from compaction.formats.conversation import ModelCall
from compaction.formats.usage import count, text


def call_of(entry: dict[str, Any], position: int, line: int | None) -> ModelCall | None:
    """The call of a `gemini` message, or None when it records no tokens."""
    tokens = entry.get("tokens")
    if not isinstance(tokens, dict):
        return None
    prompt, output = count(tokens.get("input")), count(tokens.get("output"))
    if prompt is None and output is None:
        return None
    thoughts, tool = count(tokens.get("thoughts")), count(tokens.get("tool"))
    return ModelCall(
        position=position,
        input_tokens=None if prompt is None else prompt + (tool or 0),
        cache_read_tokens=count(tokens.get("cached")),
        cache_write_tokens=None,  # implicit caching: no write is billed or reported
        output_tokens=None if output is None else output + (thoughts or 0),
        reasoning_tokens=thoughts,
        model=text(entry.get("model")),
        timestamp=text(entry.get("timestamp")),
        line=line,
        call_id=text(entry.get("id")),
    )
