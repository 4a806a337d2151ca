"""The provider's usage per model call, read from the formats that record it.

Each agent writes what its provider counted in its own shape, and each shape has one trap that
turns a right number into a wrong one:
- Claude Code streams one response as several records that repeat `message.id` (and, until the
  last one, a partial `output_tokens`): one call per id, its final output.
- Codex writes `token_count` events with the last call's usage *and* the session's running total;
  the running total is never a context size, and the same event can be written twice.
- Gemini CLI rewrites a message (same `id`) whenever it changes; its `tokens.input` already holds
  the cached part, and `thoughts` are billed as output but counted apart.
- hermes keeps its token totals in its own database, not in the session file.

The readers return `ModelCall`s (formats/conversation.py: `input_tokens` is always the whole
prompt) and notes for the import report: what was not counted as a call, and why. A count the
file does not give is None, never 0.
"""

from __future__ import annotations

from typing import Any


def count(value: Any) -> int | None:
    """A token count as recorded: a non-negative int (a bool is not one), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
