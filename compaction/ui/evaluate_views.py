"""The Evaluate page's parts: the strategies on the loaded session, and on a folder of sessions.

The per-session evaluation is cached per conversation hash + config + summariser + target, and
runs with an offline summariser: an LLM evaluation would call the model on every rerun-miss, and
the app only ever calls a model on an explicit click (the CLI's `compaction eval` covers it).
The folder evaluation runs in-process on a click, one session at a time, with a progress bar.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from compaction.commands.evaluate import collect_tasks, run_task
from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.lab.evaluate import (
    MATCHED,
    STRATEGY_NAMES,
    STRUCTURAL_COLUMNS,
    Evaluation,
    aggregate,
    evaluate,
)
from compaction.lab.peers import PEER_NAMES
from compaction.lab.probes import CATEGORIES
from compaction.messages import Message
from compaction.provider_rules import PROVIDERS
from compaction.summarizers.factory import make_summarizer
from compaction.ui.palette import NEUTRAL, PEER_COLORS, REGION_COLORS
from compaction.ui.structural_views import loss_frame, session_frame, structural_label
from compaction.ui.untrusted import md_escape

STRATEGY_COLORS: dict[str, str] = {
    "head-tail": REGION_COLORS["removed"],
    "truncate-outputs": REGION_COLORS["middle"],
    "prune-only": REGION_COLORS["head"],
    "compaction": REGION_COLORS["tail"],
    "head-tail-matched": REGION_COLORS["stub"],
    **PEER_COLORS,
}
PEERS_NOTE = (
    "The peers run their published policy (lab/peers/: hermes v0.18.2, Codex CLI compact.rs, "
    "OpenHands V0 LLMSummarizingCondenser, Gemini CLI chatCompressionService, JetBrains' "
    "observation masking) forced once at the window whose trigger fires at the target; where a "
    "peer's own model writes the summary, ours does, so only the policy is the peer's. An output "
    "a provider would reject is reported, not repaired."
)
FOLDER_RESULTS_KEY = "_evaluate_folder_results"


@st.cache_resource(max_entries=8, show_spinner="Running the strategies…")
def _evaluation(
    key: str,
    _messages: list[Message],
    _config: CompactionConfig,
    _kind: str,
    _ratio: float,
    _strategies: tuple[str, ...] = STRATEGY_NAMES,
) -> Evaluation:
    return evaluate(
        _messages,
        _strategies,
        target_ratio=_ratio,
        config=_config,
        summarizer=make_summarizer(_kind),
    )


def session_evaluation(
    content_hash: str,
    messages: list[Message],
    config: CompactionConfig,
    kind: str,
    ratio: float,
    strategies: tuple[str, ...] = STRATEGY_NAMES,
) -> Evaluation:
    key = f"{content_hash}|{json.dumps(config.to_dict(), sort_keys=True)}|{kind}|{ratio}"
    if strategies != STRATEGY_NAMES:
        key += "|" + ",".join(strategies)
    return _evaluation(key, messages, config, kind, ratio, strategies)


def peer_picker() -> tuple[str, ...]:
    """The peers to evaluate beside ours (none by default; bound to `?evaluate_peers=`)."""
    chosen = st.multiselect(
        "Compare with peers' published policies",
        list(PEER_NAMES),
        default=[],
        key="evaluate_peers",
        bind="query-params",
        help="hermes, Codex, OpenHands, Gemini CLI and observation masking, as PEERS.md "
        "describes them, measured like every strategy here.",
    )
    return tuple(name for name in PEER_NAMES if name in chosen)


#: The probe categories as a reader names them (the library's names are identifiers).
CATEGORY_LABELS: dict[str, str] = {
    "latest_request": "latest request",
    "constraints": "constraints",
    "files": "files written",
    "errors": "errors",
    "commands": "commands",
    "identifiers": "identifiers",
}


def category_label(category: str) -> str:
    """ "recall: latest request" for `latest_request` (an unknown category reads with spaces)."""
    return "recall: " + CATEGORY_LABELS.get(category, category.replace("_", " "))


#: One format per kind of figure, on both tables: tokens with separators, savings with one
#: decimal, ratios and recall with two.
TOKENS = st.column_config.NumberColumn(format="localized")
PERCENT = st.column_config.NumberColumn(format="%.1f")
RATIO = st.column_config.NumberColumn(format="%.2f")


def _formats(frame: dict[str, list[Any]]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for column in frame:
        if column in ("tokens", "mean tokens"):
            config[column] = TOKENS
        elif column == "savings %":
            config[column] = PERCENT
        elif column == "× target" or column.startswith("recall"):
            config[column] = RATIO
    return config


def strategies_table(evaluation: Evaluation) -> None:
    rows = evaluation.rows()
    table: dict[str, list[Any]] = {
        "strategy": [r["strategy"] for r in rows],
        "tokens": [r["tokens"] for r in rows],
        "savings %": [r["savings_pct"] for r in rows],
        "× target": [round(r["tokens"] / max(1, evaluation.target_tokens), 2) for r in rows],
        "recall": [r["recall"] for r in rows],
        "recall (structural)": [r.get("recall_structural") for r in rows],
        "facts lost": [r["facts_lost"] for r in rows],
    }
    for category in CATEGORIES:
        table[category_label(category)] = [r[f"recall_{category}"] for r in rows]
    for provider in PROVIDERS:
        table[f"{provider} errors"] = [r[f"{provider}_errors"] for r in rows]
    table["valid"] = [r["valid"] for r in rows]
    st.dataframe(
        table,
        hide_index=True,
        key="evaluate_strategies",
        column_config={
            **_formats(table),
            "recall": st.column_config.ProgressColumn(min_value=0.0, max_value=1.0, format="%.2f"),
            "recall (structural)": st.column_config.ProgressColumn(
                min_value=0.0,
                max_value=1.0,
                format="%.2f",
                help=STRUCTURAL_HELP,
            ),
            "× target": st.column_config.NumberColumn(
                format="%.2f",
                help="Tokens left / the target: above 1, the strategy kept more than the target.",
            ),
        },
    )
    if MATCHED in evaluation.outcomes:
        st.caption(MATCHED_NOTE)
    if any(name in PEER_NAMES for name in evaluation.outcomes):
        st.caption(PEERS_NOTE)
    st.caption(EXTRACTIVE_NOTE)


#: Why the extractive pipeline's recall is an upper bound, said wherever recall is shown.
EXTRACTIVE_NOTE = (
    "With the extractive summariser the pipeline's recall is close to 1 by construction: it "
    "mines errors, paths, commands, identifiers and constraints with the same patterns the "
    "probes look for. It shows what the pipeline keeps within its budget, not how well a model "
    "would summarise. **recall (structural)** is the independent measure: facts defined by the "
    "transcript's structure alone (paths in tool arguments and commands, error lines of failed "
    "calls, URLs, the user's rules and latest request, paths found missing, early errors, "
    "definitions written, skills, decisions with a reason), mined without the summariser's "
    "code; the LLM summariser with the judged probe run of `compaction eval` is another."
)

STRUCTURAL_HELP = (
    "Share of facts defined by the transcript's structure (paths in tool arguments and command "
    "lines, error lines of failed calls, URLs, the user's rule sentences, the latest request, "
    "paths found missing, early errors, definitions written, skills, decisions with a reason) "
    "still present: mined without the summariser's patterns. Per category below the table."
)

MATCHED_NOTE = (
    "**head-tail-matched** is head-tail with the tokens the full pipeline kept as its target (it "
    "keeps the latest messages that fit, so it may use fewer). The "
    "pipeline can stay above the target (the head, the tail back to the last user message and "
    "the summary have a floor); this row shows what naive truncation keeps at the same size."
)


def recall_scatter(
    rows: list[dict[str, Any]], x: str = "savings_pct", y: str = "recall"
) -> go.Figure:
    """Savings against recall, one labelled marker per strategy (top right is best)."""
    figure = go.Figure()
    for row in rows:
        name = str(row["strategy"])
        figure.add_trace(
            go.Scatter(
                x=[row[x]],
                y=[row[y]],
                mode="markers+text",
                name=name,
                text=[name],
                # The two head-tail rows often land close together: one label below its dot.
                textposition="bottom center" if name == MATCHED else "top center",
                marker={"size": 14, "color": STRATEGY_COLORS.get(name, NEUTRAL)},
            )
        )
    figure.update_layout(
        height=340,
        margin={"l": 10, "r": 10, "t": 20, "b": 10},
        xaxis={"title": "savings %"},
        yaxis={"title": "probe recall", "range": [0, 1.08]},
        showlegend=False,
    )
    return figure


def lost_facts(evaluation: Evaluation) -> None:
    for name in evaluation.outcomes:
        lost = evaluation.lost_facts(name)
        with st.expander(f"{md_escape(name)}: {len(lost)} fact(s) lost"):
            if lost:
                st.dataframe([fact.to_dict() for fact in lost], hide_index=True, key=f"lost_{name}")
            else:
                st.caption("Every mined fact is still in the compacted context.")


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def aggregate_frame(table: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The folder table as a reader wants it: rounded, with words for headers; a category no
    session had facts of stays empty rather than reading "None"."""
    frame: dict[str, list[Any]] = {
        "strategy": [row["strategy"] for row in table],
        "sessions": [row["sessions"] for row in table],
        "mean tokens": [_round(row["mean_tokens"], 0) for row in table],
        "savings %": [_round(row["mean_savings_pct"], 1) for row in table],
        "× target": [_round(row["mean_target_ratio"], 2) for row in table],
        "over target": [row["over_target"] for row in table],
        "recall": [_round(row["mean_recall"], 3) for row in table],
        "recall (structural)": [_round(row.get("mean_recall_structural"), 3) for row in table],
    }
    for category in CATEGORIES:
        frame[category_label(category)] = [_round(row[f"recall_{category}"], 3) for row in table]
    for column in STRUCTURAL_COLUMNS:
        frame[structural_label(column)] = [_round(row.get(column), 3) for row in table]
    for provider in PROVIDERS:
        frame[f"{provider} rejects"] = [row[f"{provider}_failures"] for row in table]
    return frame


