"""plotly figures of a sweep: metrics against one parameter, heatmaps over two, the frontier.

Built from `Sweep.rows()`-shaped dicts (plain numbers), so a sweep read back from the history
draws exactly like a fresh one. Colours come from the shared palette (plotly does not apply the
Streamlit theme to every trace type): savings in the head's blue, recall in the tail's green, the
frontier in the middle's orange and the recommendation in the summary's purple, so the same hue
means the same thing on every chart of the page. Every trace carries the sweep point's index in
`customdata`, which is how a click on any trace is mapped back to a point.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from compaction.ui.palette import HEAT_LOW, REGION_COLORS

SAVINGS_COLOR = REGION_COLORS["head"]
RECALL_COLOR = REGION_COLORS["tail"]
FRONTIER_COLOR = REGION_COLORS["middle"]
RECOMMENDED_COLOR = REGION_COLORS["summary"]
POINT_COLOR = REGION_COLORS["removed"]
INVALID_COLOR = REGION_COLORS["stub"]

Row = Mapping[str, Any]


def settings_text(row: Row, parameters: Sequence[str]) -> str:
    """One escaped hover label: the point's swept settings and what they bought."""
    settings = "<br>".join(
        f"{html.escape(name)} = {html.escape(str(row[name]))}" for name in parameters
    )
    validity = "" if row.get("valid", True) else "<br>⚠ a provider would reject it"
    if row.get("skipped"):
        # A skipped run saves nothing and so loses nothing: say why it sits at (0 %, 100 %).
        validity += f"<br>skipped in {row['skipped']} conversation(s): nothing to compress"
    return (
        f"point {row['point']}<br>{settings}<br>"
        f"savings {float(row['savings_pct']):.1f}% · recall {float(row['recall']) * 100:.1f}%<br>"
        f"{int(row['tokens_after']):,} tokens after{validity}"
    )


def _layout(figure: go.Figure, height: int, **axes: Any) -> go.Figure:
    figure.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.25},
        **axes,
    )
    return figure


def metric_lines(rows: Sequence[Row], parameter: str) -> go.Figure:
    """Savings % and recall % against the one swept parameter (two lines on a 0–100 axis)."""
    ordered = list(rows)  # grid order: the values as the user gave them
    xs = [row[parameter] for row in ordered]
    hover = [settings_text(row, [parameter]) for row in ordered]
    figure = go.Figure()
    for name, values, color in (
        ("savings %", [float(r["savings_pct"]) for r in ordered], SAVINGS_COLOR),
        ("recall %", [float(r["recall"]) * 100 for r in ordered], RECALL_COLOR),
    ):
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=values,
                name=name,
                mode="lines+markers",
                line={"color": color},
                marker={"color": color, "size": 8},
                hovertext=hover,
                hoverinfo="text",
                customdata=[row["point"] for row in ordered],
            )
        )
    return _layout(
        figure,
        340,
        title={"text": f"Savings and recall against {parameter}"},
        xaxis={"title": parameter},
        yaxis={"title": "%", "range": [0, 105]},
    )


def heatmap(rows: Sequence[Row], y_param: str, x_param: str, metric: str) -> go.Figure:
    """One metric ("savings_pct" or "recall", shown in %) over two swept parameters."""
    xs = list(dict.fromkeys(row[x_param] for row in rows))
    ys = list(dict.fromkeys(row[y_param] for row in rows))
    scale = 100.0 if metric == "recall" else 1.0
    cells = {(row[y_param], row[x_param]): row for row in rows}
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    for y in ys:
        z_row: list[float | None] = []
        text_row: list[str] = []
        for x in xs:
            cell = cells.get((y, x))
            z_row.append(None if cell is None else float(cell[metric]) * scale)
            text_row.append("" if cell is None else settings_text(cell, [y_param, x_param]))
        z.append(z_row)
        text.append(text_row)
    color = SAVINGS_COLOR if metric == "savings_pct" else RECALL_COLOR
    label = "savings %" if metric == "savings_pct" else "recall %"
    figure = go.Figure(
        go.Heatmap(
            x=[str(x) for x in xs],
            y=[str(y) for y in ys],
            z=z,
            hovertext=text,
            hoverinfo="text",
            colorscale=[[0.0, HEAT_LOW], [1.0, color]],
            colorbar={"title": {"text": label}},
            texttemplate="%{z:.1f}",
        )
    )
    return _layout(
        figure,
        340,
        title={"text": label},
        xaxis={"title": x_param, "type": "category"},
        yaxis={"title": y_param, "type": "category"},
    )


def frontier_scatter(
    rows: Sequence[Row],
    parameters: Sequence[str],
    frontier: Sequence[int],
    recommended: int | None,
) -> go.Figure:
    """Every point (savings vs recall), the Pareto frontier as a line, the recommendation starred.

    `frontier` and `recommended` are point indices (`row["point"]`).
    """
    by_index = {int(row["point"]): row for row in rows}
    figure = go.Figure()
    for valid in (True, False):
        chosen = [row for row in rows if bool(row.get("valid", True)) is valid]
        if not chosen:
            continue
        figure.add_trace(
            go.Scatter(
                x=[float(r["savings_pct"]) for r in chosen],
                y=[float(r["recall"]) * 100 for r in chosen],
                name="points" if valid else "rejected by a provider",
                mode="markers",
                marker={"color": POINT_COLOR if valid else INVALID_COLOR, "size": 9},
                hovertext=[settings_text(r, parameters) for r in chosen],
                hoverinfo="text",
                customdata=[r["point"] for r in chosen],
            )
        )
    line = [by_index[i] for i in frontier if i in by_index]
    figure.add_trace(
        go.Scatter(
            x=[float(r["savings_pct"]) for r in line],
            y=[float(r["recall"]) * 100 for r in line],
            name="Pareto frontier",
            mode="lines+markers",
            line={"color": FRONTIER_COLOR, "width": 3},
            marker={"color": FRONTIER_COLOR, "size": 11},
            hovertext=[settings_text(r, parameters) for r in line],
            hoverinfo="text",
            customdata=[r["point"] for r in line],
        )
    )
    if recommended is not None and recommended in by_index:
        best = by_index[recommended]
        figure.add_trace(
            go.Scatter(
                x=[float(best["savings_pct"])],
                y=[float(best["recall"]) * 100],
                name="recommended",
                mode="markers",
                marker={"color": RECOMMENDED_COLOR, "size": 18, "symbol": "star"},
                hovertext=[settings_text(best, parameters)],
                hoverinfo="text",
                customdata=[best["point"]],
            )
        )
    return _layout(
        figure,
        420,
        title={"text": "Savings vs probe recall (click a point to inspect it)"},
        xaxis={"title": "savings %"},
        yaxis={"title": "recall %"},
        clickmode="event+select",
    )
