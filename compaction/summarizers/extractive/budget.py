"""Fitting the extractive summary into its token budget.

Each section gets a share of the budget (what is left after the 13 headings and the Active Task);
a section that needs less passes the rest on, and the leftover goes to the highest-priority items
still waiting, whatever their section. With a focus topic, items that mention it share ~65% of
the budget and everything else is cut short and shares the rest. Costs are exact token counts of
each line; the rendered whole is counted again at the end and, if over, the lowest-priority lines
go until it fits. Active Task is cut only when it would take more than ACTIVE_TASK_MAX_SHARE of
the budget: the request is never lost by that, because Phase 2's last-user anchor keeps the latest
user message verbatim in the head or the tail, and a 4,000-character task prompt (SWE-agent
writes them) would otherwise leave no room for what the middle did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compaction.summarizers.extractive.items import Item, Sections, rendered_lines
from compaction.summarizers.extractive.text import cut_text, stems, stems_match
from compaction.summary import EMPTY_SECTION, render_summary
from compaction.summary.items import SummaryItem, limited

#: A tiktoken count of a string (the fitter relies on tiktoken's chunking; see _cost).
CountText = Callable[[str], int]

TRUNCATED = "...[truncated]"
ACTIVE_TASK_CUT = "...[cut to fit the summary; the full request is the latest user message]"
#: The most of the budget (after the 13 headings) that the Active Task may take.
ACTIVE_TASK_MAX_SHARE = 0.4
ACTIVE_TASK_ALWAYS_FITS = 200
FOCUS_SHARE = 0.65
UNFOCUSED_MAX_CHARS = 100
FOCUS_ITEMS_LISTED = 200
#: Shares of the budget left after the headings and the Active Task (they sum to 1).
SHARES: dict[str, float] = {
    "Goal": 0.04,
    "Constraints & Preferences": 0.08,
    "Completed Actions": 0.25,
    "Active State": 0.05,
    "In Progress": 0.03,
    "Blocked": 0.08,
    "Key Decisions": 0.07,
    "Resolved Questions": 0.05,
    "Pending User Asks": 0.04,
    "Relevant Files": 0.12,
    "Remaining Work": 0.05,
    "Critical Context": 0.14,
}


@dataclass
class Fitted:
    text: str
    tokens: int
    kept: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    active_task_truncated: bool = False
    over_budget: bool = False
    #: (section, line, kept) of every item the focus topic matched: kept in full, or dropped
    #: by the budget even so.
    focused: list[tuple[str, str, bool]] = field(default_factory=list)
    #: Each section's lines as rendered, with the sources of the items each shows.
    lines: dict[str, list[SummaryItem]] = field(default_factory=dict)
    active_task: str = ""  # as rendered (cut when it alone would take too much of the budget)


def truncate_to(text: str, tokens: int, count: CountText, marker: str = TRUNCATED) -> str:
    """The longest prefix of `text` that, with the truncation marker, has at most `tokens`."""
    low, high = 0, len(text)
    while low < high:  # binary search on characters: O(log n) exact counts
        middle = (low + high + 1) // 2
        if count(text[:middle].rstrip() + marker) <= tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + marker


def _cost(item: Item, count: CountText) -> int:
    """Tokens of the item's line plus its newline.

    A Completed Actions line is `N. text`, and N shifts whenever the middle starts elsewhere
    (another protect_first_n or tail size), which would make every line a new string for the
    counter's per-string cache. tiktoken's pre-tokeniser always ends a chunk at the `.` before the
    space (no pattern lets punctuation absorb whitespace or looks behind), and BPE never merges
    across chunks, so the count of `N. text` is exactly that of `N.` plus that of ` text` — the
    latter stays the same string from run to run, and its count is cached.
    """
    if item.number is not None:
        return count(f"{item.number}.") + count(f" {item.text}") + 1
    return count(item.line()) + 1


def _select(
    pools: list[tuple[list[tuple[str, Item]], float]], count: CountText, budget: int
) -> set[int]:
    """Pass 1 per section within each pool's share, pass 2 over everything by priority."""
    chosen: set[int] = set()
    spent = 0
    # Pass 2 weighs again most of what pass 1 weighed and left out: each item's cost is
    # worked out once (building its line again cost as much as looking up its count).
    costs: dict[int, int] = {}
    for entries, pool_budget in pools:
        by_section: dict[str, list[Item]] = {}
        for name, item in entries:
            by_section.setdefault(name, []).append(item)
        for name, items in by_section.items():
            allowance = pool_budget * SHARES[name]
            for item in sorted(items, key=lambda i: -i.priority):
                cost = costs[id(item)] = _cost(item, count)
                if cost <= allowance:
                    chosen.add(id(item))
                    allowance -= cost
                    spent += cost
                if allowance < 4:
                    break
    rest = sorted(
        (item for entries, _ in pools for _, item in entries if id(item) not in chosen),
        key=lambda i: -i.priority,
    )
    for item in rest:
        if budget - spent < 4:
            break
        known = costs.get(id(item))
        cost = known if known is not None else _cost(item, count)
        if spent + cost <= budget:
            chosen.add(id(item))
            spent += cost
    return chosen


