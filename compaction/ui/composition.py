"""What fills the context window, as Claude Code's `/context` shows it: one stacked bar per
context (before and after compaction) split into system prompt, tool definitions, user messages,
assistant text, tool calls, tool results, the summary, free space and the reserve the threshold
keeps back.

The parts of a context are counted with the run's own token counter, so they add up exactly to
the tokens the rest of the app reports: an assistant message with tool calls is split into its
text (counted as a message of that text alone) and its calls (the rest of its tokens). One pass
over the messages, no chart library in the arithmetic (`composition`), Vega-Lite for the bar.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt

from compaction.config import CompactionConfig
from compaction.messages import Message, content_text, is_summary_message, tool_calls
from compaction.tokens import TokenCounter
from compaction.ui.palette import COMPOSITION_COLORS, COMPOSITION_LABELS, INK

#: The parts holding tokens, in the order /context lists them.
CONTENT_PARTS = (
    "system",
    "tool_definitions",
    "user",
    "assistant_text",
    "tool_calls",
    "tool_results",
    "summary",
)
#: The parts of the window that hold nothing yet.
SPACE_PARTS = ("free", "reserve")


@dataclass(frozen=True)
class Composition:
    """Tokens per part of one context, and the window it is measured against."""

    parts: dict[str, int]
    window: int
    threshold: int

    @property
    def used(self) -> int:
        return sum(self.parts[name] for name in CONTENT_PARTS)

    @property
    def free(self) -> int:
        """Room before the threshold (where automatic compaction starts)."""
        return max(0, self.threshold - self.used)

    @property
    def reserve(self) -> int:
        """The part of the window past the threshold that is still empty."""
        return max(0, self.window - max(self.used, self.threshold))

    @property
    def over_window(self) -> int:
        return max(0, self.used - self.window)

    def rows(self) -> list[tuple[str, int]]:
        """(part, tokens) for every part with tokens, content first, then free and reserve."""
        rows = [(name, self.parts[name]) for name in CONTENT_PARTS if self.parts[name]]
        rows += [(name, value) for name, value in (("free", self.free), ("reserve", self.reserve))]
        return [(name, value) for name, value in rows if value]


def composition(
    messages: Sequence[Message],
    counter: TokenCounter,
    config: CompactionConfig,
    tool_definitions: Sequence[dict[str, Any]] = (),
    tokens: Sequence[int] | None = None,
) -> Composition:
    """Split `messages` (with `tokens`, each message's count, when already known) into parts."""
    parts = dict.fromkeys(CONTENT_PARTS, 0)
    if tool_definitions:
        # Sent as JSON beside the messages: counted as that text (one message's overhead).
        text = json.dumps(list(tool_definitions), ensure_ascii=False, sort_keys=True)
        parts["tool_definitions"] = counter.count_message({"role": "system", "content": text})
    for index, message in enumerate(messages):
        total = tokens[index] if tokens is not None else counter.count_message(message)
        role = message.get("role")
        if role in ("system", "developer"):
            parts["system"] += total
        elif is_summary_message(message):
            parts["summary"] += total
        elif role == "tool":
            parts["tool_results"] += total
        elif role == "assistant" and tool_calls(message):
            text = content_text(message)
            own = counter.count_message({"role": "assistant", "content": text}) if text else 0
            own = min(own, total)
            parts["assistant_text"] += own
            parts["tool_calls"] += total - own
        elif role == "assistant":
            parts["assistant_text"] += total
        else:
            parts["user"] += total
    return Composition(parts, config.context_length, config.threshold_tokens)


def composition_chart(contexts: Sequence[tuple[str, Composition]]) -> alt.LayerChart:
    """One stacked horizontal bar per (name, composition), with the threshold and the window
    marked and a legend naming each part with its colour."""
    values: list[dict[str, Any]] = []
    for name, comp in contexts:
        for order, (part, tokens) in enumerate(comp.rows()):
            share = tokens / comp.window if comp.window else 0.0
            values.append(
                {
                    "context": name,
                    "part": COMPOSITION_LABELS[part],
                    "tokens": tokens,
                    "share": share,
                    "order": order,
                }
            )
    names = [COMPOSITION_LABELS[p] for p in (*CONTENT_PARTS, *SPACE_PARTS)]
    colors = [COMPOSITION_COLORS[p] for p in (*CONTENT_PARTS, *SPACE_PARTS)]
    widest = max((max(c.window, c.used) for _, c in contexts), default=1)
    x_scale = alt.Scale(domain=[0, widest * 1.02], nice=False)
    context_order = [name for name, _ in contexts]
    bars = (
        alt.Chart(alt.InlineData(values=values))
        .mark_bar()
        .encode(
            x=alt.X("tokens:Q", stack="zero", scale=x_scale, title="tokens"),
            y=alt.Y("context:N", sort=context_order, title=None),
            color=alt.Color(
                "part:N",
                scale=alt.Scale(domain=names, range=colors),
                legend=alt.Legend(orient="bottom", title="Context part", columns=3, labelLimit=300),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("context:N", title="context"),
                alt.Tooltip("part:N", title="part"),
                alt.Tooltip("tokens:Q", format=",", title="tokens"),
                alt.Tooltip("share:Q", format=".1%", title="of the window"),
            ],
        )
    )
    first = contexts[0][1] if contexts else None
    marks: list[dict[str, Any]] = []
    if first is not None:
        marks = [
            {"x": first.threshold, "label": f"threshold {first.threshold:,}"},
            {"x": first.window, "label": f"window {first.window:,}"},
        ]
    rules = (
        alt.Chart(alt.InlineData(values=marks))
        .mark_rule(color=INK, strokeDash=[4, 3], strokeWidth=1.5)
        .encode(
            x=alt.X("x:Q", scale=x_scale),
            tooltip=[alt.Tooltip("label:N", title="line")],
        )
    )
    # Streamlit fits the whole chart, legend and axis included, into the height: the legend's three
    # rows and the axis take ~140 px before any bar is drawn.
    return alt.LayerChart(layer=[bars, rules]).properties(height=150 + 50 * len(contexts))


def composition_table(contexts: Sequence[tuple[str, Composition]]) -> dict[str, list[Any]]:
    """The bar's numbers as columns: one row per part, one column per context (tokens and %)."""
    table: dict[str, list[Any]] = {
        "part": [COMPOSITION_LABELS[p] for p in (*CONTENT_PARTS, *SPACE_PARTS)]
    }
    for name, comp in contexts:
        values = {**comp.parts, "free": comp.free, "reserve": comp.reserve}
        table[f"{name} tokens"] = [values[p] for p in (*CONTENT_PARTS, *SPACE_PARTS)]
        table[f"{name} %"] = [
            f"{values[p] / comp.window:.1%}" if comp.window else "—"
            for p in (*CONTENT_PARTS, *SPACE_PARTS)
        ]
    return table
