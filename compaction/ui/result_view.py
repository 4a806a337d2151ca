"""The Result view's own parts, where Run all lands: what the run kept, in the order a person
reads it — whether it fits, what the pins kept, the summary's 13 sections (each line with the
messages it came from) and the orphan fixes. Everything is read from the result: no phase logic
is repeated here.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from compaction.messages import Message
from compaction.result import CompactionResult, Fate
from compaction.ui.layout import fitted_height
from compaction.ui.phase_views import render_orphan_fixes
from compaction.ui.summary_view import render_summary_cards
from compaction.ui.untrusted import md_escape
from compaction.ui.words import plural


def render_outcome(result: CompactionResult, messages: Sequence[Message]) -> None:
    """How the result fits, the pins, the summary and the orphan fixes of `result` (a run of
    `messages` that was not skipped)."""
    _fit_line(result)
    if result.suggestion:
        st.warning(md_escape(result.suggestion))
    render_pins(result, messages)
    _summary(result, messages)
    cleanup = next((phase for phase in result.phases if phase.name == "cleanup"), None)
    if cleanup is not None:
        render_orphan_fixes(cleanup.details)


def _fit_line(result: CompactionResult) -> None:
    fit = result.fit
    if fit is None:
        return
    if fit.cannot_fit:
        st.error(f"The result does not fit the window: {md_escape(fit.cannot_fit)}.")
    elif fit.cuts:
        st.caption(
            f"Fit cut {plural(len(fit.cuts), 'piece')} so the result fits the {fit.window:,}-token "
            "window (6 · Fit lists them)."
        )
    else:
        st.caption(f"The result fits the {fit.window:,}-token window: Fit cut nothing.")


def _summary(result: CompactionResult, messages: Sequence[Message]) -> None:
    summarize = next((phase for phase in result.phases if phase.name == "summarize"), None)
    if summarize is None:
        cleanup = next((phase for phase in result.phases if phase.name == "cleanup"), None)
        note = (cleanup.details.get("note") if cleanup is not None else None) or ""
        st.markdown("**The summary** — none")
        st.info(f"No summary was written. {md_escape(note)}".strip())
        return
    details = summarize.details
    if details.get("discarded"):
        st.markdown("**The summary** — discarded")
        st.info(md_escape(details["discarded"]))
        return
    render_summary_cards(result.summary, messages, details)


def render_pins(result: CompactionResult, messages: Sequence[Message]) -> None:
    """What the pins kept and why, where it went, and what Fit left whole because of them."""
    pinned = result.pinned
    if not pinned:
        return
    reasons = pinned.get("pinned", {})
    unresolved = pinned.get("unresolved", [])
    st.markdown(f"**Pinned** — {plural(len(reasons), 'message')} kept verbatim")
    if reasons:
        regions = _regions(result)
        rows = {
            "#": [int(index) for index in reasons],
            "role": [str(messages[int(i)].get("role", "?")) for i in reasons],
            "kept": [_where(result, int(i), regions) for i in reasons],
            "why": list(reasons.values()),
        }
        st.dataframe(
            rows, hide_index=True, height=fitted_height(len(reasons), 240), key="pinned_kept"
        )
    for line in unresolved:
        st.caption(f"A pin kept nothing: {md_escape(line)}")
    if result.fit is not None and result.fit.held_by_pins:
        held = result.fit.held_by_pins
        st.caption(
            f"Fit left {plural(len(held), 'pinned message')} whole "
            f"({result.fit.pinned_tokens:,} tokens) that it would otherwise have cut: "
            + ", ".join(f"#{h['input_index']}" for h in held)
        )


def _regions(result: CompactionResult) -> list[str]:
    boundaries = next((phase for phase in result.phases if phase.name == "boundaries"), None)
    regions = boundaries.details.get("regions") if boundaries is not None else None
    return list(regions) if isinstance(regions, list) else []


def _where(result: CompactionResult, index: int, regions: list[str]) -> str:
    if result.fates.get(index) in (Fate.PINNED, Fate.SUMMARY_MERGED_IN):
        return "after the summary"
    region = regions[index] if index < len(regions) else ""
    return {"head": "in the head", "tail": "in the tail"}.get(region, "kept")
