"""The page registry: app.py registers its st.Page list here so helpers can link between pages.

Links to pages that are not registered (yet) degrade to a caption instead of failing, so the
Inspect page can point at the History page whether or not it exists in this build.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

PAGES_KEY = "_registered_pages"


def register(pages: Sequence[Any]) -> None:
    """Remember the app's pages by url path (called by app.py on every run)."""
    st.session_state[PAGES_KEY] = {page.url_path: page for page in pages}


def link(url_path: str, label: str, query_params: dict[str, str] | None = None) -> bool:
    """A page link to `url_path` if that page is registered; False (and nothing drawn) if not."""
    pages: dict[str, Any] = st.session_state.get(PAGES_KEY, {})
    page = pages.get(url_path)
    if page is None:
        return False
    st.page_link(page, label=label, query_params=query_params)
    return True
