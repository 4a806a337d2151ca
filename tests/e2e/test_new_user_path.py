"""The new user's path through the app on a real Claude Code session (issue 33), in a browser.

Load a corpus session its agent auto-compacted, Run all and find the summary and the orphan
fixes in view without another click, pin a message from the list, run again and see it kept
(and named in the URL), then open Audit from the sidebar and read a forgotten command's message.
Run with `.venv/bin/pytest -m e2e tests/e2e/test_new_user_path.py`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from e2e_helpers import AppServer, open_app, screenshot, wait_idle
from playwright.sync_api import Locator, Page, expect

from compaction.summary import SECTION_NAMES

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SPOTTER = (
    ROOT.parent
    / "shared"
    / "corpus"
    / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
TIMEOUT_MS = 120_000
PINNED = 138  # a middle message ("All green. Close gqc.4…") the default run folds into the summary


def _button(page: Page, label: str) -> Locator:
    # Streamlit may hold a hidden copy of a keyed element during a rerun: the visible one.
    return page.locator("[data-testid='stButton'] button").filter(has_text=label, visible=True)


def _no_exception(page: Page) -> None:
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


def _in_view(page: Page, locator: Locator) -> None:
    """Scrolled to and visible: the page shows it without the person picking anything."""
    locator.scroll_into_view_if_needed()
    expect(locator).to_be_visible()


def test_a_new_user_loads_runs_pins_and_audits_a_real_session(
    page: Page, app_server: AppServer
) -> None:
    if not SPOTTER.is_file():
        pytest.skip(f"the shared corpus is absent ({SPOTTER.parent})")
    open_app(page, app_server.url)
    page.get_by_role("tab", name="Upload").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(SPOTTER)
    expect(page.get_by_text("344 messages", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)

    # Run all lands on the result: before → after, the 13 section cards and the orphan fixes.
    _button(page, "Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    _in_view(page, page.get_by_text(f"1. {SECTION_NAMES[0]}").first)
    _in_view(page, page.get_by_text(f"13. {SECTION_NAMES[12]}").first)
    _in_view(page, page.get_by_text("Orphan fixes", exact=False).first)
    _no_exception(page)
    screenshot(page, "new-user-run-all")

    # Pin a message from the list: open it, 📌, and the region bar names it.
    number = page.get_by_label("Open message #")
    number.fill(str(PINNED))
    number.press("Enter")
    pin = _button(page, f"📌 Pin #{PINNED}").first
    expect(pin).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    pin.click()
    expect(
        page.get_by_text(f"#{PINNED}", exact=False).filter(has_text="pinned").first
    ).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    assert f"p_pins={PINNED}" in page.url, page.url  # a shared link carries the pin

    # Run again: the pinned message is kept verbatim.
    _button(page, "Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    pinned = page.get_by_text("Pinned", exact=False).filter(has_text="kept verbatim").first
    _in_view(page, pinned)
    expect(_button(page, f"Unpin #{PINNED}").first).to_be_visible()
    table = page.locator("[data-testid='stDataFrame']").filter(has_text=f"pinned #{PINNED}")
    expect(table.first).to_be_attached(timeout=TIMEOUT_MS)
    _no_exception(page)
    screenshot(page, "new-user-pinned")

    # Audit from the sidebar: the same session, and a forgotten command's message, read.
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Audit").click()
    expect(
        page.get_by_text("Verdict: the agent's context after it was", exact=False)
    ).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    reader = page.get_by_label("Read the message a forgotten fact came from", exact=True)
    reader.click()
    page.keyboard.type("commands: ")  # the list shows its first options only: narrow it
    option = page.get_by_role("option").filter(has_text="commands: ").first
    label = option.inner_text()
    option.click()
    wait_idle(page)
    command = label.removeprefix("commands: ").rsplit(" (message ", 1)[0].rstrip("…")[:25]
    shown = page.locator("[data-testid='stCode']").filter(has_text=command)
    expect(shown.first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("(no text: tool calls only)")).to_have_count(0)
    _no_exception(page)
    screenshot(page, "new-user-audit")


def test_a_run_stored_with_a_pin_reopens_in_inspect_with_it(
    page: Page, app_server: AppServer
) -> None:
    # A pin survives the history: the stored run names it, and "Open in Inspect" repeats the
    # run on its conversation with the pin in force (and in the URL).
    open_app(page, f"{app_server.url}/?sample=fix-failing-tests&p_pins=40")
    _button(page, "Run all").first.click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    page.wait_for_timeout(1_000)  # the run is saved to the history after the view is drawn
    wait_idle(page)
    with sqlite3.connect(app_server.db_path) as db:  # the server is shared: the newest run
        (run_id,) = db.execute("SELECT max(id) FROM runs").fetchone()
    open_app(page, f"{app_server.url}/history?run={run_id}")
    expect(page.get_by_text("📌 Pinned in this run: messages #40")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    _button(page, "Open in Inspect with this run's settings and pins").first.click()
    expect(page.get_by_text("1 pinned", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    assert f"from_run={run_id}" in page.url and "p_pins=40" in page.url, page.url
    _no_exception(page)
