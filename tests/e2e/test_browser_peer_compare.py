"""Inspect's "compare with…" in a real browser: run the pipeline on a sample, pick a peer, and see
both results' fates side by side (artifacts/screenshots/peer-compare.png, also the README's
docs/screenshots/peer-compare.png)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_helpers import ROOT, SCREENSHOTS, VIEWPORT, AppServer, choose, open_app, wait_idle
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

SAMPLE = "fix-failing-tests"
RENDER_TIMEOUT_MS = 90_000
DOCS = ROOT / "docs" / "screenshots" / "peer-compare.png"
WIDTH = 1280  # as the README's other screenshots


def test_compare_with_codex_shows_both_results_side_by_side(
    page: Page, app_server: AppServer
) -> None:
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    expect(page.get_by_role("heading", name="Inspect")).to_be_visible()
    page.locator("[data-testid='stButton'] button").filter(has_text="Run all").click()
    expect(page.get_by_role("heading", name="Compare with a peer")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)

    choose(page, "Compare with…", "codex")
    expect(page.get_by_text("Fate of each original message", exact=False).last).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page, RENDER_TIMEOUT_MS)
    assert "inspect_compare_peer=codex" in page.url  # the comparison can be shared as a link
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()
    expect(page.get_by_text("openai: accepted", exact=False).first).to_be_visible()
    expect(page.get_by_text("only the policy is the peer's", exact=False)).to_be_visible()
    # Both sides' figures: ours and the peer's "Tokens after", beside the page's own ones.
    expect(page.get_by_text("Ours", exact=True)).to_be_visible()
    assert page.locator("[data-testid='stMetric']").filter(has_text="Tokens after").count() >= 3

    path = section_screenshot(page, "peer-compare")
    assert path.stat().st_size > 10_000
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, DOCS)


def section_screenshot(page: Page, name: str) -> Path:
    """The comparison alone, from its heading to the fate counts below the fate table (the
    viewport grown to the content, as e2e_helpers.screenshot does for the whole page)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? 1000"
    )
    page.set_viewport_size({"width": WIDTH, "height": int(height) + 40})
    page.wait_for_timeout(800)  # let the tables re-lay out at the new size
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    top = page.get_by_role("heading", name="Compare with a peer").bounding_box()
    bottom = page.locator("[data-testid='stDataFrame']").last.bounding_box()
    assert main and top and bottom, "the comparison is not on screen"
    y = max(top["y"] - 16, 0)
    clip = {
        "x": main["x"],
        "y": y,
        "width": main["width"],
        "height": bottom["y"] + bottom["height"] + 16 - y,
    }
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), clip=clip, full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path
