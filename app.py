"""Compaction Lab: `streamlit run app.py`.

The entry point sets the page config, draws the shared sidebar (parameters, bound to the URL) and
runs the page the user picked. Adding a page is one line in PAGES plus one file in pages/.
"""

import streamlit as st

from compaction.ui import nav
from compaction.ui.frame import draw_frame

st.set_page_config(page_title="Compaction Lab", page_icon="🗜️", layout="wide")

PAGES = [
    st.Page("pages/inspect.py", title="Inspect", icon="🔍", url_path="inspect", default=True),
    st.Page("pages/learn.py", title="Learn", icon="🎓", url_path="learn"),
    st.Page("pages/timeline.py", title="Timeline", icon="📈", url_path="timeline"),
    st.Page("pages/evaluate.py", title="Evaluate", icon="🧪", url_path="evaluate"),
    st.Page("pages/sweep.py", title="Sweep", icon="🎛️", url_path="sweep"),
    st.Page("pages/history.py", title="History", icon="🗂️", url_path="history"),
    st.Page("pages/compare.py", title="Compare", icon="⚖️", url_path="compare"),
]

nav.register(PAGES)
page = st.navigation(PAGES)
draw_frame()  # `?sample=<id>` autoload and the shared parameter sidebar
page.run()
