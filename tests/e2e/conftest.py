"""Fixtures for the real-browser tests: the app under `streamlit run`, and headless Chromium.

The app runs as a user runs it (a subprocess on a free loopback port, its history in a temporary
file); the browser is Debian's /usr/bin/chromium driven through Playwright's sync API. The `page`
fixture here replaces pytest-playwright's, which would look for a browser `playwright install`
downloads (never used: CI has no network).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from e2e_helpers import (
    VIEWPORT,
    AppServer,
    launch_chromium,
    require_chromium,
    start_app,
    stop_app,
)
from playwright.sync_api import Browser, Page, sync_playwright


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    require_chromium()  # no point starting the app for tests that cannot run
    try:
        process, server = start_app(tmp_path_factory.mktemp("app"))
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        stop_app(process)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    require_chromium()
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    """A fresh context per test: its own cookies, so its own Streamlit session."""
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()
