"""Issue 17, item 10: the layout a person sees in a 1024-pixel window (and at 1280 and 1440),
measured in the browser — widths, heights and positions in pixels, which AppTest never has.

Run with `.venv/bin/pytest -m e2e tests/e2e/test_browser_layout.py`.
"""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import SCREENSHOTS, AppServer, choose, open_app, wait_idle
from playwright.sync_api import Locator, Page, expect

from compaction.ui.layout import CARD_MAX_PX, PANE_MIN_PX, TABLE_MIN_PX
from compaction.ui.message_views import PREVIEW_PX
from compaction.ui.overview_view import PANE_PX

pytestmark = pytest.mark.e2e

RENDER_TIMEOUT_MS = 90_000
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "screenshots"
TAU_BENCH = ROOT.parent / "shared" / "corpus" / "taubench__gpt-4o-airline.json"
SAMPLE = "fix-failing-tests"
#: Two cards one above the other in a column: Streamlit's 1rem gap, and nothing more.
CARD_GAP_MAX_PX = 24
#: Enough of a preview to read what a message is (about 28 characters of the table's font).
PREVIEW_MIN_PX = 200
#: Streamlit's sidebar and the page's side padding at these widths: the room the page has.
SIDEBAR_AND_PADDING_PX = 300 + 2 * 80


def _box(locator: Locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, f"{locator} is not laid out"
    return box


def _open(page: Page, url: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_app(page, url, RENDER_TIMEOUT_MS)
    expect(page.locator(".st-key-message_list [data-testid='stDataFrame']")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )


def _preview_width(table: Locator) -> float:
    """How many pixels of the preview column the table shows without scrolling sideways.

    The grid draws on a canvas; its scroller is as wide as all its columns together and the
    preview is the last one, PREVIEW_PX wide, so the columns before it end at scrollWidth −
    PREVIEW_PX, and what the table's visible width leaves after them is the preview's share.
    """
    widths: dict[str, Any] = table.locator(".dvn-scroller").evaluate(
        "s => ({all: s.scrollWidth, shown: s.clientWidth})"
    )
    before_preview = float(widths["all"]) - PREVIEW_PX
    return min(float(PREVIEW_PX), float(widths["shown"]) - before_preview)


@pytest.mark.parametrize("width", [1024, 1280, 1440])
def test_the_message_table_and_its_pane_at_common_window_widths(
    page: Page, app_server: AppServer, width: int
) -> None:
    _open(page, f"{app_server.url}/?sample={SAMPLE}", width)
    table = page.locator(".st-key-message_list [data-testid='stDataFrame']")
    pane = page.locator(".st-key-message_detail")
    # Open the longest message (an 18,000-token test log): the pane must not grow with it.
    box = page.get_by_label("Open message #")
    box.fill("8")
    box.press("Enter")
    wait_idle(page, RENDER_TIMEOUT_MS)
    expect(pane).to_contain_text("#8 · tool", timeout=RENDER_TIMEOUT_MS)
    t, p = _box(table), _box(pane)

    # The previews are readable: the table is at least as wide as its minimum (or the page),
    # and its preview column shows a sentence's worth, not five characters.
    room = width - SIDEBAR_AND_PADDING_PX
    assert t["width"] >= min(TABLE_MIN_PX, room) - 2, (width, t)
    assert _preview_width(table) >= PREVIEW_MIN_PX, (width, _preview_width(table))

    # The pane is bounded: as tall as the table, and the long message scrolls inside it.
    assert abs(t["height"] - PANE_PX) <= 2, t
    assert p["height"] <= PANE_PX + 2, p
    # (The heading arrives before the long output is laid out: wait for its height.)
    page.wait_for_function(
        """() => { const e = document.querySelector('.st-key-message_detail');
                   return e && e.scrollHeight > e.clientHeight + 100; }""",
        timeout=RENDER_TIMEOUT_MS,
    )
    scroll = pane.evaluate("e => ({all: e.scrollHeight, shown: e.clientHeight})")
    assert scroll["all"] > scroll["shown"] + 100, scroll
    p = _box(pane)
    assert p["height"] <= PANE_PX + 2, p

    # Beside the table when both fit, below it when they do not.
    if room >= TABLE_MIN_PX + PANE_MIN_PX + 16:
        assert p["x"] >= t["x"] + t["width"] - 1 and abs(p["y"] - t["y"]) < PANE_PX, (t, p)
    else:
        assert p["y"] >= t["y"] + t["height"] - 1, (t, p)
        assert abs(p["width"] - t["width"]) <= 2, (t, p)

    if width == 1024:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        table.scroll_into_view_if_needed()
        shot = SCREENSHOTS / "inspect-1024px-messages.png"
        page.set_viewport_size({"width": width, "height": 1500})
        page.wait_for_timeout(400)
        page.screenshot(path=str(shot))
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS / "inspect-1024px-messages.png")


def _cards(page: Page) -> list[dict[str, float]]:
    cards = page.locator("[class*='st-key-section_card_']")
    expect(cards).to_have_count(13, timeout=RENDER_TIMEOUT_MS)
    return [_box(cards.nth(n)) for n in range(13)]


def _columns(boxes: list[dict[str, float]]) -> list[list[dict[str, float]]]:
    by_x: dict[int, list[dict[str, float]]] = {}
    for box in boxes:
        by_x.setdefault(round(box["x"]), []).append(box)
    return [by_x[x] for x in sorted(by_x)]


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_summary_cards_leave_no_gaps(page: Page, app_server: AppServer, width: int) -> None:
    _open(page, f"{app_server.url}/?sample={SAMPLE}", width)
    page.locator("[data-testid='stButton'] button").filter(has_text="Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page, RENDER_TIMEOUT_MS)
    page.locator("[data-testid='stButtonGroup'] button").filter(has_text="3 · Summarise").click()
    expect(page.get_by_text("The 13 sections")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)
    page.wait_for_timeout(300)
    boxes = _cards(page)
    columns = _columns(boxes)
    # One column when a page is too narrow for two readable cards, two when it is not.
    assert len(columns) == (1 if width == 1024 else 2), [len(c) for c in columns]
    read: list[dict[str, float]] = []
    for column in columns:
        read += column
        for upper, lower in pairwise(column):
            gap = lower["y"] - (upper["y"] + upper["height"])
            assert 0 <= gap <= CARD_GAP_MAX_PX, (width, upper, lower)
    # Reading order: down the first column, then the next (the cards in section order).
    assert read == boxes
    # A long section scrolls inside its card; an empty one is one line tall, not a row's height.
    assert max(box["height"] for box in boxes) <= CARD_MAX_PX + 2
    assert min(box["height"] for box in boxes) < 120
    if len(columns) == 2:
        # The columns end near each other: the gap under the shorter is less than one card.
        ends = [column[-1]["y"] + column[-1]["height"] for column in columns]
        assert abs(ends[0] - ends[1]) <= CARD_MAX_PX, ends
    if width == 1024:
        page.locator(".st-key-summary_cards").scroll_into_view_if_needed()
        page.set_viewport_size({"width": width, "height": 2600})
        page.wait_for_timeout(400)
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "inspect-1024px-summary-cards.png"))


