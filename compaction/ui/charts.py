"""plotly figures: the budget bar and the per-message chart, coloured from the one palette.

Figures are built here from plain numbers so pages only place them. Hover text is escaped (plotly's
hover labels understand a few HTML tags, and message text is untrusted) and previews are cut
short so a 5,000-message chart stays small. Above BAR_LIMIT messages the per-message chart groups
consecutive messages into bars (binning.py): the browser, not Python, is what a 5,000-bar chart
makes slow.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from compaction.config import CompactionConfig
from compaction.messages import Message, content_text, tool_calls
from compaction.ui.binning import BAR_LIMIT, Bin, bin_hover, bin_size, make_bins
from compaction.ui.palette import FATE_LABELS, REGION_COLORS, REGION_LABELS, fate_color

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
        # Labels sit left of their line (right-anchored): the window line is usually the plot's
        # right edge, where a label centred or to the right of it would be cut off.
        figure.add_vline(
            x=x,
            line_dash=dash,
            line_color="#333",
            annotation_text=label,
            annotation_position="top left",
            annotation_xanchor="right",
        )
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


def label_names(colors_by: str) -> dict[str, str]:
    """Legend and hover names of the labels: the same human words as the tables use."""
    return REGION_LABELS if colors_by == "region" else FATE_LABELS


def _label_color(label: str, colors_by: str) -> str:
    return REGION_COLORS.get(label, "#999") if colors_by == "region" else fate_color(label)


def message_chart(
    hover: Sequence[str],
    tokens: Sequence[int],
    labels: Sequence[str],
    colors_by: str,
    roles: Sequence[str],
    limit: int = BAR_LIMIT,
) -> go.Figure:
    """Tokens per message, one trace per region (or fate) so the legend explains the colours.

    `colors_by` is "region" (labels are regions) or "fate" (labels are fates). Up to `limit`
    messages there is one bar per message (x is its index, `hover` its label); above it, bars
    group consecutive messages (x is the first message of the group, so a click still opens a
    message). One colour per trace and plain hover strings: plotly validates a per-bar colour
    list or nested customdata element by element, which costs ~0.5 s at 5,000 messages.
    """
    size = bin_size(len(tokens), limit)
    if size > 1:
        # Regions are contiguous, so splitting bins at their boundaries costs ≤ 2 extra bars.
        bins = make_bins(tokens, labels, roles, size, split_on_label=colors_by == "region")
        figure = _binned_chart(bins, colors_by)
    else:
        figure = _per_message_chart(hover, tokens, labels, colors_by)
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


def _per_message_chart(
    hover: Sequence[str], tokens: Sequence[int], labels: Sequence[str], colors_by: str
) -> go.Figure:
    groups: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(label, []).append(index)
    names = label_names(colors_by)
    figure = go.Figure()
    for label, indices in groups.items():
        figure.add_trace(
            go.Bar(
                x=indices,
                y=[tokens[i] for i in indices],
                name=names.get(label, label),
                marker_color=_label_color(label, colors_by),
                hovertext=[hover[i] for i in indices],
                hoverinfo="text",
            )
        )
    return figure


def _binned_chart(bins: Sequence[Bin], colors_by: str) -> go.Figure:
    groups: dict[str, list[Bin]] = {}
    for item in bins:
        groups.setdefault(item.label, []).append(item)
    names = label_names(colors_by)
    figure = go.Figure()
    for label, items in groups.items():
        figure.add_trace(
            go.Bar(
                # Each bar spans its messages on the message axis: it starts at its first message
                # (offset 0) and is as wide as the group, so the axis still reads in messages.
                x=[item.start for item in items],
                y=[item.tokens for item in items],
                width=[item.size for item in items],
                offset=0,
                name=names.get(label, label),
                marker_color=_label_color(label, colors_by),
                marker_line_width=0,
                hovertext=[bin_hover(item, names) for item in items],
                hoverinfo="text",
            )
        )
    return figure


def grouping_caption(count: int, colors_by: str, limit: int = BAR_LIMIT) -> str | None:
    """What a grouped chart's bars mean, or None when each bar is one message."""
    size = bin_size(count, limit)
    if size == 1:
        return None
    colour = (
        "a bar never mixes regions"
        if colors_by == "region"
        else "each bar is coloured by the fate of most of its tokens"
    )
    return (
        f"{count:,} messages are grouped {size} per bar ({colour}); hover for the range, "
        "click a bar to open its first message."
    )
