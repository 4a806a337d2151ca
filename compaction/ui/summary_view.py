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
from compaction.ui.layout import flowing_cards
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


def render_summary_cards(summary: Summary | None) -> None:
    """The 13 sections as cards, in order, empty ones marked."""
    if summary is None:
        st.info("No structured summary: the static marker stands in for it.")
        return
    filled = sum(1 for name in SECTION_NAMES if not summary.is_empty(name))
    st.markdown(f"**The 13 sections** — {filled} filled, {13 - filled} empty")
    cards = flowing_cards("summary_cards", "section_card_")
    for number, name in enumerate(SECTION_NAMES, 1):
        with cards.container(border=True, key=f"section_card_{number}"):
            empty = summary.is_empty(name)
            st.markdown(f"**{number}. {name}**" + (" · _empty_" if empty else ""))
            if empty:
                st.caption("None.")
            else:
                # Plain text, never markdown: sections quote the conversation (untrusted), and
                # a quoted "- item" under the section's own "- " renders as a nested bullet.
                st.text("\n".join(section_lines(summary.sections[name])))


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
    render_summary_cards(summary)
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
