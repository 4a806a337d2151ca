"""Aligned text tables for the commands that print one: the first column left-aligned, the
figures right-aligned, a rule under the header, and the structural measure's tables of
`compaction eval` (per strategy, and the pipeline against head-tail per session)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from compaction.lab.evaluate import COMPACTION, MATCHED
from compaction.lab.per_session import FIGURES, Loss, SessionComparison, figure_name

#: The structural figures as a column header (the library's names are identifiers).
STRUCTURAL_SHORT = {
    "total": "total",
    "latest_request": "latest",
    "constraints": "constr",
    "paths": "paths",
    "errors": "errors",
    "urls": "urls",
    "missing_paths": "missing",
    "early_errors": "early err",
    "definitions": "defs",
    "skills": "skills",
    "decisions": "decisions",
    "early": "1st third",
    "middle": "2nd third",
    "late": "3rd third",
}


def aligned(columns: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max([len(col), *(len(row[i]) for row in rows)]) for i, col in enumerate(columns)]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(widths[i + 1]) for i, cell in enumerate(cells[1:]))
        return "  ".join([first, *rest])

    return [line(columns), "-" * (sum(widths) + 2 * (len(widths) - 1)), *map(line, rows)]


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def structural_lines(table: list[dict[str, Any]]) -> list[str]:
    """Per strategy: the structural recall in total, per category and per third (means over
    the sessions that have facts of each), under a line saying what each column counts."""
    legend = (
        "structural recall per category (mean over the sessions with such facts): the user's "
        "latest request and rules, paths in tool arguments and commands, error lines of failed "
        "calls, URLs, paths a call showed missing, errors of the first half, functions/types/"
        "file docs the agent wrote, skills loaded and their files, the assistant's decisions "
        "with a reason; then by the third of the conversation a fact came from"
    )
    columns = ["strategy", *(STRUCTURAL_SHORT[figure_name(column)] for column in FIGURES)]
    rows = [
        [
            entry["strategy"],
            ratio(entry.get("mean_recall_structural")),
            *(ratio(entry.get(column)) for column in FIGURES[1:]),
        ]
        for entry in table
    ]
    return [legend, *aligned(columns, rows)]


def _versus(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None:
        return "-"
    behind = " ✗" if ours < theirs - 1e-9 else ""
    return f"{ours:.2f}/{theirs:.2f}{behind}"


def session_lines(rows: list[SessionComparison]) -> list[str]:
    """Per session: `ours/head-tail-matched` for every figure, ✗ where ours is lower."""
    columns = ["session", "n", "behind", "tied", "facts"]
    columns += [STRUCTURAL_SHORT[figure_name(c)] for c in FIGURES]
    table = [
        [
            PurePath(row.source).name,
            str(row.conversations),
            str(row.lost),
            str(row.tied),
            f"{row.facts:.0f}",
            *(_versus(row.ours[column], row.theirs[column]) for column in FIGURES),
        ]
        for row in rows
    ]
    return aligned(columns, table)


def loss_lines(found: list[Loss]) -> list[str]:
    """One line per figure the pipeline loses, then its examples indented, one per line."""
    lines = []
    for loss in found:
        lines.append(
            f"{PurePath(loss.source).name}  {loss.figure}  "
            f"{loss.ours:.2f} vs {loss.theirs:.2f} (head-tail-matched)"
        )
        for fact in loss.examples:
            text = " ".join(str(fact["text"]).split())
            shown = text if len(text) <= 140 else text[:139] + "…"
            where = f"[{fact['source_index']}, {fact['position']}]"
            lines.append(f"    {fact['category']} {where} {shown}")
    return lines


def by_session_lines(compared: list[SessionComparison], found: list[Loss]) -> list[str]:
    """`--by-session`: the per-session table, then each total or category the pipeline loses."""
    legend = (
        f"per session, {COMPACTION}/{MATCHED} (the same tokens); n = conversations (figures "
        "are their mean), behind/tied = conversations where compaction's total is below/equal "
        "to head-tail's, facts = structural facts mined (mean); ✗ = compaction keeps less"
    )
    conversations = sum(row.conversations for row in compared)
    summary = (
        f"{COMPACTION} keeps less than {MATCHED} in total on {sum(row.lost for row in compared)} "
        f"of {conversations} sessions and as much on {sum(row.tied for row in compared)}; each "
        "total or category where it keeps less, with facts it lost that head-tail kept "
        "[message index, third]:"
    )
    return [legend, *session_lines(compared), summary, *loss_lines(found)]


def session_markdown(rows: list[SessionComparison]) -> list[str]:
    """The per-session table as markdown (`compaction eval --markdown`), for the docs: each
    cell `ours / head-tail-matched`, bold with ✗ where ours is lower, – where no such fact."""
    header = ["session", "n", "behind / tied", "facts"]
    header += [STRUCTURAL_SHORT[figure_name(c)] for c in FIGURES]
    lines = [
        "| " + " | ".join(header) + " |",
        "|---|" + "--:|" * (len(header) - 1),
    ]
    for row in rows:
        cells = [
            PurePath(row.source).name,
            str(row.conversations),
            f"{row.lost} / {row.tied}",
            f"{row.facts:.0f}",
        ]
        for column in FIGURES:
            ours, theirs = row.ours[column], row.theirs[column]
            if ours is None or theirs is None:
                cells.append("–")
            elif ours < theirs - 1e-9:
                cells.append(f"**{ours:.2f} / {theirs:.2f}** ✗")
            else:
                cells.append(f"{ours:.2f} / {theirs:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines
