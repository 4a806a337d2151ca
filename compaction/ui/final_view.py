"""Inspect's result of a run: the LLM call with its streaming summary, then before → after —
the totals, (as the Result view, where Run all lands) the 13 section cards, the orphan fixes and
what the pins kept, the fate of every original message (or the composition, or the side-by-side
transcript), whether each provider would accept the input and the output (with every problem),
the downloads and the history save.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence

import streamlit as st

from compaction.formats import dump_conversation
from compaction.messages import Message
from compaction.provider_rules import Problem, errors, validate
from compaction.result import CompactionResult
from compaction.ui import compute, nav
from compaction.ui.overview_view import (
    cached_composition,
    composition_view,
    message_chart_view,
    view_picker,
)
from compaction.ui.palette import FATE_LABELS
from compaction.ui.params import Settings
from compaction.ui.result_view import render_outcome
from compaction.ui.side_by_side import render_side_by_side
from compaction.ui.state import Loaded
from compaction.ui.untrusted import md_escape
from compaction.ui.words import plural


def run_llm_now(loaded: Loaded, settings: Settings) -> CompactionResult | None:
    """Call the LLM, streaming its summary into the page; None when it could not start."""
    st.markdown("**Summary streaming from the model…**")
    slot = st.empty()
    received: list[str] = []
    last = [0.0]

    def on_token(text: str) -> None:
        received.append(text)
        now = time.monotonic()
        if now - last[0] > 0.1:  # redraw at most ten times a second
            last[0] = now
            slot.code("".join(received), language=None, wrap_lines=True)

    try:
        with st.spinner(f"Calling {md_escape(settings.llm_model)}…"):
            result = compute.run_llm(loaded, settings, on_token)
    except Exception as exc:  # a UI must report any failure to start the call, not crash
        st.error(f"The LLM summariser could not run: {md_escape(exc)}")
        return None
    slot.code("".join(received) or "(no streamed text)", language=None, wrap_lines=True)
    return result


def verdict(problems: Sequence[Problem]) -> str:
    """ "✅ valid", "✅ valid, 1 warning", "❌ 2 errors, 3 warnings": what a provider would say."""
    bad = len(errors(problems))
    warned = len(problems) - bad
    also = f", {plural(warned, 'warning')}" if warned else ""
    if not bad:
        return f"✅ valid{also}"
    return f"❌ {plural(bad, 'error')}{also}"


@st.cache_data(max_entries=32, show_spinner=False)
def _problems(key: str, provider: str, _messages: list[Message]) -> list[Problem]:
    return validate(_messages, provider)


def render_final(
    loaded: Loaded,
    result: CompactionResult,
    settings: Settings,
    key: str,
    whole: bool = False,
) -> None:
    """Before/after: totals, the fate of every original message, validity, downloads, history;
    `whole` (the Result view) adds the summary's 13 sections, the orphan fixes and the pins."""
    st.subheader("Before → after")
    columns = st.columns(4)
    columns[0].metric("Tokens before", f"{result.tokens_before:,}")
    columns[1].metric("Tokens after", f"{result.tokens_after:,}")
    columns[2].metric("Savings", f"{result.savings_pct:.1f}%")
    columns[3].metric("Messages", f"{len(loaded.messages):,} → {len(result.messages):,}")
    if result.fallback_used:
        st.warning(
            f"Fallback used: **{md_escape(result.fallback_used)}** — the summariser failed "
            f"({md_escape(result.fallback_reason)}); see Phase 3."
        )
    if whole:
        render_outcome(result, loaded.messages)
    regions = compute.regions(loaded, settings)
    # As in the overview, only the chosen view is drawn: the side-by-side rows are many elements.
    view = view_picker(FINAL_TABS, FINAL_TABS_KEY)
    if view == "Fates":
        _fates_view(loaded, result, settings, regions, key)
    elif view == "Context composition":
        with st.container(key="composition_view"):
            _final_composition(loaded, result, settings, regions, key)
    else:
        with st.container(key="side_by_side_view"):
            st.markdown(
                "**Side by side** — the original and the compacted conversation, row by row"
            )
            render_side_by_side(loaded.messages, result, "side_by_side")
    _validity(loaded, result, key)
    _downloads(loaded, result)
    if settings.save_history:
        _history(loaded, result, settings, key)


FINAL_TABS = ("Fates", "Context composition", "Side by side")
FINAL_TABS_KEY = "final_tabs"


def _fates_view(
    loaded: Loaded,
    result: CompactionResult,
    settings: Settings,
    regions: compute.Regions,
    key: str,
) -> None:
    """The fate of every original message, as a chart and as counts."""
    fates = [result.fates.get(i, "kept") for i in range(len(loaded.messages))]
    chart_key = f"fates|{key}|{id(result)}"
    message_chart_view(chart_key, loaded, settings, regions, fates, "fate", "fate_chart")
    counts: dict[str, int] = {}
    for fate in fates:
        counts[fate] = counts.get(fate, 0) + 1
    st.dataframe(
        {
            "fate": [FATE_LABELS.get(f, f) for f in counts],
            "messages": list(counts.values()),
        },
        hide_index=True,
        key="fate_counts",
    )


