"""Every colour the app draws with: one palette for regions, one for fates, one for the parts of
a context window, and the ink of lines and labels.

A colour means one thing: no fate is drawn in a region's colour (the before → after chart used to
draw "cut to one line" in the orange that means "middle" one chart above), and the only
colour two palettes share is the summary's, which means the summary in both. Every chart that
colours by one of them carries a legend titled with what the colour encodes (REGION_TITLE,
FATE_TITLE). tests/ui/test_palette.py holds these rules.

Pure data (no Streamlit import) so charts, tables and tests share it. plotly needs CSS colours and
does not pick up the Streamlit theme for every chart type, so the colours are explicit here.
"""

from __future__ import annotations

from compaction.result import Fate

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

#: Fates have their own colours, none of them a region's: in the fate chart the middle is the
#: orchid of "folded into the summary", never the orange of "middle".
FATE_COLORS: dict[str, str] = {
    Fate.KEPT: "#6B7B8C",  # slate: unchanged
    Fate.NOTE_ADDED: "#1F3A93",  # navy
    Fate.ARGUMENTS_SHORTENED: "#72B7B2",  # teal
    Fate.RESULT_MOVED: "#A0CBE8",  # light blue
    Fate.CUT_TO_ONE_LINE: "#8C6D31",  # ochre: a tool output cut to one line
    Fate.DEDUPLICATED: "#E7BA52",  # gold
    Fate.FOLDED_INTO_SUMMARY: "#CE6DBD",  # orchid: now inside the summary
    Fate.PREVIOUS_SUMMARY_REPLACED: "#DE9ED6",  # light orchid
    Fate.SUMMARY_MERGED_IN: "#7B4173",  # plum
    Fate.ORPHAN_REMOVED: "#3B3B3B",  # near black: gone
    Fate.STUB_ADDED: "#AD494A",  # brick
    Fate.CALL_STRIPPED: "#E7969C",  # pink
    Fate.PINNED: "#0E7C86",  # dark cyan: the latest request, kept verbatim
    Fate.CUT_TO_FIT: "#843C39",  # maroon
}

#: The fates only a peer's policy gives (compaction/lab/peers: PLACEHOLDER, TRUNCATED), in
#: colours no engine fate uses.
PEER_FATE_COLORS: dict[str, str] = {
    "placeholder": "#FFBF79",  # apricot: a tool output replaced by a placeholder line
    "truncated": "#D37295",  # rose: kept, but cut shorter
}

#: The peers' rows in the Evaluate charts: colours no baseline of ours uses, so a peer never
#: reads as one of ours.
PEER_COLORS: dict[str, str] = {
    "hermes": "#17BECF",
    "codex": "#8C564B",
    "openhands": "#BCBD22",
    "gemini-cli": "#1F77B4",
    "observation-masking": "#7F7F7F",
}

FATE_LABELS: dict[str, str] = {
    Fate.KEPT: "kept",
    Fate.NOTE_ADDED: "system note added",
    Fate.ARGUMENTS_SHORTENED: "arguments shortened",
    Fate.RESULT_MOVED: "moved next to its call",
    Fate.CUT_TO_ONE_LINE: "cut to one line",
    Fate.DEDUPLICATED: "deduplicated",
    Fate.FOLDED_INTO_SUMMARY: "folded into the summary",
    Fate.PREVIOUS_SUMMARY_REPLACED: "earlier summary replaced",
    Fate.SUMMARY_MERGED_IN: "summary merged into it",
    Fate.ORPHAN_REMOVED: "removed (orphan)",
    Fate.STUB_ADDED: "got a stub result",
    Fate.CALL_STRIPPED: "call stripped",
    Fate.PINNED: "pinned after the summary",
    Fate.CUT_TO_FIT: "cut to fit the window",
}


def region_color(region: str) -> str:
    return REGION_COLORS.get(region, REGION_COLORS["removed"])


def fate_color(fate: str) -> str:
    return FATE_COLORS.get(fate, REGION_COLORS["removed"])


REGION_TITLE = "Region"
FATE_TITLE = "What happened to it"

#: The parts of a context window (ui/composition.py), as Claude Code's /context lists them.
COMPOSITION_COLORS: dict[str, str] = {
    "system": "#393B79",  # indigo
    "tool_definitions": "#9C9EDE",  # lavender
    "user": "#637939",  # olive
    "assistant_text": "#B5CF6B",  # lime
    "tool_calls": "#E7CB94",  # pale mustard
    "tool_results": "#BD9E39",  # mustard: calls and their results in one family
    "summary": REGION_COLORS["summary"],  # the summary: the same colour as everywhere
    "free": "#EDEDED",  # empty
    "reserve": "#D0D0D0",  # empty, past the threshold
}

COMPOSITION_LABELS: dict[str, str] = {
    "system": "System prompt",
    "tool_definitions": "Tool definitions",
    "user": "User messages",
    "assistant_text": "Assistant text",
    "tool_calls": "Tool calls",
    "tool_results": "Tool results",
    "summary": "Summary",
    "free": "Free space",
    "reserve": "Reserve past the threshold",
}

#: Lines, rules and their labels on every chart.
INK = "#333"
#: The recorded (agent's own) series on the Timeline.
RECORDED_INK = "#2A2A2A"
#: Text over a coloured table cell.
CELL_TEXT = "#111"
#: The low end of a heat map.
HEAT_LOW = "#F7F7F7"
#: A series with no colour of its own.
NEUTRAL = "#999"
#: A changed cell in a comparison: a light yellow that reads on both themes.
CHANGED_HIGHLIGHT = "#FFF3B0"
#: A distribution per agent on the Corpus page (one box each: the agent is the axis, not a hue).
DISTRIBUTION = "#5F7C8A"  # slate: no region or fate