@dataclass
class _Rendered:
    text: str
    kept: dict[str, int]
    dropped: dict[str, int]
    lines: dict[str, list[SummaryItem]]


def _render(active_task: str, sections: Sections, chosen: set[int]) -> _Rendered:
    bodies = {"Active Task": active_task}
    kept: dict[str, int] = {}
    dropped: dict[str, int] = {}
    lines: dict[str, list[SummaryItem]] = {}
    for name, items in sections.items():
        keep = [item for item in items if id(item) in chosen]
        kept[name] = len(keep)
        dropped[name] = len(items) - len(keep)
        omitted = dropped[name] if name == "Completed Actions" and keep else 0
        left_out = [item for item in items if id(item) not in chosen] if omitted else []
        lines[name] = rendered_lines(
            keep,
            name,
            omitted,
            _omitted_kinds(left_out) if omitted else "",
            limited(source for item in left_out for source in item.sources),
        )
        bodies[name] = "\n".join(line.text for line in lines[name]) or EMPTY_SECTION
    return _Rendered(render_summary(bodies), kept, dropped, lines)


def _omitted_kinds(items: list[Item]) -> str:
    """What the actions the budget left out were, by tool: `31 Read, 12 Bash`, so the gaps in
    the numbering say what is missing."""
    counts: dict[str, int] = {}
    for item in items:
        tool = item.text[1:].split("]", 1)[0] if item.text.startswith("[") else "other"
        counts[tool] = counts.get(tool, 0) + 1
    ranked = sorted(counts.items(), key=lambda pair: -pair[1])
    return ", ".join(f"{count} {tool}" for tool, count in ranked[:4])


def fit(
    active_task: str,
    sections: Sections,
    budget: int,
    count: CountText,
    focus_words: set[str] | None = None,
) -> Fitted:
    """The rendered summary within `budget` tokens (see the module docstring)."""
    skeleton = count(render_summary({}))
    truncated = False
    room = max(budget - skeleton, 1)
    # A request of a few sentences is never cut for its share, only when it alone is over budget.
    limit = min(room, max(int(room * ACTIVE_TASK_MAX_SHARE), ACTIVE_TASK_ALWAYS_FITS))
    if count(active_task) > limit:
        active_task = truncate_to(active_task, limit, count, ACTIVE_TASK_CUT)
        truncated = True
    fixed = count(render_summary({"Active Task": active_task}))
    remaining = max(budget - fixed, 0)
    entries = [(name, item) for name, items in sections.items() for item in items]
    if focus_words:
        for _, item in entries:
            # Stems, not letters: "Rust tests" matches "cargo test", "migrations" "migrated".
            item.focus = bool(stems_match(focus_words, stems(item.text)))
            if item.focus:
                item.priority += 100.0
            elif len(item.text) > UNFOCUSED_MAX_CHARS and item.group is None:
                item.text = cut_text(item.text, UNFOCUSED_MAX_CHARS)
        focused = [(n, i) for n, i in entries if i.focus]
        others = [(n, i) for n, i in entries if not i.focus]
        pools = [(focused, remaining * FOCUS_SHARE), (others, remaining * (1 - FOCUS_SHARE))]
    else:
        pools = [(entries, float(remaining))]
    chosen = _select(pools, count, remaining)
    rendered = _render(active_task, sections, chosen)
    tokens = count(rendered.text)
    by_priority = sorted(
        (item for _, item in entries if id(item) in chosen), key=lambda i: i.priority
    )
    while tokens > budget and by_priority:
        overshoot = tokens - budget
        while overshoot > 0 and by_priority:  # drop the cheapest-to-lose lines, then recount
            item = by_priority.pop(0)
            chosen.discard(id(item))
            overshoot -= _cost(item, count)
        rendered = _render(active_task, sections, chosen)
        tokens = count(rendered.text)
    matched = [(name, item.text, id(item) in chosen) for name, item in entries if item.focus]
    return Fitted(
        rendered.text,
        tokens,
        rendered.kept,
        rendered.dropped,
        truncated,
        tokens > budget,
        matched,
        rendered.lines,
        active_task,
    )


def fit_details(fitted: Fitted, budget: int) -> dict[str, Any]:
    return {
        "budget_tokens": budget,
        "tokens": fitted.tokens,
        "kept": fitted.kept,
        "dropped": fitted.dropped,
        "active_task_truncated": fitted.active_task_truncated,
        "over_budget": fitted.over_budget,
        "focus_matched": len(fitted.focused),
        # Listed for the app (Phase 3), up to FOCUS_ITEMS_LISTED: details go to the history.
        "focus_items": [
            {"section": section, "text": text, "kept": kept}
            for section, text, kept in fitted.focused[:FOCUS_ITEMS_LISTED]
        ],
    }