def _final_composition(
    loaded: Loaded,
    result: CompactionResult,
    settings: Settings,
    regions: compute.Regions,
    key: str,
) -> None:
    assert settings.config is not None
    config = settings.config
    st.markdown("**Context composition** — what fills the window, before and after")
    before_key = f"in|{loaded.content_hash}|{config.counter}|{config.model}|{len(loaded.tools)}"
    before = cached_composition(before_key, loaded.messages, regions.tokens, config, loaded.tools)
    after_key = f"out|{key}|{id(result)}"
    after = cached_composition(after_key, result.messages, None, config, loaded.tools)
    composition_view([("Before compaction", before), ("After compaction", after)], "composition")


MAX_PROBLEMS_LISTED = 40


def _validity(loaded: Loaded, result: CompactionResult, key: str) -> None:
    st.markdown("**Would the provider accept it?**")
    rows: dict[str, list[str]] = {"provider": [], "input": [], "output": []}
    listed: dict[str, list[str]] = {"input": [], "output": []}
    for provider in ("openai", "anthropic"):
        before = _problems(f"in|{loaded.content_hash}", provider, loaded.messages)
        after = _problems(f"out|{key}", provider, result.messages)
        rows["provider"].append(provider)
        rows["input"].append(verdict(before))
        rows["output"].append(verdict(after))
        for side, problems in (("input", before), ("output", after)):
            listed[side] += _problem_lines(provider, problems)
    st.dataframe(rows, hide_index=True, key="validity")
    # Every verdict the table gives can be read: the input's errors too (a "❌ 1 error" with
    # nothing to open said nothing about which).
    for side in ("input", "output"):
        lines = listed[side]
        if lines:
            with st.expander(f"Errors and warnings in the {side} ({len(lines):,})"):
                st.text("\n".join(lines))


def _problem_lines(provider: str, problems: Sequence[Problem]) -> list[str]:
    """Errors first, then the warnings the verdict counts; at most MAX_PROBLEMS_LISTED."""
    bad = errors(problems)
    ordered = [*bad, *(problem for problem in problems if problem.severity != "error")]
    lines = [f"{provider}: {problem}" for problem in ordered[:MAX_PROBLEMS_LISTED]]
    if len(ordered) > MAX_PROBLEMS_LISTED:
        lines.append(f"{provider}: … and {len(ordered) - MAX_PROBLEMS_LISTED:,} more")
    return lines


def file_stem(loaded: Loaded) -> str:
    """A download's file name stem: the sample's id, else the title as a short slug (a title
    such as "An interrupted run leaves orphaned tool calls" makes a poor file name)."""
    if loaded.source.startswith("sample:"):
        return loaded.source.removeprefix("sample:")
    slug = re.sub(r"[^a-z0-9]+", "-", loaded.title.lower()).strip("-")[:40].rstrip("-")
    return slug or "conversation"


def _downloads(loaded: Loaded, result: CompactionResult) -> None:
    stem = file_stem(loaded)
    columns = st.columns(3)
    for column, fmt in zip(columns[:2], ("openai", "anthropic"), strict=True):
        column.download_button(
            f"Download compacted ({fmt})",
            data=_exporter(result.messages, fmt),
            file_name=f"{stem}.compacted.{fmt}.json",
            mime="application/json",
            key=f"download_{fmt}",
            on_click="ignore",
        )
    columns[2].download_button(
        "Download report (JSON)",
        data=lambda: json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str),
        file_name=f"{stem}.report.json",
        mime="application/json",
        key="download_report",
        on_click="ignore",
    )


def _exporter(messages: list[Message], fmt: str) -> Callable[[], str]:
    # Deferred: the JSON is only built when the user actually downloads.
    def build() -> str:
        return json.dumps(dump_conversation(messages, fmt), indent=2, ensure_ascii=False)

    return build


def _history(loaded: Loaded, result: CompactionResult, settings: Settings, key: str) -> None:
    if not compute.save_requested(key):  # a settings change after the run is not a new save
        st.button("Save this run to history", key="save_run", on_click=compute.request_save,
                  args=(key,))  # fmt: skip
        return
    state = compute.save_run(loaded, result, settings, key)
    if state.problem:
        st.warning(md_escape(state.problem))
        return
    if state.pending:
        st.caption("Saving this run to history in the background…")
        return
    run_id = state.run_id
    if not nav.link(
        "history", f"Saved to history as run #{run_id} — open it", {"run": str(run_id)}
    ):
        st.caption(f"Saved to history as run #{run_id} (`compaction history show {run_id}`).")
