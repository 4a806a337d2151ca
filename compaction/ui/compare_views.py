"""The Compare page's parts: two stored runs side by side, from `History.compare`.

Conversation text (summary sections) is only ever shown through `st.code`, never as HTML or
Markdown, so nothing a transcript contains can inject markup. Colours come from the palette so a
fate looks the same here as on the Inspect page.
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no stubs installed; used for Styler only
import streamlit as st

from compaction.history import Comparison, RunRow
from compaction.history.compare import run_settings
from compaction.result import Fate
from compaction.ui.palette import CELL_TEXT, CHANGED_HIGHLIGHT, FATE_COLORS, FATE_LABELS
from compaction.ui.untrusted import md_escape
from compaction.ui.words import when

CHANGED_BACKGROUND = f"background-color: {CHANGED_HIGHLIGHT}"


def pick_runs(runs: list[RunRow]) -> tuple[int, int] | None:
    """Two run ids (bound to `?compare_a=&compare_b=`); defaults: the newest run, against the
    newest earlier run of the same conversation (else simply the run before it), since deltas
    between two different conversations mean little."""
    if len(runs) < 2:
        st.info("Compare needs at least two saved runs: compact on the Inspect page twice.")
        return None
    newest = runs[0]
    partner = next((run for run in runs[1:] if run.session_id == newest.session_id), runs[1])
    left, right = st.columns(2)
    a = left.number_input(
        "Run A #", min_value=1, value=partner.id, step=1, key="compare_a", bind="query-params"
    )
    b = right.number_input(
        "Run B #", min_value=1, value=newest.id, step=1, key="compare_b", bind="query-params"
    )
    by_id = {run.id: run for run in runs}
    for column, run_id in ((left, a), (right, b)):
        run = by_id.get(int(run_id))
        if run is not None:
            column.caption(
                f"{md_escape(run.session_title or run.session_id[:10])} · {when(run.created_at)}"
                + (f" · {md_escape(run.label)}" if run.label else "")
            )
    return int(a), int(b)


def config_table(comparison: Comparison, a: RunRow, b: RunRow) -> None:
    """Every setting of both runs; the differing ones highlighted (and listed first)."""
    changed = {entry["field"] for entry in comparison.config}
    settings_a, settings_b = run_settings(a), run_settings(b)
    names = sorted(set(settings_a) | set(settings_b), key=lambda n: (n not in changed, n))
    frame = pd.DataFrame(
        {
            "setting": names,
            f"A (#{a.id})": [_shown(settings_a.get(n)) for n in names],
            f"B (#{b.id})": [_shown(settings_b.get(n)) for n in names],
            "differs": [n in changed for n in names],
        }
    )

    def highlight(row: pd.Series) -> list[str]:
        return [CHANGED_BACKGROUND if row["differs"] else "" for _ in row]

    st.markdown(f"**Config** — {len(changed)} setting(s) differ")
    st.dataframe(frame.style.apply(highlight, axis=1), hide_index=True, key="compare_config")


def _shown(value: Any) -> str:
    return "—" if value is None or value == "" else str(value)


def _delta(value: int, against: int | None) -> str | None:
    """B's difference from A, or no chip at all when there is none (a grey "0" read as data)."""
    if against is None or value == against:
        return None
    return f"{value - against:,}"


def figures(a: RunRow, b: RunRow) -> None:
    """Tokens and savings of A and B, B's deltas against A."""
    left, right = st.columns(2)
    for column, run, other in ((left, a, None), (right, b, a)):
        column.markdown(f"**Run {'A' if other is None else 'B'} · #{run.id}**")
        cells = column.columns(3)
        cells[0].metric(
            "Tokens before",
            f"{run.tokens_before:,}",
            delta=_delta(run.tokens_before, other.tokens_before if other else None),
        )
        cells[1].metric(
            "Tokens after",
            f"{run.tokens_after:,}",
            delta=_delta(run.tokens_after, other.tokens_after if other else None),
            delta_color="inverse",
        )
        cells[2].metric(
            "Savings",
            f"{run.savings_pct:.1f}%",
            delta=None if other is None else f"{run.savings_pct - other.savings_pct:+.1f} pts",
        )
        if run.fallback_used:
            column.caption(
                f"fallback: {md_escape(run.fallback_used)} ({md_escape(run.fallback_reason)})"
            )
        if run.skipped:
            column.caption(f"skipped: {md_escape(run.skip_reason)}")


def section_diffs(comparison: Comparison) -> None:
    """The 13 sections: a unified diff for each one that changed, as plain text."""
    changed = [s for s in comparison.sections if s["changed"]]
    same = [s["section"] for s in comparison.sections if not s["changed"]]
    st.markdown(f"**Summary sections** — {len(changed)} of 13 differ")
    for number, section in enumerate(comparison.sections, 1):
        if not section["changed"]:
            continue
        st.markdown(f"**{number}. {md_escape(section['section'])}**")
        st.code("\n".join(section["diff"]) or "(no text)", language="diff", wrap_lines=True)
    if same:
        st.caption("Identical in both runs: " + md_escape(", ".join(same)))


def fate_table(comparison: Comparison, a: RunRow, b: RunRow) -> None:
    """Each original message's fate in A and in B, coloured by the palette."""
    if not comparison.same_session:
        st.warning(
            "The two runs compacted different conversations: message numbers do not refer to "
            "the same messages."
        )
    rows = comparison.fates
    # Untouched messages have no fate entry: in a run that was recorded they were kept.
    frame = pd.DataFrame(
        {
            "#": [row["index"] for row in rows],
            f"A (#{a.id})": [_fate_label(row["a"], row["index"], a) for row in rows],
            f"B (#{b.id})": [_fate_label(row["b"], row["index"], b) for row in rows],
            "differs": [row["changed"] for row in rows],
        }
    )
    colors = {label: FATE_COLORS[fate] for fate, label in FATE_LABELS.items()}

    def paint(value: Any) -> str:
        color = colors.get(str(value))
        return f"background-color: {color}; color: {CELL_TEXT}" if color else ""

    differing = int(frame["differs"].sum())
    st.markdown(f"**Fate of each original message** — {differing} differ")
    only = st.toggle("Only messages whose fate differs", key="compare_only_changed")
    shown = frame[frame["differs"]] if only else frame
    styled = shown.style.map(paint, subset=[f"A (#{a.id})", f"B (#{b.id})"])
    st.dataframe(styled, hide_index=True, height=360, key="compare_fates")


def _fate_label(fate: str | None, index: int, run: RunRow) -> str:
    if fate is None:
        return FATE_LABELS[Fate.KEPT] if index < run.messages_before else "—"
    return FATE_LABELS.get(fate, fate)
