"""The Corpus page in a real browser: the whole shared corpus scanned from the page, with a
corrupt file beside it that is a row with its error, not a failed scan."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import AppServer, open_app, screenshot, wait_idle
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
TIMEOUT_MS = 180_000


def test_the_corpus_page_renders_the_corpus_scan(
    page: Page, app_server: AppServer, tmp_path: Path
) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "corrupt-session.jsonl").write_bytes(b"\x00\xff\xfe not a session")
    open_app(page, f"{app_server.url}/corpus")
    expect(page.get_by_text("No scan yet", exact=False)).to_be_visible()
    page.get_by_label("Folders or files to scan", exact=False).fill(f"{CORPUS}\n{broken}")
    page.get_by_role("button", name="Scan").click()
    expect(page.get_by_text("in error.", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    expect(page.get_by_text("1 in error.", exact=False)).to_be_visible()
    errors = page.locator("[data-testid='stMetric']").filter(has_text="Files in error")
    expect(errors).to_contain_text("1")
    compactions = page.locator("[data-testid='stMetric']").filter(has_text="Compactions")
    expect(compactions).to_contain_text("2 (2 / 0)")
    table = page.locator("[data-testid='stDataFrame']").first
    expect(table).to_be_visible()
    # What could not be read is named in text with its error, above the grid.
    failed = page.locator("[data-testid='stAlert']").filter(has_text="could not be read")
    expect(failed).to_contain_text("corrupt-session.jsonl")
    expect(failed).to_contain_text("binary content")
    # The shared corpus's README is not a session, said apart from the file in error.
    expect(failed).to_contain_text("(1 in error, 1 not a session)")
    # The grid draws only its first screenful; the corrupt file's row leads it.
    expect(table.get_by_text("corrupt-session.jsonl", exact=False).first).to_be_attached()
    charts = page.locator("[data-testid='stPlotlyChart']")
    expect(charts).to_have_count(3)
    screenshot(page, "corpus")
