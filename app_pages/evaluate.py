"""Evaluate: head-tail, truncate-outputs, prune-only and the full pipeline on the same token
target — savings, provider validity and probe recall — for the loaded session and for a folder."""

import streamlit as st

from compaction.errors import CompactionError
from compaction.lab.evaluate import STRATEGY_NAMES
from compaction.lab.samples import SAMPLES_DIR
from compaction.ui.evaluate_views import (
    folder_section,
    lost_facts,
    peer_picker,
    recall_scatter,
    session_evaluation,
    strategies_table,
)
from compaction.ui.frame import current_settings
from compaction.ui.loader import render_loader
from compaction.ui.structural_views import structural_table
from compaction.ui.untrusted import md_escape

st.title("🧪 Evaluate strategies")
settings = current_settings()
ratio = st.slider(
    "Token target (share of the original)",
    0.05,
    0.9,
    0.33,
    0.01,
    key="evaluate_ratio",
    bind="query-params",  # an evaluation at a chosen target can be shared as a link
)
strategies = (*STRATEGY_NAMES, *peer_picker())
kind = "extractive" if settings.summarizer == "llm" else settings.summarizer
if settings.summarizer == "llm":
    st.caption(
        "The full pipeline runs with the extractive summariser here; "
        "`compaction eval PATH --model MODEL --judge MODEL` evaluates with an LLM summary and "
        "the judged probe run."
    )

st.header("The loaded session")
loaded = render_loader()
if loaded is None:
    st.info("Load a conversation to compare the strategies on it.")
elif settings.config is None:
    st.error(f"Fix the parameters in the sidebar first: {settings.config_error}")
else:
    try:
        evaluation = session_evaluation(
            loaded.content_hash, loaded.messages, settings.config, kind, ratio, strategies
        )
    except CompactionError as exc:
        st.error(f"The evaluation could not run: {md_escape(exc)}")
    else:
        st.caption(
            f"{evaluation.tokens_before:,} tokens → target {evaluation.target_tokens:,} · "
            f"{len(evaluation.facts)} facts mined from the original"
        )
        strategies_table(evaluation)
        st.markdown("**Structural recall per category**")
        structural_table(evaluation)
        st.plotly_chart(recall_scatter(evaluation.rows()), key="recall_scatter")
        st.markdown("**Lost facts per strategy**")
        lost_facts(evaluation)

st.divider()
st.header("A folder of sessions")
folder_section(SAMPLES_DIR, ratio, strategies)
