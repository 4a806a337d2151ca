"""The Inspect overview's charts (Vega-Lite, through Altair): the budget bar and the per-message
chart, coloured from the one palette.

Why not plotly, which the other pages use: plotly.js is a 4.7 MB bundle that headless Chromium on
two cores needs ~3 s to load and draw, so a first render with it could not meet the 3 s goal
(benchmarks/bench_browser.py measures both). Streamlit draws Vega-Lite with code it already loads.

Charts are built here from plain numbers so pages only place them. Tooltip text is passed as plain
fields: vega-tooltip escapes HTML before showing it, so untrusted message text stays text.
Previews are cut short so a 5,000-message chart stays small, and above BAR_LIMIT messages
consecutive messages are grouped into bars (binning.py): drawing, not Python, is what thousands of
bars make slow.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import altair as alt

from compaction.config import CompactionConfig
from compaction.messages import Message, content_text, tool_calls
from compaction.result import Fate
from compaction.text.tool_output import format_tool_output
from compaction.ui.binning import BAR_LIMIT, Bin, bin_size, make_bins
from compaction.ui.palette import (
    FATE_LABELS,
    FATE_TITLE,
    INK,
    NEUTRAL,
    REGION_COLORS,
    REGION_LABELS,
    REGION_TITLE,
    fate_color,
)

PREVIEW_CHARS = 80
#: A per-message chart's legend: entries per row, and the width a label may take (the longest
#: fate label, "summary merged into it", is about 150 px).
LEGEND_COLUMNS = 3
LEGEND_LABEL_PX = 200
#: The name of the per-message chart's click selection (its state names the clicked bar).
PICK = "pick"


def preview(message: Message, limit: int = PREVIEW_CHARS) -> str:
    """One line of a message: its text (a tool's output decoded), else its tool calls."""
    text = content_text(message)
    if message.get("role") == "tool":
        text = format_tool_output(text)
    text = text.strip()
    if not text:
        calls = tool_calls(message)
        if calls:
            text = "calls " + ", ".join(str(c.get("function", {}).get("name", "?")) for c in calls)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def budget_bar(
    head_tokens: int,
    middle_tokens: int,
    tail_tokens: int,
    config: CompactionConfig,
    after_prune: tuple[int, int, int] | None = None,
) -> alt.LayerChart:
    """One horizontal stacked bar: head, middle, tail against the window and the threshold.

    The legend names each region with its tokens (a 300-token head is too thin a sliver to label
    in the bar) and, where Phase 1 shrinks it, its tokens after Phase 1 (`after_prune`): the tail
    budget is spent on those, so a tail of 66,000 raw tokens can fit a 16,000-token budget. The
    threshold and window lines are labelled above the bar so the labels never sit on a colour."""
    regions = ("head", "middle", "tail")
    counts = (head_tokens, middle_tokens, tail_tokens)
    afters = after_prune or counts
    names = [
        f"{REGION_LABELS[r]} · {t:,} tokens" + (f" ({a:,} after Phase 1)" if a != t else "")
        for r, t, a in zip(regions, counts, afters, strict=True)
    ]
    parts = alt.InlineData(
        values=[
            {"part": name, "tokens": t, "order": i}
            for i, (name, t) in enumerate(zip(names, counts, strict=True))
        ]
    )
    top = max(config.context_length, sum(counts)) * 1.02
    x_scale = alt.Scale(domain=[0, top], nice=False)
    # A band scale with the bar in the lower row and the line labels in the upper one.
    y_scale = alt.Scale(domain=["labels", "bar"], paddingInner=0.1, paddingOuter=0)
    no_axis = alt.Axis(labels=False, ticks=False, domain=False, title=None)
    bars = (
        alt.Chart(parts)
        .mark_bar()
        .encode(
            x=alt.X("tokens:Q", stack="zero", scale=x_scale, title=None),
            y=alt.Y("row:N", scale=y_scale, axis=no_axis),
            color=alt.Color(
                "part:N",
                scale=alt.Scale(domain=names, range=[REGION_COLORS[r] for r in regions]),
                legend=alt.Legend(orient="bottom", title=REGION_TITLE, labelLimit=600, columns=1),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("part:N", title="region"),
                alt.Tooltip("tokens:Q", format=",", title="tokens"),
            ],
        )
        .transform_calculate(row="'bar'")
    )
    # Labels end at their line (right-aligned), except the window's when the conversation runs
    # past it: then there is room to its right, and right-aligned it would run into the threshold's.
    past_window = sum(counts) > config.context_length
    line_rows: list[dict[str, Any]] = [
        {
            "x": config.threshold_tokens,
            "label": f"threshold {config.threshold_tokens:,}",
            "align": "right",
        },
        {
            "x": config.context_length,
            "label": f"window {config.context_length:,}",
            "align": "left" if past_window else "right",
        },
    ]
    lines = alt.InlineData(values=line_rows)
    rules = (
        alt.Chart(lines)
        .mark_rule(color=INK, strokeDash=[4, 3], strokeWidth=1.5)
        .encode(x=alt.X("x:Q", scale=x_scale))
    )
    labels = (
        alt.Chart(lines)
        .mark_text(
            color=INK,
            align=alt.ExprRef(expr="datum.align"),
            dx=alt.ExprRef(expr="datum.align == 'left' ? 4 : -4"),
        )
        .encode(
            x=alt.X("x:Q", scale=x_scale),
            y=alt.Y("row:N", scale=y_scale, axis=no_axis),
            text="label:N",
        )
        .transform_calculate(row="'labels'")
    )
    return alt.LayerChart(layer=[bars, rules, labels]).properties(height=180)


def hover_texts(messages: Sequence[Message], tokens: Sequence[int]) -> list[str]:
    """Each message's one-line preview for the chart's tooltip (pages cache it per conversation).

    Plain text: vega-tooltip escapes it, so markup in a message is shown, never run."""
    del tokens  # the tooltip shows them in their own field
    return [preview(message) for message in messages]


def label_names(colors_by: str) -> dict[str, str]:
    """Legend and hover names of the labels: the same human words as the tables use."""
    return REGION_LABELS if colors_by == "region" else FATE_LABELS


def _label_color(label: str, colors_by: str) -> str:
    return REGION_COLORS.get(label, NEUTRAL) if colors_by == "region" else fate_color(label)


def message_chart(
    hover: Sequence[str],
    tokens: Sequence[int],
    labels: Sequence[str],
    colors_by: str,
    roles: Sequence[str],
    limit: int = BAR_LIMIT,
    pinned: Collection[int] = (),
) -> alt.LayerChart:
    """Tokens per message, coloured by region (or fate) with a legend that explains the colours.

    `colors_by` is "region" (labels are regions) or "fate" (labels are fates). Up to `limit`
    messages there is one bar per message (`hover` holds each message's preview); above it, bars
    group consecutive messages. Every bar spans its messages on the message axis (start..end), so
    the axis reads in messages either way, and clicking a bar selects its first message (the
    PICK selection, whose state is `{"pick": [{"start": N}]}`). Each message in `pinned` has a
    pin marker above the bars, at its own position even where bars group messages.
    """
    rows = chart_rows(hover, tokens, labels, colors_by, roles, limit)
    names = label_names(colors_by)
    seen = list(dict.fromkeys(labels))
    pick = alt.selection_point(name=PICK, fields=["start"], on="click", toggle=False)
    # Built for speed, to the same spec but for a view's generated name: Altair deep-copies a
    # list of rows in each method that returns a new chart (a tuple it shares), and turns a
    # channel given as a dict (alt.value, alt.datum, alt.condition) into its class by hashing
    # the schema's ~4,000 classes each time (the classes named here skip that): 95 -> 28 ms.
    base = alt.Chart(alt.InlineData(values=tuple(rows))).encode(
        # Whole message numbers only: a 4-message chart had ticks 0.0, 0.2 … 4.0.
        x=alt.X(
            "start:Q",
            title="message",
            scale=alt.Scale(nice=False, zero=True),
            axis=alt.Axis(tickMinStep=1, format="d"),
        ),
        x2="end:Q",
    )
    bars = base.mark_bar(stroke=None).encode(
        y=alt.Y("tokens:Q", title="tokens"),
        y2=alt.Y2Datum(0),
        color=alt.Color(
            "label:N",
            scale=alt.Scale(
                domain=[names.get(label, label) for label in seen],
                range=[_label_color(label, colors_by) for label in seen],
            ),
            # Entries in rows of at most LEGEND_COLUMNS: in one row, six fates ran past the
            # chart's right edge ("got a stul").
            legend=alt.Legend(
                orient="bottom",
                title=REGION_TITLE if colors_by == "region" else FATE_TITLE,
                columns=min(len(seen), LEGEND_COLUMNS),
                labelLimit=LEGEND_LABEL_PX,
            ),
        ),
        opacity=alt.OpacityValue(0.45, condition={"param": PICK, "value": 1.0}),  # picked: opaque
    )
    # An invisible full-height bar per message carries the tooltip and the click: a 20-token
    # message beside a 20,000-token one is a bar one pixel high, and must still be easy to hit.
    targets = (
        base.mark_bar(opacity=0)
        .encode(
            # Altair leaves these two classes' constructors unannotated.
            y=alt.YValue(0),  # type: ignore[no-untyped-call]
            y2=alt.Y2Value({"expr": "height"}),  # type: ignore[no-untyped-call]
            tooltip=[
                alt.Tooltip("messages:N", title="message"),
                alt.Tooltip("tokens:Q", format=",", title="tokens"),
                alt.Tooltip("role:N", title="role"),
                alt.Tooltip("label:N", title="part"),
                alt.Tooltip("detail:N", title="text"),
            ],
        )
        .add_params(pick)
    )
    layers: list[alt.Chart] = [bars]
    if pinned:
        layers.append(pin_markers(pinned, len(tokens)))
    layers.append(targets)  # last: the click target stays on top
    return alt.LayerChart(layer=layers).properties(height=230)


def pin_markers(pinned: Collection[int], count: int) -> alt.Chart:
    """A marker at the top of the chart over each pinned message (the middle of its slot on the
    message axis), in the pinned fate's colour, its tooltip naming the message."""
    rows = [
        {"at": index + 0.5, "message": f"#{index}"}
        for index in sorted(pinned)
        if 0 <= index < count
    ]
    markers: alt.Chart = (  # tuple rows and channel classes: see message_chart
        alt.Chart(alt.InlineData(values=tuple(rows)))
        .mark_point(shape="triangle-down", filled=True, size=70, opacity=1)
        .encode(
            x=alt.X("at:Q", title="message"),
            y=alt.YValue(6),  # type: ignore[no-untyped-call]
            color=alt.ColorValue(fate_color(Fate.PINNED)),
            tooltip=[alt.Tooltip("message:N", title="pinned (kept verbatim)")],
        )
    )
    return markers


def chart_rows(
    hover: Sequence[str],
    tokens: Sequence[int],
    labels: Sequence[str],
    colors_by: str,
    roles: Sequence[str],
    limit: int = BAR_LIMIT,
) -> list[dict[str, Any]]:
    """One row per bar: start, end (exclusive), tokens, label (human), and the tooltip fields."""
    names = label_names(colors_by)
    size = bin_size(len(tokens), limit)
    if size == 1:
        return [
            {
                "start": index,
                "end": index + 1,
                "tokens": tokens[index],
                "label": names.get(labels[index], labels[index]),
                "messages": f"#{index}",
                "role": roles[index],
                "detail": hover[index] if index < len(hover) else "",
            }
            for index in range(len(tokens))
        ]
    # Regions are contiguous, so splitting bins at their boundaries costs ≤ 2 extra bars.
    bins = make_bins(tokens, labels, roles, size, split_on_label=colors_by == "region")
    return [_bin_row(item, names) for item in bins]


def _bin_row(item: Bin, names: dict[str, str]) -> dict[str, Any]:
    roles = ", ".join(f"{n} {role}" for role, n in sorted(item.role_counts.items()))
    detail = "click to open the first message"
    if len(item.label_counts) > 1:
        mixed = ", ".join(f"{n} {names.get(lab, lab)}" for lab, n in item.label_counts.items())
        detail = f"{mixed} · {detail}"
    return {
        "start": item.start,
        "end": item.end,
        "tokens": item.tokens,
        "label": names.get(item.label, item.label),
        "messages": f"#{item.start}–#{item.end - 1} ({item.size})",
        "role": roles,
        "detail": detail,
    }


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
