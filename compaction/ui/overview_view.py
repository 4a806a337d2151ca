"""Inspect's overview of the loaded conversation: the budget bar, the region counts, the
per-message chart, and the message list (find, filter, the table and the open message), the tool
calls paired with their results, or the context's composition.

The parts the before → after view shares with it (a per-message chart whose bar opens a message,
the composition bar, the view picker) are public here; `final_view.py` imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from compaction.config import CompactionConfig
from compaction.messages import Message
from compaction.phases.pins import PinnedMessages
from compaction.tokens import make_counter
from compaction.ui import compute
from compaction.ui.binning import bin_size
from compaction.ui.charts import PICK, budget_bar, grouping_caption, hover_texts, message_chart
from compaction.ui.composition import (
    Composition,
    composition,
    composition_chart,
    composition_table,
)
from compaction.ui.find_filter import (
    filter_controls,
    filter_messages,
    message_tools,
    search_texts,
    subset,
)
from compaction.ui.layout import beside_or_below, fitted_height
from compaction.ui.message_views import (
    SELECTED_KEY,
    call_index,
    message_frame,
    message_table,
    open_message_input,
    region_column,
    render_message,
    select_from_chart,
)
from compaction.ui.palette import FATE_LABELS
from compaction.ui.params import Settings, show_summary_budget
from compaction.ui.pins_view import pin_button, render_pinned_summary
from compaction.ui.state import Loaded
from compaction.ui.stepper import current_step
from compaction.ui.text_views import tool_output_toggle
from compaction.ui.tool_pairs import ToolPair, pair_tool_calls, render_tool_pairs, result_index
from compaction.ui.untrusted import md_escape
from compaction.ui.vega import chart_spec, draw_chart

PANE_PX = 560  # the message table and the open message beside (or below) it: about 15 rows


@st.cache_resource(max_entries=8, show_spinner=False)
def _hover(key: str, _messages: list[Message], _tokens: list[int]) -> list[str]:
    return hover_texts(_messages, _tokens)


@st.cache_resource(max_entries=8, show_spinner=False)
def _frame(key: str, _messages: list[Message], _tokens: list[int]) -> dict[str, list[object]]:
    # The columns that do not depend on the config (previews cost ~0.1 s at 5,000 messages);
    # the region column is added per run, so a slider move does not rebuild the previews.
    return message_frame(_messages, _tokens, [""] * len(_messages))


def _table(loaded: Loaded, settings: Settings, regions: compute.Regions) -> dict[str, list[object]]:
    assert settings.config is not None
    key = f"{loaded.content_hash}|{settings.config.counter}|{settings.config.model}"
    base = _frame(key, loaded.messages, regions.tokens)
    region: list[object] = list(region_column(regions.labels))
    return {**base, "region": region}  # replaces the blank column, keeping the column order


@st.cache_resource(max_entries=8, show_spinner=False)
def _chart(
    key: str,
    hover_key: str,
    _messages: list[Message],
    _tokens: list[int],
    _labels: list[str],
    colors_by: str,
    pinned: frozenset[int] = frozenset(),
) -> str:
    # The chart's spec (vega.py), one per key (and pins), shared by every rerun: a slider move
    # that keeps the cut rebuilds nothing, and a phase picked in the picker converts nothing.
    grouped = bin_size(len(_messages)) > 1
    # A grouped chart has its own hover per bar: the per-message previews are not needed.
    hover = [] if grouped else _hover(hover_key, _messages, _tokens)
    roles = [str(message.get("role", "?")) for message in _messages]
    return chart_spec(
        lambda: message_chart(hover, _tokens, _labels, colors_by, roles, pinned=pinned)
    )


def message_chart_view(
    chart_key: str,
    loaded: Loaded,
    settings: Settings,
    regions: compute.Regions,
    labels: list[str],
    colors_by: str,
    key: str,
    pinned: frozenset[int] = frozenset(),
) -> None:
    """A per-message chart (grouped above the bar limit) whose clicked bar opens a message;
    a marker over each pinned message."""
    assert settings.config is not None
    hover_key = f"{loaded.content_hash}|{settings.config.counter}|{settings.config.model}"
    spec = _chart(chart_key, hover_key, loaded.messages, regions.tokens, labels, colors_by, pinned)
    draw_chart(
        spec, key=key, on_select=select_from_chart(key), selection_mode=PICK, width="stretch"
    )
    if caption := grouping_caption(len(loaded.messages), colors_by):
        st.caption(caption)


@st.cache_resource(max_entries=8, show_spinner=False)
def _calls(content_hash: str, _messages: list[Message]) -> dict[str, tuple[int, str]]:
    return call_index(_messages)


@st.cache_resource(max_entries=8, show_spinner=False)
def _results(content_hash: str, _messages: list[Message]) -> dict[str, int]:
    return result_index(_messages)


@st.cache_resource(max_entries=8, show_spinner=False)
def _pairs(content_hash: str, _messages: list[Message], _tokens: list[int]) -> list[ToolPair]:
    return pair_tool_calls(_messages, _tokens)


@st.cache_resource(max_entries=8, show_spinner=False)
def _roles(content_hash: str, _messages: list[Message]) -> list[str]:
    return [str(message.get("role", "?")) for message in _messages]


@st.cache_resource(max_entries=8, show_spinner=False)
def _tools(content_hash: str, _messages: list[Message]) -> list[frozenset[str]]:
    return message_tools(_messages)


@st.cache_resource(max_entries=8, show_spinner=False)
def _search(content_hash: str, _messages: list[Message]) -> list[str]:
    return search_texts(_messages)


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_composition(
    key: str,
    _messages: list[Message],
    _tokens: list[int] | None,
    _config: CompactionConfig,
    _tools: list[dict[str, Any]],
) -> Composition:
    """What fills the window for `_messages`, once per `key` (the conversation or run, and the
    settings that change the count): the overview and the before → after view share it."""
    counter = make_counter(_config.counter, _config.model)
    return composition(_messages, counter, _config, _tools, tokens=_tokens)


def composition_view(contexts: list[tuple[str, Composition]], key: str) -> None:
    """The stacked bar(s) and their numbers, which add up to each context's tokens."""
    draw_chart(chart_spec(lambda: composition_chart(contexts)), key=key, width="stretch")
    for name, comp in contexts:
        over = f" — {comp.over_window:,} tokens over the window" if comp.over_window else ""
        st.caption(
            f"{name}: {comp.used:,} tokens used of the {comp.window:,} window "
            f"({comp.used / comp.window:.0%}); {comp.free:,} free before the threshold "
            f"({comp.threshold:,}), {comp.reserve:,} reserved past it{over}."
        )
    table = composition_table(contexts)
    st.dataframe(
        table,
        hide_index=True,
        key=f"{key}_table",
        column_config={
            name: st.column_config.NumberColumn(format="localized")
            for name in table
            if name.endswith(" tokens")
        },
    )


