"""In a real browser: a line of the summary opens the message it came from (issue 29).

After Run all, Phase 3's cards end every line with its sources (`← #12`), and selecting a line
in the "Where each line came from" table opens its first message in the Inspect page's detail
pane and shows it under the table.
"""

from __future__ import annotations

import re

import pytest
from e2e_helpers import AppServer, open_app, screenshot, wait_idle
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

SAMPLE = "fix-failing-tests"
RENDER_TIMEOUT_MS = 90_000
ROW_PX = 35  # a dataframe row's height; the header row is the same


def test_a_summary_line_opens_the_message_it_came_from(page: Page, app_server: AppServer) -> None:
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    page.locator("[data-testid='stButton'] button").filter(has_text="Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    page.locator("[data-testid='stButtonGroup'] button").filter(has_text="3 · Summarise").click()
    expect(page.get_by_text("Where each line came from")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    expect(page.get_by_text("← #").first).to_be_visible()
    table = page.locator(".st-key-summary_sources")
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    assert box is not None
    # The row marker of the first line (Active Task): the narrow column at the table's left.
    page.mouse.click(box["x"] + 12, box["y"] + ROW_PX + ROW_PX / 2)
    pane = page.locator(".st-key-summary_source_pane")
    expect(pane).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    expect(pane.get_by_text("Active Task: the line and what it cites")).to_be_visible()
    header = pane.get_by_text(re.compile(r"^#\d+ · user")).first
    expect(header).to_be_visible()
    number = re.match(r"#(\d+)", header.inner_text())
    assert number is not None
    expect(page.get_by_label("Open message #")).to_have_value(number.group(1))
    screenshot(page, "inspect-summary-provenance")
