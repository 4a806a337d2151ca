"""Each phase's own view: tokens before → after, the message-level diff, and what only it knows.

Phase 1 shows its dedupe table and one-liners beside the outputs they replaced; Phase 2 explains
its boundaries; Phase 3 (its own module, summary_view.py) the prompt, the fallback and the 13
section cards; Phase 4 the assembled conversation and the role reason; Phase 5 the orphan fixes,
savings and anti-thrash; Fit every cut that made the result fit the window.
Everything is read from the PhaseResult's details: no phase logic is repeated here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from compaction.messages import Message
from compaction.result import CompactionResult, PhaseResult
from compaction.ui.charts import preview
from compaction.ui.layout import fitted_height
from compaction.ui.palette import REGION_EMOJI
from compaction.ui.phase_diff import change_rows, phase_changes, text_diff
from compaction.ui.summary_view import summarize_view
from compaction.ui.untrusted import md_escape
from compaction.ui.words import plural

PHASE_TITLES = {
    "prune": "Phase 1 · Prune old tool outputs",
    "boundaries": "Phase 2 · Boundaries",
    "summarize": "Phase 3 · Structured summary",
    "assemble": "Phase 4 · Assemble",
    "cleanup": "Phase 5 · Cleanup and anti-thrash",
    "fit": "Fit · The result fits the window",
}


def _previous(
    result: CompactionResult, phase: PhaseResult, original: Sequence[Message]
) -> tuple[Sequence[Message], Sequence[int | None]]:
    position = result.phases.index(phase)
    if position == 0 or (result.skipped and phase.name == "cleanup"):
        # A skipped run's cleanup repairs the unpruned input, so that is what it changed.
        return original, list(range(len(original)))
    before = result.phases[position - 1]
    return before.messages, before.origins


def render_phase(result: CompactionResult, name: str, original: Sequence[Message]) -> None:
    """Draw the phase called `name` of `result` (one of PHASE_NAMES that the run has)."""
    phase = result.phase(name)
    st.subheader(PHASE_TITLES.get(phase.name, phase.name))
    saved = phase.tokens_before - phase.tokens_after
    columns = st.columns(3)
    columns[0].metric("Tokens before", f"{phase.tokens_before:,}")
    # No delta chip when the phase changed nothing: a grey "0" under the number read as a value.
    delta = f"{-saved:,}" if saved else None
    columns[1].metric("Tokens after", f"{phase.tokens_after:,}", delta=delta)
    columns[2].metric("Phase time", f"{phase.duration_s * 1000:.1f} ms")
    views = {
        "prune": _prune_view,
        "boundaries": _boundaries_view,
        "summarize": summarize_view,
        "assemble": _assemble_view,
        "cleanup": _cleanup_view,
        "fit": _fit_view,
    }
    views[phase.name](phase, result, original)
    previous, previous_origins = _previous(result, phase, original)
    _diff_view(phase, previous, previous_origins)


def _diff_view(
    phase: PhaseResult, previous: Sequence[Message], previous_origins: Sequence[int | None]
) -> None:
    changes = phase_changes(previous, previous_origins, phase)
    st.markdown(f"**What changed** — {plural(len(changes), 'message')}")
    if not changes:
        st.caption("This phase changed no message.")
        return
    st.dataframe(
        change_rows(changes),
        hide_index=True,
        height=fitted_height(len(changes), 220),  # one change is one row, not six blank ones
        key=f"changes_{phase.name}",
    )
    textual = [c for c in changes if c.kind in ("changed", "inserted", "taken out")]
    if not textual:
        return
    choice = st.selectbox(
        "Text diff of",
        range(len(textual)),
        format_func=lambda i: textual[i].label,
        key=f"diff_pick_{phase.name}",
    )
    st.code(text_diff(textual[choice]), language="diff")


def _prune_view(phase: PhaseResult, result: CompactionResult, original: Sequence[Message]) -> None:
    details = phase.details
    st.caption(
        f"{details['deduplicated_count']} deduplicated · {details['summarised_count']} summarised "
        f"to one line · {details['args_truncated_count']} with arguments shrunk · protected: "
        f"head before #{details['protected_head_end']}, tail from "
        f"#{details['protected_tail_start']}"
    )
    if details["dedupe"]:
        st.markdown("**Dedupe table** — the newest copy is kept, older copies become a marker")
        st.dataframe(
            {
                "hash": [row["hash"][:12] for row in details["dedupe"]],
                "replaced copy #": [row["index"] for row in details["dedupe"]],
                "its call": [row["tool_call_id"] for row in details["dedupe"]],
                "kept copy #": [row["kept_index"] for row in details["dedupe"]],
                "kept call": [row["kept_tool_call_id"] for row in details["dedupe"]],
                "chars": [row["chars"] for row in details["dedupe"]],
            },
            hide_index=True,
            key="prune_dedupe",
        )
    if details["summaries"]:
        st.markdown("**One-line summaries** beside the outputs they replaced")
        st.dataframe(
            {
                "#": [row["index"] for row in details["summaries"]],
                "tool": [row["tool"] for row in details["summaries"]],
                "one-line summary": [row["line"] for row in details["summaries"]],
                "original output": [
                    preview(original[row["index"]], 120) for row in details["summaries"]
                ],
                "chars dropped": [row["chars"] for row in details["summaries"]],
            },
            hide_index=True,
            key="prune_summaries",
            column_config={"one-line summary": st.column_config.TextColumn(width="large")},
        )
    if details["args_truncated"]:
        st.markdown("**Arguments shrunk** (valid JSON kept valid)")
        st.dataframe(details["args_truncated"], hide_index=True, key="prune_args")


def _boundaries_view(
    phase: PhaseResult, result: CompactionResult, original: Sequence[Message]
) -> None:
    d = phase.details
    columns = st.columns(4)
    for column, part in zip(columns[:3], ("head", "middle", "tail"), strict=False):
        column.metric(
            f"{part.capitalize()} messages",
            f"{d[f'{part}_messages']:,}",
            help=f"{d[f'{part}_tokens']:,} tokens",
        )
    columns[3].metric("Tail tokens", f"{d['tail_tokens']:,}")
    st.markdown(
        f"- **Head**: the first {d['protect_first_n']} messages, extended to a whole tool group → "
        f"messages 0–{d['head_end'] - 1} ({d['head_tokens']:,} tokens).\n"
        f"- **Tail walk**: from the last message backwards, adding tokens up to the soft ceiling "
        f"**{d['tail_soft_ceiling']:,}** (budget {d['tail_budget_tokens']:,} × soft factor), "
        f"holding at least {d['min_tail_messages']} messages: the raw walk stopped at "
        f"**#{d['raw_walk_stop']}**.\n"
        f"- **Tail** starts at **#{d['tail_start']}** ({d['tail_tokens']:,} tokens); the middle "
        f"is {plural(d['middle_messages'], 'message')} ({d['middle_tokens']:,} tokens)."
    )
    if d["moves"]:
        st.markdown("**Moves of the cut**")
        for move in d["moves"]:
            st.markdown(f"- #{move['from']} → #{move['to']}: {md_escape(move['reason'])}")
    else:
        st.caption("The raw walk's cut needed no move: it split no tool group.")
    anchor = d.get("anchor")
    if anchor == "pinned":
        st.markdown(
            f"**Latest request pinned** (#{d['pinned_index']}, {d.get('pinned_tokens', 0):,} "
            f"tokens): {md_escape(d.get('anchor_reason', ''))}."
        )
    elif anchor == "moved":
        st.markdown(
            f"**Latest request anchored** (the cut moved): {md_escape(d.get('anchor_reason', ''))}."
        )
    elif d.get("anchor_reason"):
        st.caption(f"Latest request: {md_escape(d['anchor_reason'])}.")
    if d.get("last_user_index") is not None:
        st.caption(f"Latest user message: #{d['last_user_index']} (always kept verbatim).")


FIX_LABELS = {
    "removed_result": "result removed",
    "inserted_stub": "stub inserted",
    "stripped_call": "call stripped",
    "moved_result": "result moved next to its call",
}


def _index(value: int | None) -> str:
    # "—" where a fix has no such message (a stub has no input #, a removed result no output #).
    return "—" if value is None else f"#{value}"


def _assemble_view(
    phase: PhaseResult, result: CompactionResult, original: Sequence[Message]
) -> None:
    d = phase.details
    if d.get("summary_role"):
        st.markdown(f"Summary inserted as **{d['summary_role']}** at #{d['summary_index']}.")
    else:
        st.markdown(f"Summary **merged into the first tail message** (input #{d['merged_into']}).")
    st.caption(f"Why: {md_escape(d['role_reason'])}.")
    if d.get("pinned_index") is not None:
        st.caption(
            f"The latest request (input #{d['pinned_index']}) is pinned: kept verbatim right "
            "after the summary, before the tail."
        )
    if d["system_note_added"]:
        note = "added to the system message"
    elif phase.messages and phase.messages[0].get("role") == "system":
        note = "not added: the system message already carries it (from an earlier compaction)"
    else:
        note = "not added: the conversation does not start with a system message to carry it"
    st.caption(f"System note: {note}.")
    labels = ["summary" if o is None else "kept" for o in phase.origins]
    st.dataframe(
        {
            "#": list(range(len(phase.messages))),
            "part": [
                f"{REGION_EMOJI['summary']} summary" if label == "summary" else ""
                for label in labels
            ],
            "role": [str(m.get("role")) for m in phase.messages],
            "from input #": phase.origins,
            "preview": [preview(m) for m in phase.messages],
        },
        hide_index=True,
        height=260,
        key="assembled_table",
    )
    with st.expander("The summary message as sent", expanded=False):
        st.code(d["summary_content"], language=None, wrap_lines=True)


def _cleanup_view(
    phase: PhaseResult, result: CompactionResult, original: Sequence[Message]
) -> None:
    d = phase.details
    columns = st.columns(3)
    columns[0].metric("Savings", f"{result.savings_pct:.1f}%")
    limit = result.config.get("max_ineffective", "?")
    columns[1].metric("Ineffective count", f"{result.ineffective_count} / {limit}")
    columns[2].metric("Orphan fixes", len(d["fixes"]))
    if result.skipped:
        st.info(f"Nothing was summarised: {md_escape(result.skip_reason)}.")
    elif d.get("note"):
        st.info(md_escape(d["note"]))
    if d.get("ineffective"):
        st.warning(
            f"Ineffective compaction: under {result.config.get('ineffective_savings_pct')}% saved."
        )
    if result.suggestion:
        st.error(md_escape(result.suggestion))
    render_orphan_fixes(d)


def render_orphan_fixes(details: dict[str, Any]) -> None:
    """Phase 5's repairs (its `details`): every tool call left without its result, or result
    without its call, and what was done about it."""
    fixes = details.get("fixes") or []
    if not fixes:
        st.markdown("**Orphan fixes** — none")
        st.caption("No orphan fixes: every tool call kept its result.")
        return
    strategy = md_escape(details.get("orphan_strategy", ""))
    st.markdown(f"**Orphan fixes** — {len(fixes):,} (strategy: {strategy})")
    st.dataframe(
        {
            "fix": [FIX_LABELS.get(fix["kind"], fix["kind"]) for fix in fixes],
            "call id": [fix["tool_call_id"] for fix in fixes],
            "tool": [fix["tool_name"] or "—" for fix in fixes],
            "input #": [_index(fix["message_index"]) for fix in fixes],
            "output #": [_index(fix["output_index"]) for fix in fixes],
            "reason": [fix["reason"] for fix in fixes],
        },
        hide_index=True,
        height=fitted_height(len(fixes), 320),
        key="orphan_fixes",
    )


_CUT_KINDS = {"tool_output": "tool output", "arguments": "tool-call arguments", "text": "text"}


def _fit_view(phase: PhaseResult, result: CompactionResult, original: Sequence[Message]) -> None:
    d = phase.details
    window = d.get("window", result.config.get("context_length", 0))
    cuts = d.get("cuts") or []
    columns = st.columns(3)
    columns[0].metric("Window", f"{window:,}")
    columns[1].metric("Cuts", len(cuts))
    columns[2].metric("Largest cut", f"{d.get('largest_cut_chars', 0):,} chars")
    if d.get("cannot_fit"):
        st.error(f"The result does not fit: {md_escape(d['cannot_fit'])}.")
    elif not cuts:
        st.caption(
            f"The result already fits the {window:,}-token window ({phase.tokens_after:,} "
            "tokens): nothing was cut."
        )
    else:
        st.markdown(
            f"The five phases left {d.get('tokens_before', phase.tokens_before):,} tokens, over "
            f"the {window:,}-token window: the largest tool outputs, then tool-call arguments, "
            "then other text were cut around the marker `[… N chars cut to fit the context "
            "window …]`, keeping their first and last parts (never the system message or the "
            "latest request). The summary goes last and section by section: the record of work "
            "first, the user's Constraints, Goal and Active Task only when nothing else is left "
            "to cut."
        )
    if cuts:
        st.dataframe(
            {
                "output #": [cut["message_index"] for cut in cuts],
                "input #": [_index(cut.get("input_index")) for cut in cuts],
                "what": [_CUT_KINDS.get(cut["kind"], cut["kind"]) for cut in cuts],
                "call id": [cut.get("tool_call_id") or "—" for cut in cuts],
                "chars before": [cut["chars_before"] for cut in cuts],
                "chars after": [cut["chars_after"] for cut in cuts],
                "tokens before": [cut["tokens_before"] for cut in cuts],
                "tokens after": [cut["tokens_after"] for cut in cuts],
            },
            hide_index=True,
            key="fit_cuts",
        )
