"""One palette for regions and fates, so a colour means the same thing on every page and chart.

Pure data (no Streamlit import) so charts, tables and tests share it. plotly needs CSS colours and
does not pick up the Streamlit theme for every chart type, so the colours are explicit here.
"""

from __future__ import annotations

from compaction.result import (
    ARGS_TRUNCATED,
    CUT_TO_FIT,
    DEDUPLICATED,
    FOLDED,
    KEPT,
    MERGED,
    MOVED,
    NOTE_ADDED,
    PINNED,
    PREVIOUS_SUMMARY,
    REMOVED,
    STRIPPED,
    STUBBED,
    SUMMARISED,
)

#: Where a message sits (Phase 2) or what the output holds in its place.
REGION_COLORS: dict[str, str] = {
    "head": "#4C78A8",  # blue: protected head
    "middle": "#F58518",  # orange: folded into the summary
    "tail": "#54A24B",  # green: kept verbatim
    "summary": "#B279A2",  # purple: the inserted summary
    "removed": "#9D9D9D",  # grey: gone
    "stub": "#E45756",  # red: an inserted stub result
}

REGION_LABELS: dict[str, str] = {
    "head": "Head (protected)",
    "middle": "Middle (summarised)",
    "tail": "Tail (kept)",
    "summary": "Summary",
    "removed": "Removed",
    "stub": "Stub",
}

REGION_EMOJI: dict[str, str] = {
    "head": "🟦",
    "middle": "🟧",
    "tail": "🟩",
    "summary": "🟪",
    "removed": "⬜",
    "stub": "🟥",
}

#: Fates of original messages, each drawn in the colour of the region it ends up resembling.
FATE_REGION: dict[str, str] = {
    KEPT: "tail",
    NOTE_ADDED: "head",
    ARGS_TRUNCATED: "head",
    MOVED: "tail",
    SUMMARISED: "middle",
    DEDUPLICATED: "middle",
    FOLDED: "summary",
    PREVIOUS_SUMMARY: "summary",
    MERGED: "summary",
    REMOVED: "removed",
    STUBBED: "stub",
    STRIPPED: "stub",
    PINNED: "tail",
    CUT_TO_FIT: "stub",
}

FATE_COLORS: dict[str, str] = {
    KEPT: "#54A24B",
    NOTE_ADDED: "#4C78A8",
    ARGS_TRUNCATED: "#72B7B2",
    MOVED: "#88D27A",
    SUMMARISED: "#F58518",
    DEDUPLICATED: "#EECA3B",
    FOLDED: "#B279A2",
    PREVIOUS_SUMMARY: "#D6A5C9",
    MERGED: "#9467BD",
    REMOVED: "#9D9D9D",
    STUBBED: "#E45756",
    STRIPPED: "#FF9DA6",
    PINNED: "#2E8B57",
    CUT_TO_FIT: "#C44E52",
}

FATE_LABELS: dict[str, str] = {
    KEPT: "kept",
    NOTE_ADDED: "system note added",
    ARGS_TRUNCATED: "arguments shrunk",
    MOVED: "moved next to its call",
    SUMMARISED: "summarised to one line",
    DEDUPLICATED: "deduplicated",
    FOLDED: "folded into the summary",
    PREVIOUS_SUMMARY: "earlier summary replaced",
    MERGED: "summary merged into it",
    REMOVED: "removed (orphan)",
    STUBBED: "got a stub result",
    STRIPPED: "call stripped",
    PINNED: "pinned after the summary",
    CUT_TO_FIT: "cut to fit the window",
}


def region_color(region: str) -> str:
    return REGION_COLORS.get(region, REGION_COLORS["removed"])


def fate_color(fate: str) -> str:
    return FATE_COLORS.get(fate, REGION_COLORS["removed"])
