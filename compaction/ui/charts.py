"""plotly figures: the budget bar and the per-message chart, coloured from the one palette.

Figures are built here from plain numbers so pages only place them. Hover text is escaped (plotly's
hover labels understand a few HTML tags, and message text is untrusted) and previews are cut
short so a 5,000-message chart stays small.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from compaction.config import CompactionConfig
from compaction.messages import Message, content_text, tool_calls
from compaction.ui.palette import REGION_COLORS, REGION_LABELS, fate_color

PREVIEW_CHARS = 80


def preview(message: Message, limit: int = PREVIEW_CHARS) -> str:
    """One line of a message: its text, else its tool calls."""
    text = content_text(message).strip()
    if not text:
        calls = tool_calls(message)
        if calls:
            text = "calls " + ", ".join(str(c.get("function", {}).get("name", "?")) for c in calls)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def budget_bar(
    head_tokens: int, middle_tokens: int, tail_tokens: int, config: CompactionConfig
) -> go.Figure:
    """One horizontal stacked bar: head, middle, tail against the window and the threshold."""
    figure = go.Figure()
    for region, tokens in (("head", head_tokens), ("middle", middle_tokens), ("tail", tail_tokens)):
        figure.add_trace(
            go.Bar(
                y=["conversation"],
                x=[tokens],
                name=f"{REGION_LABELS[region]}: {tokens:,}",
                orientation="h",
                marker_color=REGION_COLORS[region],
                hovertemplate=f"{REGION_LABELS[region]}: %{{x:,}} tokens<extra></extra>",
            )
        )
    total = head_tokens + middle_tokens + tail_tokens
    top = max(config.context_length, total) * 1.02
    for x, label, dash in (
        (config.threshold_tokens, f"threshold {config.threshold_tokens:,}", "dash"),
        (config.context_length, f"window {config.context_length:,}", "solid"),
    ):
        figure.add_vline(x=x, line_dash=dash, line_color="#333", annotation_text=label)
    figure.update_layout(
        barmode="stack",
        height=170,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"range": [0, top], "title": "tokens"},
        yaxis={"visible": False},
        legend={"orientation": "h", "y": -0.6},
    )
    return figure


def hover_texts(messages: Sequence[Message], tokens: Sequence[int]) -> list[str]:
    """One escaped hover label per message (pages cache it per conversation)."""
    return [
        f"#{i} {html.escape(str(m.get('role', '?')))} · {tokens[i]:,} tokens<br>"
        f"{html.escape(preview(m))}"
        for i, m in enumerate(messages)
    ]


def message_chart(
    hover: Sequence[str], tokens: Sequence[int], labels: Sequence[str], colors_by: str
) -> go.Figure:
    """One bar per message, one trace per region (or fate) so the legend explains the colours.

    `colors_by` is "region" (labels are regions) or "fate" (labels are fates). One colour per
    trace and plain hover strings: plotly validates a per-bar colour list or nested customdata
    element by element, which costs ~0.5 s at 5,000 messages.
    """
    groups: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(label, []).append(index)
    figure = go.Figure()
    for label, indices in groups.items():
        color = REGION_COLORS.get(label, "#999") if colors_by == "region" else fate_color(label)
        figure.add_trace(
            go.Bar(
                x=indices,
                y=[tokens[i] for i in indices],
                name=REGION_LABELS.get(label, label) if colors_by == "region" else label,
                marker_color=color,
                hovertext=[hover[i] for i in indices],
                hoverinfo="text",
            )
        )
    figure.update_layout(
        height=260,
        bargap=0.05,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"title": "message"},
        yaxis={"title": "tokens"},
        legend={"orientation": "h", "y": -0.3},
        clickmode="event+select",
    )
    return figure