def _run_folder(folder: str, ratio: float, strategies: tuple[str, ...] = STRATEGY_NAMES) -> None:
    # Runs inline after the click so the progress bar is drawn where the button is.
    progress = st.progress(0.0, text="Reading the folder…")
    try:
        tasks, warnings = collect_tasks((folder,), strategies, ratio, limit=None)
    except CompactionError as exc:
        st.session_state[FOLDER_RESULTS_KEY] = {"folder": folder, "error": str(exc)}
        return
    digests = []
    for position, task in enumerate(tasks, 1):
        digests.append(run_task(task))
        progress.progress(position / len(tasks), text=f"{position} / {len(tasks)} sessions")
    failed = [d for d in digests if "error" in d]
    evaluated = [d for d in digests if "error" not in d]
    st.session_state[FOLDER_RESULTS_KEY] = {
        "folder": folder,
        "table": aggregate(evaluated),
        "by_session": session_frame(evaluated),
        "losses": loss_frame(evaluated),
        "sessions": len(digests) - len(failed),
        "warnings": warnings + [f"{d['source']}: {d['error']}" for d in failed],
    }


def folder_section(
    default_folder: Path, ratio: float, strategies: tuple[str, ...] = STRATEGY_NAMES
) -> None:
    """A folder path, a button, a progress bar, then the aggregate table per strategy."""
    folder = st.text_input("Folder of sessions", value=str(default_folder), key="evaluate_folder")
    if st.button("Evaluate the folder", key="evaluate_folder_run"):
        _run_folder(folder.strip(), ratio, strategies)
    results = st.session_state.get(FOLDER_RESULTS_KEY)
    if not results:
        return
    if "error" in results:
        st.error(
            f"Could not evaluate {md_escape(results['folder'])}: {md_escape(results['error'])}"
        )
        return
    st.caption(f"{results['sessions']} session(s) from {md_escape(results['folder'])}")
    for warning in results["warnings"][:20]:
        st.warning(md_escape(warning))
    table = results["table"]
    frame = aggregate_frame(table)
    st.dataframe(frame, hide_index=True, key="evaluate_aggregate", column_config=_formats(frame))
    rows = [{**row, "recall": row["mean_recall"]} for row in table]
    st.plotly_chart(recall_scatter(rows, x="mean_savings_pct"), key="aggregate_scatter")
    st.caption(MATCHED_NOTE)
    by_session = results.get("by_session")
    if by_session and by_session["session"]:
        st.markdown("**Per session: compaction / head-tail-matched** (structural recall)")
        st.dataframe(by_session, hide_index=True, key="evaluate_by_session")
        lost = results.get("losses") or []
        if lost:
            st.markdown(f"**Where compaction keeps less than head-tail-matched** ({len(lost)})")
            st.dataframe(lost, hide_index=True, key="evaluate_losses")
        else:
            st.caption("Compaction keeps at least as much as head-tail-matched everywhere.")
