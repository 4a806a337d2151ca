"""Compaction Lab: `streamlit run app.py`.

The entry point sets the page config, draws the shared sidebar (parameters, bound to the URL) and
runs the page the user picked. Adding a page is one line in PAGES plus one file in app_pages/
(not pages/: with that folder name Streamlit falls back to its legacy multi-page mode, with its
own menu, whenever a fresh server is first asked for a page URL).
"""

import streamlit as st

from compaction.ui import nav
from compaction.ui.frame import draw_frame

st.set_page_config(page_title="Compaction Lab", page_icon="🗜️", layout="wide")

PAGES = [
    st.Page("app_pages/inspect.py", title="Inspect", icon="🔍", url_path="inspect", default=True),
    st.Page("app_pages/learn.py", title="Learn", icon="🎓", url_path="learn"),
    st.Page("app_pages/timeline.py", title="Timeline", icon="📈", url_path="timeline"),
    st.Page("app_pages/audit.py", title="Audit", icon="🔎", url_path="audit"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon="🧪", url_path="evaluate"),
    st.Page("app_pages/sweep.py", title="Sweep", icon="🎛️", url_path="sweep"),
    st.Page("app_pages/corpus.py", title="Corpus", icon="🗃️", url_path="corpus"),
    st.Page("app_pages/history.py", title="History", icon="🗂️", url_path="history"),
    st.Page("app_pages/compare.py", title="Compare", icon="⚖️", url_path="compare"),
]

nav.register(PAGES)
page = st.navigation(PAGES)
draw_frame()  # the conversation the URL names (or the landing one) and the sidebar
page.run()
