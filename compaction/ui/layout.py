"""Layouts Streamlit's own widths cannot express: a table beside its detail pane that moves the
pane below the table when the window is too narrow for both.

`st.columns([3, 2])` keeps its proportions at any width: at 1024 px (a 564-pixel page beside the
sidebar) the message table got 330 px and its previews five characters. Here the two parts are the
children of a wrapping horizontal container with a minimum width each (`flex-basis`), so the
browser puts them side by side only when both fit, whatever the window or the sidebar does. The
CSS is the project's own constant text (no conversation text reaches it).
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

#: Below these widths a part is not readable: the table's preview column needs about 300 px
#: beside its number, region, role and token columns; the detail pane needs a paragraph's width.
TABLE_MIN_PX = 600
PANE_MIN_PX = 340

# Streamlit wraps each child of a horizontal container in a layout wrapper (flex: 1 1 128px):
# the wrapper holding the keyed child is the flex item to size.
_CSS = """<style>
.st-key-{row} {{ flex-wrap: wrap; }}
.st-key-{row} > :has(> .st-key-{main}) {{ flex: 3 1 {main_px}px !important; min-width: 0; }}
.st-key-{row} > :has(> .st-key-{side}) {{ flex: 2 1 {side_px}px !important; min-width: 0; }}
</style>"""


def beside_or_below(
    row: str, main: str, side: str, side_height: int
) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Two containers keyed `main` and `side` in a row keyed `row`: side by side when the page
    is wide enough for both minimum widths, the side one below the main one otherwise. The side
    one is `side_height` pixels tall and scrolls inside, so it never outgrows the main one."""
    st.html(_CSS.format(row=row, main=main, side=side, main_px=TABLE_MIN_PX, side_px=PANE_MIN_PX))
    holder = st.container(horizontal=True, key=row, gap="medium")
    return (
        holder.container(key=main),
        holder.container(key=side, height=side_height, border=False),
    )


#: A card is at least this wide; the cards flow into as many columns (at most two) as fit.
CARD_MIN_PX = 340
#: A longer card scrolls inside: one long section does not push the rest a screen down.
CARD_MAX_PX = 360

_FLOW_CSS = """<style>
.st-key-{key} {{ display: block !important; columns: {min_px}px 2; column-gap: 1rem; }}
.st-key-{key} > * {{ break-inside: avoid; margin-bottom: 1rem; }}
.st-key-{key} [class*="st-key-{card}"] {{ max-height: {max_px}px; overflow-y: auto; }}
</style>"""


def flowing_cards(key: str, card_prefix: str) -> DeltaGenerator:
    """A container whose children (cards keyed `card_prefix…`) flow down one column, then the
    next, as newspaper columns do: each card as tall as its text (up to CARD_MAX_PX, then it
    scrolls), so a short card beside a long one leaves no gap (a grid of rows did: an empty
    section stood 360 px tall beside a full one). One column when the page is narrow."""
    st.html(_FLOW_CSS.format(key=key, card=card_prefix, min_px=CARD_MIN_PX, max_px=CARD_MAX_PX))
    return st.container(key=key)


#: A dataframe row and its header, in pixels (Streamlit's default row height).
ROW_PX = 35
HEADER_PX = 38


def fitted_height(rows: int, most: int) -> int:
    """A table's height: its rows when they fit under `most` pixels, else `most` (it scrolls).
    A fixed height drew a one-match search as one row and a dozen blank ones."""
    return min(most, HEADER_PX + ROW_PX * max(rows, 1) + 2)
