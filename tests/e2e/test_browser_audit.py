"""The Audit page in a real browser, on the Claude Code session its agent auto-compacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import AppServer, open_app, screenshot, wait_idle
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SPOTTER = (
    ROOT.parent
    / "shared"
    / "corpus"
    / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
TIMEOUT_MS = 120_000


def test_the_audit_view_shows_what_the_agent_forgot(page: Page, app_server: AppServer) -> None:
    if not SPOTTER.is_file():
        pytest.skip(f"the shared corpus is absent ({SPOTTER.parent})")
    open_app(page, f"{app_server.url}/audit")
    page.get_by_role("tab", name="Upload").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(SPOTTER)
    verdict = page.get_by_text("Verdict: the agent's context after it was", exact=False)
    expect(verdict).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    metric = page.locator("[data-testid='stMetric']").filter(has_text="Facts compacted away")
    expect(metric).to_be_visible()
    expect(page.get_by_text("Forgotten by the agent", exact=False)).to_be_visible()
    expect(page.get_by_text("Ours at the same size", exact=True)).to_be_visible()
    screenshot(page, "audit")
