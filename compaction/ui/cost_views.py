"""The cost views: recorded usage against our count per call, cumulative dollars, the cache hit
ratio, each compaction the agent made with its price, the cache model's error and the what-ifs
(Timeline), and the price a Sweep point's or an Evaluate strategy's compaction costs.

Model names and notes come from session files nobody on this machine wrote: they are shown in
tables, st.text, or escaped (md_escape, html.escape in plotly hovers), never as raw Markdown.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from compaction.errors import CompactionError
from compaction.lab.cost.calibration import counted_contexts
from compaction.lab.cost.pricing import UNKNOWN_PRICE, Price, PriceBook
from compaction.lab.cost.report import CostReport, cost_report
from compaction.tokens import make_counter
from compaction.ui.palette import INK, RECORDED_INK, REGION_COLORS
from compaction.ui.state import Loaded, conversation_of
from compaction.ui.untrusted import md_escape

PRICES_KEY = "cost_prices"
PRICE_MODEL_KEY = "cost_price_model"
DEFAULT_MODEL = "claude-sonnet-4-6"
PRICE_HELP = (
    "One line per model: MODEL=in,out,cache_write,cache_read in USD per million tokens (a "
    "fifth value is the 1-hour cache write), e.g. glm-4.7=0.6,2.2,0.6,0.11. It overrides "
    "litellm's bundled map, or prices a model the map does not know."
)


def _specs() -> tuple[str, ...]:
    """The override lines the person gave (PRICES_KEY); none, with the error shown, when one
    of them cannot be read."""
    text = str(st.session_state.get(PRICES_KEY) or "")
    specs = tuple(line.strip() for line in text.splitlines() if line.strip())
    try:
        PriceBook.from_specs(specs)
    except CompactionError as exc:
        st.error(md_escape(exc))
        return ()
    return specs


def price_book() -> PriceBook:
    """The prices the person gave over litellm's map."""
    return PriceBook.from_specs(_specs())


def render_price_override() -> None:
    st.text_area("Prices (override)", key=PRICES_KEY, height=68, help=PRICE_HELP)


@st.cache_resource(max_entries=4, show_spinner="Pricing the session and replaying it…")
def _report(key: str, _loaded: Loaded, specs: tuple[str, ...], what_if: bool) -> CostReport:
    # cache_resource keyed by the content hash: the messages are not hashed on every rerun.
    return cost_report(conversation_of(_loaded), PriceBook.from_specs(specs), what_if=what_if)


def report_of(loaded: Loaded, what_if: bool = False) -> CostReport:
    return _report(f"{loaded.content_hash}|{what_if}", loaded, _specs(), what_if)


def _usd(value: float | None) -> str:
    return UNKNOWN_PRICE if value is None else f"${value:,.4f}"


def render_metrics(report: CostReport) -> None:
    cost = report.cost
    columns = st.columns(5)
    columns[0].metric("Calls with usage", f"{len(cost.calls):,}")
    columns[1].metric("Dollars", _usd(cost.total()))
    ratio = cost.hit_ratio
    columns[2].metric("Cache hit", "—" if ratio is None else f"{ratio:.1%}")
    columns[3].metric("Hidden prompt", f"{report.calibration.hidden:,}")
    columns[4].metric("Agent's window", f"{report.window.window:,}")
    st.text(
        f"{report.calibration.hidden_line()}\nWindow: {report.window.line()}\n"
        f"Priced with: {report.price.source if report.price else UNKNOWN_PRICE}"
    )


