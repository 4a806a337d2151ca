"""The shared frame every page gets: the conversation the URL names, and the parameter sidebar.

app.py draws it before running the page. A page still asks for it through `current_settings()`,
which draws it when app.py did not run first in this script run: an AppTest opens a page file
directly. (The pages live in app_pages/, not pages/: with a `pages/` folder Streamlit falls back
to its legacy multi-page mode on a fresh server's first request for a page URL, showing its own
menu and running the page without app.py.)
"""

from __future__ import annotations

import streamlit as st

from compaction.cache import use_cache
from compaction.config import CompactionConfig
from compaction.ui.compute import app_cache
from compaction.ui.conversation_link import follow_url, write_url
from compaction.ui.params import Settings, apply_pending_settings, render_sidebar
from compaction.ui.pins_view import apply_pending_pins

SETTINGS_KEY = "_settings"
DRAWN_KEY = "_frame_drawn_this_run"


def draw_frame() -> Settings:
    """Open the conversation the URL names (or the landing one), then the sidebar; name the
    loaded conversation in the URL; remember the Settings for the page."""
    # The app's one memory of content, for this run's pages and their Compactors (a slider
    # moved re-runs the phases on what was counted and read before).
    use_cache(app_cache())
    follow_url()  # before the widgets exist, so a conversation's settings can still be set
    apply_pending_settings()
    apply_pending_pins()  # a new conversation's: message numbers of the last one dropped
    settings = render_sidebar()
    write_url()
    st.session_state[SETTINGS_KEY] = settings
    st.session_state[DRAWN_KEY] = True
    return settings


def current_settings() -> Settings:
    """The Settings of this run; draws the frame if app.py has not drawn it in this run."""
    if st.session_state.pop(DRAWN_KEY, False):
        settings = st.session_state.get(SETTINGS_KEY)
        if isinstance(settings, Settings):
            return settings
    settings = draw_frame()
    st.session_state.pop(DRAWN_KEY, None)
    return settings


def require_config(settings: Settings) -> CompactionConfig:
    """The page's config; without a valid one, say what to fix and stop the page here."""
    if settings.config is None:
        st.error(f"Fix the parameters in the sidebar first: {settings.config_error}")
        st.stop()
    return settings.config
