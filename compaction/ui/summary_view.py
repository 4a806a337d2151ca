"""Phase 3's view: what was summarised and by what, the summary's own size, the fallback and
the focus topic when they applied, the prompt sent, and the 13 sections as cards.

Split from phase_views.py, which dispatches to it; everything is read from the phase's details.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from compaction.messages import Message
from compaction.result import CompactionResult, PhaseResult
from compaction.summary import SECTION_NAMES, Summary, parse_summary
from compaction.summary.items import SummaryItem
from compaction.ui.layout import flowing_cards
from compaction.ui.message_views import SELECTED_KEY, call_index, render_message
from compaction.ui.untrusted import md_escape
from compaction.ui.words import plural

_BULLETS = ("- ", "* ", "• ")


def section_lines(body: str) -> list[str]:
    """A section body as display lines: each list item once with "• ", however many markers.

    The summariser writes items as "- text", and the text itself may start with "- " (a user's
    list quoted verbatim); all leading markers collapse into one bullet. Other lines (prose,
    continuation lines) are kept as they are; blank lines are dropped.
    """
    lines: list[str] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        bulleted = False
        while line.startswith(_BULLETS) or line in ("-", "*", "•"):
            line = line[2:].lstrip() if len(line) > 1 else ""
            bulleted = True
        if line:  # a bare marker is an empty item: nothing to show
            lines.append(f"• {line}" if bulleted else line)
    return lines


def _line(item: SummaryItem, name: str) -> str:
    """An item as its card shows it: one bullet, ⚠ when the check flagged it, and where it
    came from after an arrow (`← #12, #40`)."""
    shown = section_lines(item.text) if name != "Active Task" else [item.text]
    text = "\n".join(shown) or item.text
    mark = "⚠ " if item.flags else ""
    return f"{mark}{text}   ← {item.source_label()}"


def render_summary_cards(
    summary: Summary | None,
    messages: Sequence[Message] | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """The 13 sections as cards, in order, empty ones marked; each line says which messages it
    came from, and the table below them opens any line's message (`messages`, the conversation
    the run compacted, shows it in place too)."""
    if summary is None:
        st.info("No structured summary: the static marker stands in for it.")
        return
    filled = sum(1 for name in SECTION_NAMES if not summary.is_empty(name))
    st.markdown(f"**The 13 sections** — {filled} filled, {13 - filled} empty")
    flagged = summary.flagged()
    if flagged:
        st.warning(
            f"The provenance check flagged {plural(len(flagged), 'line')} (⚠): what they state "
            "is not in the messages they cite. The table below says why."
        )
    cards = flowing_cards("summary_cards", "section_card_")
    for number, name in enumerate(SECTION_NAMES, 1):
        with cards.container(border=True, key=f"section_card_{number}"):
            empty = summary.is_empty(name)
            st.markdown(f"**{number}. {name}**" + (" · _empty_" if empty else ""))
            if name == "Active Task" and details is not None and not empty:
                st.caption(_request_caption(details))
            if empty:
                st.caption("None.")
            elif summary.has_provenance:
                st.text("\n".join(_line(item, name) for item in summary.section_items(name)))
            else:
                # Plain text, never markdown: sections quote the conversation (untrusted), and
                # a quoted "- item" under the section's own "- " renders as a nested bullet.
                st.text("\n".join(section_lines(summary.sections[name])))
    if summary.has_provenance:
        render_provenance(summary, messages)


def _request_caption(details: dict[str, Any]) -> str:
    """`latest request, #195, a /create-checkpoint command`: which message Active Task quotes."""
    index = details.get("latest_user_index")
    if index is None:
        return "the latest request (not located in the conversation)"
    command = details.get("latest_user_command")
    kind = f", a {command} command" if command else ""
    return f"latest request, #{index}{kind}"


SOURCE_ROW_KEY = "summary_sources"


def provenance_rows(summary: Summary) -> list[dict[str, str]]:
    """One row per item: its section, its text, the messages (or record) it came from and what
    the check found."""
    return [
        {
            "section": name,
            "line": item.text,
            "from": item.source_label(),
            "check": "; ".join(item.flags) if item.flags else "✓",
        }
        for name in SECTION_NAMES
        for item in summary.section_items(name)
    ]


def render_provenance(summary: Summary, messages: Sequence[Message] | None) -> None:
    """Every line with its sources; selecting one opens its first message in the detail pane
    (the Inspect page's open message) and shows the messages it cites right here."""
    rows = provenance_rows(summary)
    items = [item for name in SECTION_NAMES for item in summary.section_items(name)]
    st.markdown("**Where each line came from** — select a line to open the message it cites")
    st.dataframe(
        rows,
        key=SOURCE_ROW_KEY,
        hide_index=True,
        on_select=lambda: _open_source(items),
        selection_mode="single-row",
        height=min(400, 38 + 35 * len(rows)),
        column_config={
            "section": st.column_config.TextColumn(width="small"),
            "line": st.column_config.TextColumn(width="large"),
            "from": st.column_config.TextColumn(width="small"),
        },
    )
    chosen = _chosen_row()
    if chosen is None or chosen >= len(items) or messages is None:
        return
    item = items[chosen]
    cited = [index for index in item.sources if 0 <= index < len(messages)]
    with st.container(border=True, height=420, key="summary_source_pane"):
        st.caption(f"{rows[chosen]['section']}: the line and what it cites")
        st.text(item.text)
        if item.flags:
            st.warning(md_escape("; ".join(item.flags)))
        if not cited:
            st.caption(f"From: {md_escape(item.source_label())}")
        calls = call_index(messages)
        for index in cited[:MAX_SHOWN_SOURCES]:
            render_message(messages[index], index, "", calls, messages=messages)
        if len(cited) > MAX_SHOWN_SOURCES:
            st.caption(
                f"… and {len(cited) - MAX_SHOWN_SOURCES} more: "
                + ", ".join(f"#{i}" for i in cited[MAX_SHOWN_SOURCES:])
            )


MAX_SHOWN_SOURCES = 3


def _chosen_row() -> int | None:
    state = st.session_state.get(SOURCE_ROW_KEY)
    selection = state.get("selection") if isinstance(state, dict) else None
    if selection is None:
        selection = getattr(state, "selection", None)
    rows = selection.get("rows") if isinstance(selection, dict) else None
    if rows is None:
        rows = getattr(selection, "rows", None)
    return int(rows[0]) if rows else None


def _open_source(items: list[SummaryItem]) -> None:
    """The selected line's first message becomes the open message of the detail pane."""
    chosen = _chosen_row()
    if chosen is not None and chosen < len(items) and items[chosen].sources:
        st.session_state[SELECTED_KEY] = items[chosen].sources[0]


def summarize_view(
    phase: PhaseResult, result: CompactionResult, original: Sequence[Message]
) -> None:
    d = phase.details
    kind = "iterative update of an earlier summary" if d["iterative"] else "first compaction"
    st.markdown(
        f"**{d['turns']} turns** ({d['middle_tokens']:,} tokens) summarised by "
        f"**{md_escape(d['summarizer'])}** · {kind} · budget **{d['budget_tokens']:,} tokens**"
        + (f" · focus: _{md_escape(d['focus'])}_" if d.get("focus") else "")
    )
    if d.get("summary_text"):
        written = _summary_tokens(str(d["summary_text"]), result.config)
        share = f" ({written / d['budget_tokens']:.0%} of it)" if d["budget_tokens"] else ""
        st.markdown(f"The summary itself: **{written:,} tokens**{share}")
    if d.get("pruned_tail_outputs") and d["summarizer"] == "extractive":
        st.caption(
            f"Also mined: {d['pruned_tail_outputs']} tail output(s) that Phase 1 cut to one line "
            "(their identifiers would otherwise leave the context unrecorded)."
        )
    _fallback_notice(d)
    _focus_view(d)
    if d.get("discarded"):
        st.warning(md_escape(d["discarded"]))
    with st.expander("Prompt sent to the summariser"):
        st.code(d["prompt"], language=None, wrap_lines=True)
    if d.get("previous_summary_indices"):
        st.caption(f"Earlier summary taken out: messages {d['previous_summary_indices']}")
    summary = result.summary
    if summary is None and d.get("discarded") and d.get("fallback_used") != "static":
        summary = parse_summary(d["summary_text"])
    render_summary_cards(summary, original, d)
    if summary is None:
        st.code(d["summary_text"], language=None, wrap_lines=True)


def _focus_view(details: dict[str, Any]) -> None:
    """Which summary items the focus topic matched (by word stems) and kept in full."""
    if not details.get("focus"):
        return
    inner = details.get("summarizer_details") or {}
    items = inner.get("focus_items")
    if items is None:
        return  # a model summary: the focus went into the prompt, nothing to list
    stems = ", ".join(inner.get("focus_stems") or [])
    kept = [item for item in items if item["kept"]]
    matched = int(inner.get("focus_matched", len(items)))
    st.caption(
        f"Focus matched {plural(matched, 'item')} on the stems _{md_escape(stems)}_; "
        f"{len(kept)} kept in full (the rest of the summary is cut shorter)."
    )
    if items:
        with st.expander(f"Items the focus kept in full ({len(kept)})"):
            # A table of plain strings: conversation text is untrusted, never markdown.
            st.dataframe(
                [
                    {"section": item["section"], "item": item["text"], "kept": item["kept"]}
                    for item in items
                ],
                hide_index=True,
            )


def _summary_tokens(text: str, config: dict[str, Any]) -> int:
    """The summary text's tokens, counted as the run counted (its config's counter and model)."""
    from compaction.tokens import make_counter

    counter = make_counter(
        str(config.get("counter") or "tiktoken"), str(config.get("model") or "gpt-4o")
    )
    count_text = getattr(counter, "count_text", None)
    if callable(count_text):
        return int(count_text(text))
    return counter.count_message({"role": "user", "content": text})


def _fallback_notice(details: dict[str, Any]) -> None:
    error = details.get("error") or {}
    if not details.get("fallback_used"):
        return
    kind = error.get("kind", "")
    what = (
        "the model is cooling down after a transient error, so no call was made"
        if kind == "cooldown"
        else f"the summariser failed ({md_escape(details.get('fallback_reason'))})"
    )
    st.warning(f"Fallback used: **{md_escape(details['fallback_used'])}** — {what}.")