def _fates_on_view(loaded: Loaded, settings: Settings) -> list[str] | None:
    """Each input message's fate when a run is on view (so the table can show and filter by it);
    the run is the one the page shows next, already cached."""
    if settings.summarizer == "llm":
        result = compute.llm_result(loaded, settings)
    else:
        step = current_step()
        result = compute.shown_result(loaded, settings, step) if step else None
    if result is None or result.skipped:
        return None
    return [result.fates.get(i, "kept") for i in range(len(loaded.messages))]


def _messages_view(
    loaded: Loaded,
    regions: compute.Regions,
    table: dict[str, list[object]],
    fates: list[str] | None,
    pinned: PinnedMessages,
) -> None:
    """The find box and filters, the (filtered) message table, and the open message (with its
    📌 pin button)."""
    # Beside each other on a wide page, the open message below the table on a narrow one (at
    # 1024 px columns left the previews five characters); the pane scrolls inside either way.
    left, right = beside_or_below("messages_row", "message_list", "message_detail", PANE_PX)
    roles = _roles(loaded.content_hash, loaded.messages)
    tools = _tools(loaded.content_hash, loaded.messages)
    with left:
        flt = filter_controls(roles, tools, regions.labels, fates)
        if flt.active:
            search = _search(loaded.content_hash, loaded.messages)
            shown = filter_messages(flt, roles, search, tools, regions.labels, fates)
            st.caption(f"{len(shown):,} of {len(loaded.messages):,} messages match.")
            table = subset(table, shown)
            if shown and st.session_state.get(SELECTED_KEY) not in shown:
                # The open message follows the filter: a pane still showing #0 beside a table
                # holding only #442 read as #442's text.
                st.session_state[SELECTED_KEY] = shown[0]
        rows = len(next(iter(table.values()), []))
        message_table(table, key="message_table", height=fitted_height(rows, PANE_PX))
    # The open message scrolls in a pane as tall as the table: a long tool output would
    # otherwise stretch the page thousands of pixels beside a table of a few rows.
    with right:
        tool_output_toggle()
        index = open_message_input(len(loaded.messages))
        pin_button(index, pinned)
        render_message(
            loaded.messages[index],
            index,
            regions.labels[index],
            _calls(loaded.content_hash, loaded.messages),
            fates[index] if fates is not None else None,
            loaded.messages,
            _results(loaded.content_hash, loaded.messages),
        )


