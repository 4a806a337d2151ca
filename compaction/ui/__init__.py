"""Streamlit helpers shared by the pages: the only part of `compaction` that imports Streamlit.

Pages in `app_pages/` stay thin: they call these helpers, which read the library's results
(PhaseResults, fates, details) and draw them. No compaction logic lives here either; the helpers
only choose what to show and how. `palette` holds the one set of region and fate colours that
every chart, table and legend uses.
"""