def usage_chart(report: CostReport, loaded: Loaded) -> go.Figure:
    """Per call: the prompt the provider counted, our count of what the file holds, our count
    corrected (hidden + ratio × counted), and the cumulative dollars (right axis); the agent's
    compactions as markers with their price."""
    conversation = conversation_of(loaded)
    calls = [c for c in conversation.calls if c.input_tokens]
    counted = counted_contexts(conversation, calls, make_counter())
    xs = [c.position for c in calls]
    calibration = report.calibration
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=[c.input_tokens for c in calls],
            mode="lines+markers",
            name="recorded prompt (provider)",
            line={"color": RECORDED_INK, "width": 2},
            marker={"size": 4},
            hovertemplate="message %{x}: %{y:,} tokens recorded<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=counted,
            mode="lines",
            name="counted (what the file holds)",
            line={"color": REGION_COLORS["head"], "width": 1.5},
            hovertemplate="message %{x}: %{y:,} tokens counted<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=[calibration.to_provider(n) for n in counted],
            mode="lines",
            name="counted + hidden, corrected",
            line={"color": REGION_COLORS["tail"], "width": 1, "dash": "dot"},
            hovertemplate="message %{x}: %{y:,} tokens corrected<extra></extra>",
        )
    )
    cumulative = report.cost.cumulative()
    if report.cost.total() is not None:
        figure.add_trace(
            go.Scatter(
                x=[c.call.position for c in report.cost.calls],
                y=[value or 0.0 for value in cumulative],
                mode="lines",
                name="cumulative $ (right)",
                yaxis="y2",
                line={"color": INK, "width": 1.5, "dash": "dash"},
                hovertemplate="message %{x}: $%{y:,.4f} so far<extra></extra>",
            )
        )
    if report.cost.compactions:
        figure.add_trace(
            go.Scatter(
                x=[item.position for item in report.cost.compactions],
                y=[item.prompt_before or 0 for item in report.cost.compactions],
                mode="markers",
                name=f"the agent compacted ({len(report.cost.compactions)})",
                marker={"color": RECORDED_INK, "size": 14, "symbol": "star"},
                hovertext=[
                    html.escape(
                        f"{item.trigger}, {item.prompt_before or 0:,} tokens before; next call "
                        f"{item.uncached_after or 0:,} not read from the cache: "
                        f"{_usd(item.invalidated_usd)}"
                    )
                    for item in report.cost.compactions
                ],
                hoverinfo="text",
            )
        )
    figure.add_hline(
        y=report.window.window,
        line={"color": REGION_COLORS["stub"], "dash": "dot", "width": 1},
        annotation_text=f"the agent's window {report.window.window:,}",
    )
    figure.update_layout(
        height=380,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"title": "message"},
        yaxis={"title": "tokens"},
        yaxis2={"title": "USD", "overlaying": "y", "side": "right", "showgrid": False},
        legend={"orientation": "h", "y": -0.2},
    )
    return figure


def render_compactions(report: CostReport) -> None:
    if not report.cost.compactions:
        return
    st.markdown("**The agent's compactions, priced**")
    st.dataframe(
        [
            {
                "at message": item.position,
                "trigger": item.trigger,
                "tokens before (recorded)": item.tokens_before_recorded,
                "prompt + output before": item.prompt_before,
                "next call not cached": item.uncached_after,
                "share not cached": None
                if item.uncached_share is None
                else round(item.uncached_share * 100, 1),
                "invalidated cache $": item.invalidated_usd,
                "summary call $": item.summary_call.usd if item.summary_call else None,
                "note": item.note,
            }
            for item in report.cost.compactions
        ],
        hide_index=True,
        key="cost_compactions",
    )


def render_turns(report: CostReport) -> None:
    turns = report.cost.turns()
    if len(turns) > 1:
        st.dataframe(turns, hide_index=True, key="cost_turns")


def render_check(report: CostReport) -> None:
    if report.check is None:
        return
    st.text(f"Cache model against the record: {report.check.line()}")
    worst = [row.to_dict() for row in report.check.worst(8) if row.error > 0.05]
    if worst:
        st.dataframe(worst, hide_index=True, key="cost_check_worst")


def render_scenarios(report: CostReport) -> None:
    if not report.scenarios:
        return
    rows: list[dict[str, Any]] = [
        {
            "scenario": s.name,
            "dollars": s.usd,
            "calls": s.calls,
            "compactions": s.compactions,
            "summary calls $": s.summary_usd,
            "cache hit %": None if s.hit_ratio is None else round(s.hit_ratio * 100, 1),
            "peak prompt": s.peak_prompt,
            "note": s.note,
        }
        for s in report.scenarios
    ]
    st.dataframe(
        rows,
        hide_index=True,
        key="cost_scenarios",
        column_config={"dollars": st.column_config.NumberColumn("dollars", format="$%.4f")},
    )


def render_cost_section(loaded: Loaded) -> None:
    """The Timeline's cost section: nothing but a note when the file records no usage."""
    if not loaded.calls:
        st.info(
            "This session file records no provider usage (Claude Code, Codex, Gemini CLI, "
            "OpenCode, Cline, Qwen Code and iFlow files do): nothing to price."
        )
        return
    with st.expander("Prices"):
        render_price_override()
    what_if = st.toggle(
        "Price what-ifs (our pipeline, cache-aware, each peer: one replay each)",
        key="cost_what_if",
    )
    try:
        report = report_of(loaded, what_if)
    except CompactionError as exc:
        st.error(f"The cost could not be computed: {md_escape(exc)}")
        return
    render_metrics(report)
    st.plotly_chart(usage_chart(report, loaded), key="cost_usage_chart")
    render_compactions(report)
    render_turns(report)
    render_check(report)
    render_scenarios(report)
    for note in [*report.notes, *report.cost.notes]:
        st.text(f"Note: {note}")


def dollar_price(default_model: str | None, key: str) -> Price | None:
    """The price a dollars axis uses: a model (the loaded session's by default) through the
    override prices and litellm's map; None, with a note, when it has none."""
    model = st.text_input(
        "Price with model",
        value=default_model or DEFAULT_MODEL,
        key=key,
        help="The dollars of one compaction at this model's price: its summary call and the "
        "next request writing the compacted context to the cache. " + PRICE_HELP,
    )
    price = price_book().get(model.strip() or None)
    if price is None:
        st.caption(f"{md_escape(model)}: {UNKNOWN_PRICE} (add it under Prices on the Timeline)")
    return price