OVERVIEW_TABS = ("Messages", "Tool calls", "Context composition")


def view_picker(views: Sequence[str], key: str) -> str:
    """Which of `views` to draw (the first until another is picked; never none)."""
    if st.session_state.get(key) not in views:
        st.session_state[key] = views[0]
    chosen = st.segmented_control("View", list(views), key=key, label_visibility="collapsed")
    return str(chosen or views[0])


OVERVIEW_TABS_KEY = "overview_tabs"


@st.cache_resource(max_entries=32, show_spinner=False)
def _budget_bar(
    counts: tuple[int, int, int],
    after_prune: tuple[int, int, int],
    context_length: int,
    threshold_tokens: int,
    _config: CompactionConfig,
) -> str:
    # The bar's spec, built once per figures it shows: of the config it reads only the window
    # and the threshold, which are the key with the counts (building it cost ~15 ms a rerun).
    return chart_spec(lambda: budget_bar(*counts, _config, after_prune))


def render_overview(loaded: Loaded, settings: Settings) -> compute.Regions:
    """Budget bar, region counts, the per-message chart, the list and the open message."""
    assert settings.config is not None
    config = settings.config
    regions = compute.regions(loaded, settings)
    head, middle, tail = (regions.tokens_of(r) for r in ("head", "middle", "tail"))
    total = head + middle + tail
    show_summary_budget(config, regions.summarised_middle_tokens)
    st.markdown(
        f"**{md_escape(loaded.title)}** · {md_escape(loaded.format)} · "
        f"{len(loaded.messages):,} messages · "
        f"**{total:,} tokens** ({total / config.context_length:.0%} of the "
        f"{config.context_length:,} window; threshold {config.threshold_tokens:,})"
    )
    columns = st.columns(3)
    for column, region, tokens in zip(
        columns, ("head", "middle", "tail"), (head, middle, tail), strict=True
    ):
        column.metric(
            f"{region.capitalize()} messages",
            f"{regions.count(region):,}",
            help=f"{tokens:,} tokens",
        )
    after = tuple(regions.pruned_tokens_of(r) for r in ("head", "middle", "tail"))
    spec = _budget_bar(
        (head, middle, tail),
        (after[0], after[1], after[2]),
        config.context_length,
        config.threshold_tokens,
        config,
    )
    draw_chart(spec, key="budget_bar", width="stretch")
    pinned = compute.region_plan(loaded, settings).pinned
    render_pinned_summary(pinned)
    chart_key = f"{loaded.content_hash}|{config.counter}|{config.model}"
    chart_key += f"|{regions.head_end}|{regions.tail_start}"  # the labels follow from the cut
    message_chart_view(
        chart_key,
        loaded,
        settings,
        regions,
        regions.labels,
        "region",
        "message_chart",
        pinned=pinned.indexes,
    )
    fates = _fates_on_view(loaded, settings)
    table = _table(loaded, settings, regions)
    if pinned:
        table["region"] = [
            f"📌 {label}" if index in pinned else label
            for index, label in enumerate(table["region"])
        ]
    if fates is not None:
        table["fate"] = [FATE_LABELS.get(fate, fate) for fate in fates]
    # Only the chosen view is drawn: the first render shows the message list alone, not a
    # 2,500-row table of tool calls and a chart nobody has asked for yet. (A segmented control,
    # not st.tabs(on_change="rerun"), whose state tracking cost the first render an extra run.)
    view = view_picker(OVERVIEW_TABS, OVERVIEW_TABS_KEY)
    if view == "Messages":
        _messages_view(loaded, regions, table, fates, pinned)
    elif view == "Tool calls":
        pairs = _pairs(loaded.content_hash, loaded.messages, regions.tokens)
        with st.container(key="tool_pairs_view"):
            render_tool_pairs(pairs, loaded.messages, "tool_pairs")
    else:
        key = f"in|{chart_key}|{len(loaded.tools)}"
        before = cached_composition(key, loaded.messages, regions.tokens, config, loaded.tools)
        composition_view([("Before compaction", before)], "composition_before")
    return regions
