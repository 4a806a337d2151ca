"""The viewer features in a real browser (issue 17 part B): the side-by-side transcript scrolls
as one (both sides of a row stay level while the container scrolls), a click on a side opens the
text diff, and a screenshot of each new view (artifacts/screenshots/, copies for the README in
docs/screenshots/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_helpers import ROOT, SCREENSHOTS, AppServer, open_app, wait_idle
from PIL import Image, ImageChops
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.e2e

SAMPLE = "fix-failing-tests"
RENDER_TIMEOUT_MS = 90_000
DOCS = ROOT / "docs" / "screenshots"
WRAPPED = 6  # the sample's message holding a JSON-wrapped GitHub Actions log
MAX_SHOT_HEIGHT = 1_400


def _no_exception(page: Page) -> None:
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


def _shoot(page: Page, element: Locator, name: str) -> Path:
    """A PNG of one element (scrolled into view), kept in artifacts and copied for the README."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    # An element taller than the viewport, inside Streamlit's own scroll container, is captured
    # shifted: grow the viewport to hold it whole first.
    box = element.bounding_box()
    viewport = page.viewport_size or {"width": 1400, "height": 1000}
    if box is not None and box["height"] + 100 > viewport["height"]:
        page.set_viewport_size({"width": viewport["width"], "height": int(box["height"]) + 200})
    element.scroll_into_view_if_needed()
    page.wait_for_timeout(600)  # charts lay out after they scroll into view
    path = SCREENSHOTS / f"{name}.png"
    element.screenshot(path=str(path))
    page.set_viewport_size(viewport)
    _trim(path)
    shutil.copyfile(path, DOCS / f"{name}.png")
    return path


def _trim(path: Path, max_height: int = MAX_SHOT_HEIGHT) -> None:
    """Cut the blank margin a stretched column leaves below its content, and cap the height, so
    the README's images show the view, not a screen of white."""
    image = Image.open(path).convert("RGB")
    blank = Image.new("RGB", image.size, (255, 255, 255))
    box = ImageChops.difference(image, blank).getbbox()
    if box is None:
        return
    bottom = min(box[3] + 16, image.height, max_height)
    image.crop((0, 0, image.width, bottom)).save(path, optimize=True)


def _tab(page: Page, label: str, last: bool = False) -> None:
    """Pick a view (the overview's; `last`: the before → after view's, when both have it)."""
    buttons = page.locator("[data-testid='stButtonGroup'] button").filter(has_text=label)
    (buttons.last if last else buttons.first).click()
    wait_idle(page)


def _run_all(page: Page) -> None:
    page.locator("[data-testid='stButton'] button").filter(has_text="Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)


def _scroller(page: Page) -> Locator:
    return page.locator(".st-key-side_by_side_scroll")


def _box_y(locator: Locator) -> float:
    box = locator.bounding_box()
    assert box is not None
    return float(box["y"])


def test_overview_views_decoded_output_filter_tool_pairs_and_composition(
    page: Page, app_server: AppServer
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    _no_exception(page)

    # Item 5: the wrapped output reads as lines, not as one escaped JSON string.
    box = page.get_by_label("Open message #")
    box.fill(str(WRAPPED))
    box.press("Enter")
    wait_idle(page)
    code = page.locator("[data-testid='stCode']").filter(has_text="Run tests").first
    expect(code).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    text = code.inner_text()
    assert '{"output"' not in text and "\\n" not in text and text.count("\n") > 5
    pane = page.locator(".st-key-message_detail")
    _shoot(page, pane, "tool-output-formatted")

    # Item 13: the find box narrows the table.
    find = page.get_by_label("Find in the conversation")
    find.fill("IntegrityError")
    find.press("Enter")
    wait_idle(page)
    expect(page.get_by_text("messages match").first).to_be_visible()
    _no_exception(page)
    find_column = page.locator(".st-key-message_list")
    _shoot(page, find_column, "find-filter")

    # Item 15: every call with its result.
    _tab(page, "Tool calls")
    expect(page.get_by_text("tool calls ·").first).to_be_visible()
    _no_exception(page)
    _shoot(page, page.locator(".st-key-tool_pairs_view"), "tool-pairs")

    # Item 12: the composition bar (before; after is in the before → after view).
    _tab(page, "Context composition")
    expect(page.get_by_text("Before compaction:").first).to_be_visible()
    _no_exception(page)


def test_side_by_side_scrolls_together_and_opens_a_diff(page: Page, app_server: AppServer) -> None:
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    _run_all(page)
    _no_exception(page)
    _tab(page, "Context composition", last=True)
    composition = page.locator(".st-key-composition_view")
    expect(composition.locator("[data-testid='stVegaLiteChart']")).to_be_visible()
    _shoot(page, composition, "composition")
    _tab(page, "Side by side")
    scroller = _scroller(page)
    scroller.scroll_into_view_if_needed()
    expect(scroller).to_be_visible()
    left = page.locator(".st-key-side_by_side_left_20 button")
    right = page.locator(".st-key-side_by_side_right_20 button")
    left.scroll_into_view_if_needed()
    wait_idle(page)
    # Scroll the container itself to the top, then down: both sides move as one.
    scrolled = scroller.evaluate(
        """el => { const s = [el, ...el.querySelectorAll('*')].find(
                 n => n.scrollHeight > n.clientHeight + 10 &&
                      getComputedStyle(n).overflowY !== 'visible');
               if (!s) return -1; s.scrollTop = 0; return s.scrollHeight - s.clientHeight; }"""
    )
    assert scrolled > 200, "the side-by-side rows do not overflow their scroll container"
    page.wait_for_timeout(300)
    before_left, before_right = _box_y(left), _box_y(right)
    assert abs(before_left - before_right) < 2  # the two sides of a row stand level
    scroller.evaluate(
        """el => { const s = [el, ...el.querySelectorAll('*')].find(
                 n => n.scrollHeight > n.clientHeight + 10 &&
                      getComputedStyle(n).overflowY !== 'visible');
               s.scrollTop = 400; }"""
    )
    page.wait_for_timeout(300)
    after_left, after_right = _box_y(left), _box_y(right)
    assert before_left - after_left > 300  # the row moved up with the scroll…
    assert abs((before_left - after_left) - (before_right - after_right)) < 2  # …both sides
    assert abs(after_left - after_right) < 2

    # A click on the compacted side of the summary row opens its text diff.
    summary = page.locator("[class*='st-key-side_by_side_right_'] button").filter(
        has_text="summarised span"
    )
    summary.first.scroll_into_view_if_needed()
    summary.first.click()
    wait_idle(page)
    expect(page.get_by_text("Text diff —", exact=False).first).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    diff = page.locator("[data-testid='stCode']").filter(has_text="+++ compacted").first
    expect(diff).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    _no_exception(page)
    _shoot(page, page.locator(".st-key-side_by_side_view"), "side-by-side")