def test_a_multi_conversation_file_shows_its_picker_at_1024_px(
    page: Page, app_server: AppServer
) -> None:
    if not TAU_BENCH.exists():
        pytest.skip(f"{TAU_BENCH} is absent (the shared corpus is not beside this checkout)")
    page.set_viewport_size({"width": 1024, "height": 900})
    open_app(page, app_server.url, RENDER_TIMEOUT_MS)
    page.get_by_role("tab", name="Upload").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(TAU_BENCH)
    picker = page.get_by_label("holds 200 conversations", exact=False)
    expect(picker).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)
    # In plain sight: not inside the (folded) Load panel, and near the top of the page.
    inside_folded = picker.evaluate("e => !!e.closest('details:not([open])')")
    assert not inside_folded
    assert _box(picker)["y"] < 900, _box(picker)
    # And it works: another run of the 200 goes on view.
    picker.click()
    option = page.get_by_role("option").filter(has_text="5: ").first
    title = option.inner_text().removeprefix("5: ").rsplit(" (", 1)[0]  # "5: TITLE (N messages)"
    option.click()
    wait_idle(page, RENDER_TIMEOUT_MS)
    loader = page.locator("[data-testid='stMain'] [data-testid='stExpander'] summary").first
    expect(loader).to_contain_text(f"Loaded: {title}", timeout=RENDER_TIMEOUT_MS)
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "inspect-1024px-tau-bench-picker.png"))


def test_a_samples_hint_stays_in_view_after_loading_and_running(
    page: Page, app_server: AppServer
) -> None:
    page.set_viewport_size({"width": 1024, "height": 900})
    open_app(page, f"{app_server.url}/?sample=orphans", RENDER_TIMEOUT_MS)
    # (The Load panel's sample tab holds the same text, hidden while the panel is folded.)
    hint = page.get_by_text("Step to Phase 5 to see the stub added", exact=False)
    hint = hint.filter(visible=True).first
    expect(hint).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    assert not hint.evaluate("e => !!e.closest('details:not([open])')")
    page.locator("[data-testid='stButton'] button").filter(has_text="Run all").click()
    wait_idle(page, RENDER_TIMEOUT_MS)
    expect(hint).to_be_visible()
    # And for a sample picked in the Load panel (the panel folds once it is loaded).
    page.get_by_text("Loaded:", exact=False).first.click()
    choose(page, "Sample session", "Coding agent fixes a failing pytest suite")
    wait_idle(page, RENDER_TIMEOUT_MS)
    page.get_by_role("button", name="Load sample").click()
    expect(page.get_by_text("Loaded: Coding agent", exact=False).first).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page, RENDER_TIMEOUT_MS)
    hint = page.get_by_text("Step to Phase 1 to see tasklog/users", exact=False)
    hint = hint.filter(visible=True).first
    expect(hint).to_be_visible()
    assert not hint.evaluate("e => !!e.closest('details:not([open])')")