def recall_cost_chart(rows: list[dict[str, Any]], label: str, frontier: list[int]) -> go.Figure:
    """Recall against the dollars of one compaction: each row a marker, the frontier a line."""
    priced = [row for row in rows if row.get("usd") is not None]
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[row["usd"] for row in priced],
            y=[float(row["recall"]) * 100 for row in priced],
            mode="markers",
            name="points",
            marker={"color": REGION_COLORS["head"], "size": 10},
            hovertext=[html.escape(str(row.get(label, ""))) for row in priced],
            hoverinfo="text",
        )
    )
    line = [rows[i] for i in frontier]
    figure.add_trace(
        go.Scatter(
            x=[row["usd"] for row in line],
            y=[float(row["recall"]) * 100 for row in line],
            mode="lines+markers",
            name="frontier (less $, more recall)",
            line={"color": REGION_COLORS["tail"], "width": 3},
            hovertext=[html.escape(str(row.get(label, ""))) for row in line],
            hoverinfo="text",
        )
    )
    figure.update_layout(
        height=340,
        margin={"l": 10, "r": 10, "t": 20, "b": 10},
        xaxis={"title": "USD per compaction (summary call + the cache written again)"},
        yaxis={"title": "probe recall %", "range": [0, 105]},
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def render_dollars_axis(
    rows: list[dict[str, Any]], label: str, default_model: str | None, key: str
) -> None:
    """Sweep's points or Evaluate's strategies with the dollars of their compaction, and the
    recall-vs-cost frontier (lab/cost/points.py says what the dollars hold)."""
    from compaction.lab.cost.points import cost_frontier, with_usd

    price = dollar_price(default_model, key)
    if price is None:
        return
    priced = with_usd(rows, price)
    frontier = cost_frontier(priced)
    st.plotly_chart(recall_cost_chart(priced, label, frontier), key=f"{key}_chart")
    st.dataframe(
        [
            {
                label: row.get(label),
                "dollars": row["usd"],
                "recall %": round(float(row["recall"]) * 100, 1),
                "tokens after": row.get("tokens_after", row.get("tokens")),
                "summary tokens": row.get("summary_tokens"),
                "on the frontier": index in frontier,
            }
            for index, row in enumerate(priced)
        ],
        hide_index=True,
        key=f"{key}_table",
        column_config={"dollars": st.column_config.NumberColumn("dollars", format="$%.4f")},
    )


def loaded_model(loaded: Loaded | None) -> str | None:
    """The loaded session's main model (its calls', else its metadata's)."""
    if loaded is None:
        return None
    models = [str(c["model"]) for c in loaded.calls if c.get("model")]
    if models:
        return max(set(models), key=models.count)
    model = loaded.metadata.get("model")
    return model if isinstance(model, str) else None


def evaluation_rows(evaluation: Any) -> list[dict[str, Any]]:
    """Evaluate's rows with what the dollars need: the tokens before and the summary's size."""
    counter = make_counter()
    rows = []
    for outcome in evaluation.outcomes.values():
        summary = ""
        if outcome.result is not None and outcome.result.summary is not None:
            summary = outcome.result.summary.text
        elif outcome.peer is not None and outcome.peer.summary_text:
            summary = outcome.peer.summary_text
        written = counter.count_message({"role": "user", "content": summary}) if summary else 0
        rows.append(
            {**outcome.row(), "tokens_before": evaluation.tokens_before, "summary_tokens": written}
        )
    return rows


CALIBRATE_KEY = "timeline_calibrated"


def calibrated(loaded: Loaded, config: Any) -> Any:
    """`config` at the window the agent worked in, counted in our tokens with the hidden prompt
    left out (when the person asks and the file records usage), so the replay triggers where
    the agent's compactions did; `config` unchanged otherwise."""
    if not loaded.calls:
        return config
    on = st.toggle(
        "Calibrate to the recorded usage",
        key=CALIBRATE_KEY,
        help="The window the agent worked in (recorded, or inferred from its compactions), "
        "less the system prompt and tool schemas the file does not hold, in our counter's "
        "tokens: the replay's threshold then means what it meant for the agent.",
    )
    if not on:
        return config
    report = report_of(loaded)
    window = report.calibration.counter_window(report.window.window)
    st.caption(
        f"Calibrated: the agent's window {report.window.window:,} less "
        f"{report.calibration.hidden:,} hidden tokens, at {report.calibration.ratio:.3f} "
        f"provider tokens per counted token = {window:,} counted tokens."
    )
    return config.replace(context_length=window)
