"""The app as a new user finds it, in a real browser: what the first page shows, page switches
(which AppTest never makes: it runs one page file), shared links and a narrow window.

Run with `.venv/bin/pytest -m e2e tests/e2e`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from e2e_helpers import (
    SCREENSHOTS,
    VIEWPORT,
    AppServer,
    choose,
    open_app,
    screenshot,
    wait_idle,
)
from playwright.sync_api import Browser, Locator, Page, expect

pytestmark = pytest.mark.e2e

RENDER_TIMEOUT_MS = 90_000
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SAMPLE = "fix-failing-tests"
PHASE_LABELS = ("1 · Prune", "2 · Boundaries", "3 · Summarise", "4 · Assemble", "5 · Cleanup")


def _no_exception(page: Page) -> None:
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


def _nav(page: Page, title: str) -> None:
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text=title).click()
    expect(page.locator("h1").filter(has_text=title).first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)


def _stepper(page: Page) -> Locator:
    return page.locator("[data-testid='stButton'] button").filter(has_text="·")


def test_the_landing_page_shows_a_loaded_conversation(page: Page, app_server: AppServer) -> None:
    open_app(page, app_server.url)
    main = page.locator("[data-testid='stMain']")
    expect(page.get_by_role("heading", name="Inspect")).to_be_visible()
    # A conversation is on view: its summary line, the budget bar and the per-message chart,
    # the regions' counts and the stepper, with nothing clicked.
    expect(main).to_contain_text("messages", timeout=RENDER_TIMEOUT_MS)
    expect(page.locator("[data-testid='stVegaLiteChart']").nth(1)).to_be_visible()
    middle = page.locator("[data-testid='stMetric']").filter(has_text="Middle messages")
    expect(middle).to_be_visible()
    expect(page.get_by_text("Run step by step")).to_be_visible()
    expect(_stepper(page).filter(has_text="1 · Prune")).to_be_enabled()
    # Loading another conversation is one click away: the Load panel is open on the landing page.
    expect(page.get_by_role("tab", name="Upload")).to_be_visible()
    # And the URL names it, so a copied link reopens it.
    assert "sample=" in page.url or "session=" in page.url or "from_run=" in page.url, page.url
    _no_exception(page)
    shot = screenshot(page, "landing")
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, DOCS / "landing.png")


def test_sweep_opens_a_configuration_in_inspect(page: Page, app_server: AppServer) -> None:
    open_app(page, f"{app_server.url}/sweep?sample={SAMPLE}")
    for label, step in (("tail_token_ratio step", "0.3"), ("summary_ratio step", "0.2")):
        box = page.get_by_label(label)
        box.fill(step)
        box.press("Enter")
        wait_idle(page)
    page.get_by_role("button", name="Run sweep").click()
    button = page.get_by_role("button", name="Open this configuration in Inspect")
    expect(button).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)
    caption = page.get_by_text("tokens, saves", exact=False).first
    point = caption.inner_text().split(":")[0]  # "tail_token_ratio=0.1, summary_ratio=0.1"
    tail = point.split("tail_token_ratio=")[1].split(",")[0].strip()
    button.click()
    expect(page.get_by_role("heading", name="Inspect")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)
    _no_exception(page)
    expect(page.get_by_text("Coding agent fixes a failing pytest suite").first).to_be_visible()
    # The point's settings are in the sidebar and the URL, with the conversation.
    assert f"sample={SAMPLE}" in page.url, page.url
    assert f"p_tail_token_ratio={tail}" in page.url, page.url
    screenshot(page, "sweep-open-in-inspect")


def test_a_copied_timeline_link_reopens_the_conversation_and_settings(
    page: Page, app_server: AppServer, chromium: Browser
) -> None:
    open_app(page, f"{app_server.url}/?sample=research-session", RENDER_TIMEOUT_MS)
    # The research sample suggests a focus topic: applied by the picker and by the link alike.
    focus = page.locator("[data-testid='stSidebar']").get_by_label("Focus topic")
    expect(focus).to_have_value("the Stripe webhook", timeout=RENDER_TIMEOUT_MS)
    box = page.get_by_label("Context length (tokens)")
    box.fill("45000")
    box.press("Enter")
    wait_idle(page)
    _nav(page, "Timeline")
    _no_exception(page)
    # The page switch kept the conversation in the URL (Streamlit drops unbound parameters).
    assert "sample=research-session" in page.url, page.url
    assert "p_context_length=45000" in page.url, page.url
    expect(page.locator("[data-testid='stMain']")).to_contain_text("window 45,000")
    events = page.locator("[data-testid='stMetric']").filter(has_text="Events").first
    shown_events = "".join(ch for ch in events.inner_text() if ch.isdigit())
    link = page.url

    fresh = chromium.new_context(viewport=VIEWPORT)
    try:
        other = fresh.new_page()
        open_app(other, link, RENDER_TIMEOUT_MS)
        expect(other.locator("h1").filter(has_text="Timeline")).to_be_visible()
        expect(other.locator("[data-testid='stMain']")).to_contain_text("window 45,000")
        expect(other.get_by_label("Focus topic")).to_have_value("the Stripe webhook")
        expect(other.get_by_label("Context length (tokens)")).to_have_value("45000")
        expect(
            other.locator("[data-testid='stMetric']").filter(has_text="Events").first
        ).to_contain_text(shown_events)
        _no_exception(other)
    finally:
        fresh.close()

    # Another sample does not inherit the research sample's focus topic, and says so.
    _nav(page, "Inspect")
    page.get_by_text("Loaded:", exact=False).first.click()
    wait_idle(page, RENDER_TIMEOUT_MS)
    choose(page, "Sample session", "An interrupted run leaves orphaned tool calls")
    wait_idle(page, RENDER_TIMEOUT_MS)
    expect(page.get_by_label("Sample session")).to_have_value(
        "An interrupted run leaves orphaned tool calls"
    )
    page.get_by_role("button", name="Load sample").click()
    expect(page.get_by_text("Loaded: An interrupted run", exact=False).first).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page, RENDER_TIMEOUT_MS)
    expect(page.get_by_text("settings changed with the conversation", exact=False)).to_be_visible()
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_label("Focus topic")).to_have_value("", timeout=RENDER_TIMEOUT_MS)
    assert "sample=orphans" in page.url, page.url


def test_every_phase_button_label_is_whole_at_1024_px(page: Page, app_server: AppServer) -> None:
    page.set_viewport_size({"width": 1024, "height": 900})
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    expect(page.get_by_text("Run step by step")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page, RENDER_TIMEOUT_MS)
    for label in (*PHASE_LABELS, "6 · Fit", "Run all", "Reset"):
        button = page.locator("[data-testid='stButton'] button").filter(has_text=label).first
        expect(button).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        # Whole: the text is not cut with an ellipsis (its box is as wide as its content).
        cut = button.evaluate(
            """b => [...b.querySelectorAll('*')].concat([b]).some(
                   e => e.scrollWidth > e.clientWidth + 1)"""
        )
        assert not cut, f"the {label!r} button's label is cut at 1024 px"
        assert label in button.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.get_by_text("Run step by step").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "inspect-1024px.png"))
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SCREENSHOTS / "inspect-1024px.png", DOCS / "inspect-1024px.png")
