"""Tool calls paired with their results, as trace viewers show spans: one unit per call with the
tool's name, its arguments formatted, the result's exit status and size.

`pair_tool_calls` is one pass to index results by call id and one over the calls (linear in the
messages); the view is one dataframe of every call (virtualised by the browser) and the selected
pair drawn in full.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from compaction.messages import Message, call_arguments, call_name, content_text, tool_calls
from compaction.text.one_liners import exit_code as text_exit_code
from compaction.text.tool_output import parse_tool_output
from compaction.ui.layout import fitted_height
from compaction.ui.text_views import render_tool_output
from compaction.ui.untrusted import md_code, md_escape

PAIR_KEY = "tool_pair_open"
ARGUMENT_PREVIEW = 80


@dataclass(frozen=True)
class ToolPair:
    """One call and its result (None when the conversation holds no result for it)."""

    call_index: int
    call_id: str
    name: str
    arguments: str
    result_index: int | None
    result_chars: int
    result_tokens: int
    exit_code: int | None
    error: str | None

    @property
    def status(self) -> str:
        """ "ok (exit 0)", "failed (exit 2)", "error", "no result", or "—" when not reported."""
        if self.result_index is None:
            return "no result"
        if self.exit_code is not None:
            return f"{'ok' if self.exit_code == 0 else 'failed'} (exit {self.exit_code})"
        return "error" if self.error else "—"

    @property
    def status_icon(self) -> str:
        if self.result_index is None:
            return "⚠️"
        if self.exit_code not in (None, 0) or self.error:
            return "❌"
        return "✅" if self.exit_code == 0 else "▫️"


def result_index(messages: Sequence[Message]) -> dict[str, int]:
    """tool_call_id -> index of the first tool result answering it."""
    found: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id not in found:
                found[call_id] = index
    return found


def pair_tool_calls(messages: Sequence[Message], tokens: Sequence[int]) -> list[ToolPair]:
    """Every tool call in order, with its result's index, size, exit status and error."""
    results = result_index(messages)
    pairs: list[ToolPair] = []
    for index, message in enumerate(messages):
        for call in tool_calls(message):
            call_id = str(call.get("id", ""))
            where = results.get(call_id)
            chars = 0
            code: int | None = None
            error: str | None = None
            result_tokens = 0
            if where is not None:
                raw = content_text(messages[where])
                parsed = parse_tool_output(raw)
                chars = len(parsed.text)
                code = parsed.exit_code if parsed.wrapped else text_exit_code(raw)
                error = parsed.error
                result_tokens = tokens[where] if where < len(tokens) else 0
            pairs.append(
                ToolPair(
                    call_index=index,
                    call_id=call_id,
                    name=call_name(call),
                    arguments=call_arguments(call),
                    result_index=where,
                    result_chars=chars,
                    result_tokens=result_tokens,
                    exit_code=code,
                    error=error,
                )
            )
    return pairs


def pretty_arguments(arguments: str) -> str:
    """Arguments as indented JSON when they are JSON, else as given."""
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return arguments


def arguments_line(arguments: str, limit: int = ARGUMENT_PREVIEW) -> str:
    """Arguments on one line: `key=value` pairs of a JSON object, else the text folded."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        text = ", ".join(f"{key}={_scalar(item)}" for key, item in value.items())
    else:
        text = " ".join(arguments.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scalar(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def pair_rows(pairs: Sequence[ToolPair]) -> dict[str, list[Any]]:
    """Columns of the tool-call table: one row per call and its result."""
    return {
        "call #": [p.call_index for p in pairs],
        "tool": [p.name for p in pairs],
        "arguments": [arguments_line(p.arguments) for p in pairs],
        "result #": [p.result_index for p in pairs],
        "status": [f"{p.status_icon} {p.status}" for p in pairs],
        "result chars": [p.result_chars for p in pairs],
        "result tokens": [p.result_tokens for p in pairs],
    }


def pair_heading(pair: ToolPair) -> str:
    """The unit's title line (Markdown, with the untrusted tool name in a code span)."""
    answered = "no result" if pair.result_index is None else f"result #{pair.result_index}"
    size = (
        f" · {pair.result_chars:,} chars, {pair.result_tokens:,} tokens"
        if pair.result_index is not None
        else ""
    )
    return (
        f"🔧 {md_code(pair.name)} · call #{pair.call_index} → {answered} · "
        f"{pair.status_icon} {md_escape(pair.status)}{size}"
    )


def render_pair(pair: ToolPair, messages: Sequence[Message], key: str) -> None:
    """One call and its result as a unit: heading, arguments, the output (formatted or raw)."""
    with st.container(border=True, key=f"{key}_unit"):
        st.markdown(pair_heading(pair))
        st.caption(f"call id {md_code(pair.call_id or '?')}")
        st.code(
            pretty_arguments(pair.arguments) or "(no arguments)", language="json", wrap_lines=True
        )
        if pair.result_index is None:
            st.caption("The conversation holds no result for this call.")
            return
        render_tool_output(content_text(messages[pair.result_index]), f"{key}_output")


def _select(key: str, pairs_key: str) -> None:
    state = st.session_state.get(key)
    rows = getattr(getattr(state, "selection", None), "rows", None) or []
    if rows:
        st.session_state[pairs_key] = int(rows[0])


def render_tool_pairs(pairs: Sequence[ToolPair], messages: Sequence[Message], key: str) -> None:
    """The table of every call with its result; the selected row drawn as a unit below it."""
    if not pairs:
        st.caption("This conversation makes no tool calls.")
        return
    failed = sum(1 for p in pairs if p.status_icon == "❌")
    missing = sum(1 for p in pairs if p.result_index is None)
    st.caption(
        f"{len(pairs):,} tool calls · {failed:,} failed · {missing:,} without a result. "
        "Select a row to open the call with its result."
    )
    table_key = f"{key}_table"
    st.dataframe(
        pair_rows(pairs),
        key=table_key,
        hide_index=True,
        height=fitted_height(len(pairs), 260),
        on_select=lambda: _select(table_key, PAIR_KEY),
        selection_mode="single-row",
        column_config={"arguments": st.column_config.TextColumn(width="large")},
    )
    chosen = int(st.session_state.get(PAIR_KEY, 0))
    render_pair(pairs[min(max(chosen, 0), len(pairs) - 1)], messages, key)
