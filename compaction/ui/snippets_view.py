"""Settings as code to paste: Python, the CLI, hermes-agent's YAML and each framework adapter.

Shared by the Sweep's recommendation and the Inspect page's current settings, so both offer the
same places to put the settings. The snippets are code the lab generated from numbers and
choices (never conversation text), shown with `st.code`.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from compaction.config import CompactionConfig
from compaction.lab.adapter_snippets import ADAPTERS
from compaction.lab.sweep.frontier import config_snippets

#: The snippet kinds before the adapters: key → (tab title, st.code language).
_BASICS: dict[str, tuple[str, str]] = {
    "python": ("Python", "python"),
    "cli": ("CLI", "bash"),
    "yaml": ("hermes-agent YAML", "yaml"),
}


def render_snippets(snippets: Mapping[str, str]) -> None:
    """One tab per snippet `snippets` holds (a peer's point has no adapter ones)."""
    kinds = [kind for kind in (*_BASICS, *ADAPTERS) if kind in snippets]
    if not kinds:
        return
    titles = [_BASICS[k][0] if k in _BASICS else ADAPTERS[k] for k in kinds]
    for kind, tab in zip(kinds, st.tabs(titles), strict=True):
        with tab:
            text = snippets[kind]
            if kind == "python" and text.startswith("CompactionConfig("):
                text = f"from compaction import CompactionConfig\n\n{text}"
            language = _BASICS[kind][1] if kind in _BASICS else "python"
            st.code(text, language=language)
            if kind in ADAPTERS:
                extra = kind.replace("_", "-")
                st.caption(
                    f"Needs `pip install 'compaction-lab[{extra}]'`. `model` and `tools` are "
                    "your agent's; each compaction is recorded to the default history, where "
                    "the History page opens it (docs/integrations.md)."
                )


def render_settings_export(
    config: CompactionConfig, *, agent_model_summary: bool, focus: str | None
) -> None:
    """The current settings as code for an agent, in an expander (the Inspect page)."""
    with st.expander("Use these settings in your agent"):
        render_snippets(
            config_snippets(config, agent_model_summary=agent_model_summary, focus=focus)
        )
