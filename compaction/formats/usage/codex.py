"""Codex's `token_count` events: the last call's usage, never the running total.

`info.last_token_usage` is the call that just finished (`input_tokens` holds the cached part, as
OpenAI counts it; `output_tokens` holds the reasoning); `info.total_token_usage` is the sum over
the session so far — 10.9M in a rollout whose window is 258,400 — and is never a context size.
It is still useful: a `token_count` whose running total did not move reports no new call (Codex
writes the same event again around turn starts and compactions), so the running total is the
key that tells one call from a repeat. After a compaction Codex writes a `token_count` of zeros
whose `total_tokens` is the compacted context; it is not a call either.

`info.model_context_window` is the window Codex itself worked with (258,400 for gpt-5.4, where
litellm's map says 1,050,000): it is kept in the conversation's metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.conversation import ModelCall
from compaction.formats.usage import count, text


@dataclass
class CodexUsage:
    """Reads a rollout's `token_count` events in file order into ModelCalls."""

    calls: list[ModelCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    window: int | None = None
    last_total: str | None = None
    repeats: int = 0
    empty: int = 0

    def token_count(
        self, info: Any, line: int, timestamp: Any, position: int, model: str | None
    ) -> None:
        """One `token_count` event; `position` is where its call's assistant message is."""
        if not isinstance(info, dict):
            return  # rate limits only
        window = count(info.get("model_context_window"))
        if window:
            self.window = window
        last = info.get("last_token_usage")
        total = info.get("total_token_usage")
        key = json.dumps(total, sort_keys=True) if isinstance(total, dict) else None
        if key is not None and key == self.last_total:
            self.repeats += 1
            return
        if key is not None:
            self.last_total = key
        if not isinstance(last, dict):
            return
        prompt = count(last.get("input_tokens"))
        output = count(last.get("output_tokens"))
        if not prompt and not output:
            self.empty += 1
            return
        self.calls.append(
            ModelCall(
                position=position,
                input_tokens=prompt,
                cache_read_tokens=count(last.get("cached_input_tokens")),
                # OpenAI bills no cache write and reports none: unknown, not zero.
                cache_write_tokens=None,
                output_tokens=output,
                reasoning_tokens=count(last.get("reasoning_output_tokens")),
                model=model,
                timestamp=text(timestamp),
                line=line,
            )
        )

    def finish(self) -> list[str]:
        """The notes for the import report."""
        notes = list(self.notes)
        if self.repeats:
            notes.append(
                f"{self.repeats} `token_count` event(s) repeat the previous one (the running "
                "total did not move): not counted as calls"
            )
        if self.empty:
            notes.append(
                f"{self.empty} `token_count` event(s) with no input or output (written after a "
                "compaction): not calls"
            )
        return notes
