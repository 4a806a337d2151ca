"""The structural measure on the Evaluate page: its recall per category and per third of the
conversation for each strategy, the facts each lost, and for a folder the pipeline against
head-tail-matched session by session, with the facts it lost that head-tail kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from compaction.lab.evaluate import STRUCTURAL_COLUMNS, Evaluation
from compaction.lab.per_session import FIGURES, compare_sessions, figure_name, losses
from compaction.ui.untrusted import md_escape

RATIO = st.column_config.NumberColumn(format="%.2f")

#: The structural measure's figures as a reader names them: its categories, then the thirds of
#: the conversation the facts came from.
STRUCTURAL_LABELS: dict[str, str] = {
    "total": "total",
    "latest_request": "latest request",
    "constraints": "constraints",
    "paths": "paths",
    "errors": "errors",
    "urls": "URLs",
    "missing_paths": "missing paths",
    "early_errors": "early errors",
    "definitions": "definitions",
    "skills": "skills",
    "decisions": "decisions",
    "early": "1st third",
    "middle": "2nd third",
    "late": "3rd third",
}


def structural_label(column: str) -> str:
    """ "recall (structural): missing paths" for `recall_structural_missing_paths`."""
    name = figure_name(column)
    return "recall (structural): " + STRUCTURAL_LABELS.get(name, name.replace("_", " "))


def structural_table(evaluation: Evaluation) -> None:
    """The structural recall of each strategy per category and per third of the conversation,
    and, per strategy, the structural facts it lost."""
    rows = evaluation.rows()
    table: dict[str, list[Any]] = {"strategy": [r["strategy"] for r in rows]}
    for column in STRUCTURAL_COLUMNS:
        table[structural_label(column).removeprefix("recall (structural): ")] = [
            r.get(column) for r in rows
        ]
    st.dataframe(
        table,
        hide_index=True,
        key="evaluate_structural",
        column_config={name: RATIO for name in table if name != "strategy"},
    )
    st.caption(STRUCTURAL_CATEGORIES_NOTE)
    for name, outcome in evaluation.outcomes.items():
        if outcome.structural is None:
            continue
        lost = outcome.structural.lost
        with st.expander(f"Structural facts lost by {md_escape(name)}: {len(lost)}"):
            if lost:
                st.dataframe(
                    [fact.to_dict() for fact in lost],
                    hide_index=True,
                    key=f"structural_lost_{name}",
                )
            else:
                st.caption("Every structural fact is still in the compacted context.")


STRUCTURAL_CATEGORIES_NOTE = (
    "Structural recall per category (blank: the session has no such fact) and by the third of "
    "the conversation a fact came from. **missing paths**: paths a call's result said do not "
    "exist, kept only where the context still says so; **early errors**: error lines of the "
    "failed calls in the first half; **definitions**: the functions, types and file doc lines "
    "the agent wrote, matched on name and parameters; **skills**: skills loaded and the files "
    "under their folder; **decisions**: the assistant's sentences that state a choice with its "
    "reason."
)


def _versus(ours: float | None, theirs: float | None) -> str:
    return "" if ours is None or theirs is None else f"{ours:.2f} / {theirs:.2f}"


def session_frame(digests: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Per session (a file of many conversations is one row, their mean): the structural recall
    of compaction / head-tail-matched, in total, per category and per third."""
    rows = compare_sessions(digests)
    frame: dict[str, list[Any]] = {
        "session": [Path(row.source).name for row in rows],
        "conversations": [row.conversations for row in rows],
        "lost in total": [row.lost for row in rows],
    }
    for column in FIGURES:
        label = STRUCTURAL_LABELS.get(figure_name(column), figure_name(column))
        frame[label] = [_versus(row.ours[column], row.theirs[column]) for row in rows]
    return frame


def loss_frame(digests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every total or category of a conversation where compaction keeps less than
    head-tail-matched, with facts it lost that head-tail kept."""
    return [
        {
            "session": Path(loss.source).name,
            "figure": STRUCTURAL_LABELS.get(loss.figure, loss.figure),
            "compaction": loss.ours,
            "head-tail-matched": loss.theirs,
            "lost facts [message index]": "; ".join(
                f"[{fact['source_index']}] {fact['text']}" for fact in loss.examples
            ),
        }
        for loss in losses(digests)
    ]
