"""Inspect's "compare with…": a peer's published policy (lab/peers/) run on the loaded
conversation, beside our result — the figures, provider validity, and the fate of every original
message in both, coloured by the palette.

The peer runs forced at the sidebar's window with an offline summariser (the extractive one when
the sidebar asks for an LLM: the app calls a model only on an explicit click), so only the policy
is the peer's. Its run is cached per conversation hash + config + summariser + peer. Conversation
text never reaches the page as HTML: the peer's notes and validity problems go through
`md_escape` or `st.code`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no stubs installed; used for Styler only
import streamlit as st

from compaction.lab.peers import PEER_FATE_LABELS, PEER_NAMES, PEERS
from compaction.lab.peers.base import PeerRun, PeerState
from compaction.messages import Message, content_text
from compaction.provider_rules import PROVIDERS, Problem, errors, validate
from compaction.result import CompactionResult, Fate
from compaction.summarizers.factory import make_summarizer
from compaction.tokens import make_counter
from compaction.ui.compute import run_key
from compaction.ui.palette import CELL_TEXT, FATE_COLORS, FATE_LABELS, PEER_FATE_COLORS
from compaction.ui.params import Settings
from compaction.ui.state import Loaded
from compaction.ui.untrusted import md_escape

NONE = "(none)"
PICKER_KEY = "inspect_compare_peer"
LABELS: dict[str, str] = {**FATE_LABELS, **PEER_FATE_LABELS}
COLORS: dict[str, str] = {**FATE_COLORS, **PEER_FATE_COLORS}
PREVIEW_CHARS = 80
OURS = "ours"


@st.cache_resource(max_entries=8, show_spinner="Running the peer's policy…")
def _peer_run(
    key: str, _messages: list[Message], _window: int, _counter: str, _model: str, _kind: str
) -> PeerRun:
    # cache_resource: the run holds the whole output; copying it per rerun costs more.
    peer = PEERS[key.rsplit("|", 1)[1]]
    counter = make_counter(_counter, _model)
    return peer.compact(_messages, _window, counter, make_summarizer(_kind), PeerState())


def peer_run(loaded: Loaded, settings: Settings, name: str) -> PeerRun:
    """`name`'s policy on the loaded conversation at the sidebar's window (cached)."""
    assert settings.config is not None
    kind = "extractive" if settings.summarizer == "llm" else settings.summarizer
    config = settings.config
    key = f"{run_key(loaded, settings, kind)}|{name}"
    return _peer_run(
        key, loaded.messages, config.context_length, config.counter, config.model, kind
    )


def fate_rows(
    messages: list[Message], ours: CompactionResult, theirs: PeerRun
) -> dict[str, list[Any]]:
    """One row per original message: its role, a preview, and its fate in each result."""
    ours_fates = [
        LABELS.get(f, f) for f in (ours.fates.get(i, Fate.KEPT) for i in range(len(messages)))
    ]
    peer_fates = [
        LABELS.get(f, f) for f in (theirs.fates.get(i, Fate.KEPT) for i in range(len(messages)))
    ]
    return {
        "#": list(range(len(messages))),
        "role": [str(m.get("role")) for m in messages],
        OURS: ours_fates,
        theirs.peer: peer_fates,
        # After the fates: a wide preview must not push the two fate columns out of view.
        "message": [content_text(m)[:PREVIEW_CHARS].replace("\n", " ") for m in messages],
        "differs": [a != b for a, b in zip(ours_fates, peer_fates, strict=True)],
    }


def validity(output: list[Message]) -> dict[str, list[Problem]]:
    return {provider: errors(validate(output, provider)) for provider in PROVIDERS}


def _figures(column: Any, title: str, before: int, after: int, output: list[Message]) -> None:
    column.markdown(f"**{md_escape(title)}**")
    cells = column.columns(3)
    cells[0].metric("Tokens after", f"{after:,}")
    cells[1].metric("Saved", f"{(before - after) / before * 100 if before else 0.0:.1f}%")
    cells[2].metric("Messages after", f"{len(output):,}")
    problems = validity(output)
    verdicts = [
        f"{provider}: " + ("accepted" if not found else f"rejected ({len(found)} error(s))")
        for provider, found in problems.items()
    ]
    column.caption(" · ".join(verdicts))
    rejected = [(provider, p) for provider, found in problems.items() for p in found]
    if rejected:
        with column.expander(f"Why a provider rejects {title}"):
            st.code(
                "\n".join(f"{provider}: {problem.message}" for provider, problem in rejected[:20]),
                language=None,
                wrap_lines=True,
            )


def render_peer_compare(loaded: Loaded, result: CompactionResult, settings: Settings) -> None:
    """The "compare with…" picker and, once a peer is picked, the two results side by side."""
    st.subheader("Compare with a peer")
    name = st.selectbox(
        "Compare with…",
        [NONE, *PEER_NAMES],
        key=PICKER_KEY,
        bind="query-params",
        help="Runs that agent's published compaction policy (as ../shared/spec/PEERS.md "
        "describes it) on this conversation, at the sidebar's window.",
    )
    if name == NONE or settings.config is None:
        st.caption("Pick a peer to see what its compaction would keep, cut and drop here.")
        return
    theirs = peer_run(loaded, settings, str(name))
    peer = PEERS[theirs.peer]
    st.caption(
        f"{md_escape(peer.version)}, forced at a {settings.config.context_length:,}-token window; "
        "its summary (if it writes one) comes from our offline summariser, so only the policy "
        "is the peer's."
    )
    left, right = st.columns(2)
    _figures(left, "Ours", result.tokens_before, result.tokens_after, result.messages)
    _figures(right, theirs.peer, theirs.tokens_before, theirs.tokens_after, theirs.messages)
    for note in theirs.notes:
        right.caption(md_escape(note))
    if theirs.rejected:
        right.warning(
            f"{md_escape(theirs.peer)} rejected its own result: {md_escape(theirs.rejected)}"
        )
    rows = fate_rows(loaded.messages, result, theirs)
    frame = pd.DataFrame(rows)
    differing = int(frame["differs"].sum())
    st.markdown(f"**Fate of each original message** — {differing} differ")
    only = st.toggle("Only messages whose fate differs", key="peer_compare_only_changed")
    shown = frame[frame["differs"]] if only else frame
    label_colors = {label: COLORS[fate] for fate, label in LABELS.items() if fate in COLORS}

    def paint(value: Any) -> str:
        color = label_colors.get(str(value))
        return f"background-color: {color}; color: {CELL_TEXT}" if color else ""

    styled = shown.style.map(paint, subset=[OURS, theirs.peer])
    st.dataframe(styled, hide_index=True, height=360, key="peer_compare_fates")
    counts = pd.DataFrame(
        {
            "fate": sorted(set(rows[OURS]) | set(rows[theirs.peer])),
        }
    )
    counts[OURS] = [rows[OURS].count(f) for f in counts["fate"]]
    counts[theirs.peer] = [rows[theirs.peer].count(f) for f in counts["fate"]]
    st.dataframe(counts, hide_index=True, key="peer_compare_counts")
