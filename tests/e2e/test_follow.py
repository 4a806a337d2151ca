"""A live agent session in a real browser: open it from "On this machine" and follow it as the
agent writes (the file grows; the page reloads it by itself, with no click)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_records import append, record, write_live_session
from e2e_helpers import AppServer, open_app, screenshot, start_app, stop_app, wait_idle
from playwright.sync_api import Page, expect

from compaction.formats.local_sessions import ROOTS

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[AppServer, Path]]:
    """The app with every agent root under tmp_path, and one Claude Code session in it."""
    roots = {root.variable: str(tmp_path / "roots" / root.agent) for root in ROOTS}
    session = write_live_session(tmp_path / "roots" / "claude-code" / "-home-me-live-project")
    env = {**roots, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    try:
        process, server = start_app(tmp_path, env_extra=env)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server, session
    finally:
        stop_app(process)


def _metric(page: Page, label: str) -> Any:
    return page.locator("[data-testid='stMetric']").filter(has_text=label)


def test_a_followed_session_shows_the_agents_new_turn(page: Page, live: Any) -> None:
    server, session = live
    open_app(page, server.url)
    page.get_by_role("tab", name="On this machine").click()
    expect(page.get_by_text("1 of 1 session(s), newest first", exact=False)).to_be_visible()
    page.locator("[data-testid='stButton'] button").filter(has_text="Open session").click()
    expect(page.get_by_text("Loaded: start the live task", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    wait_idle(page)
    expect(_metric(page, "Head messages")).to_contain_text("2")
    page.get_by_text("Follow: reload when the agent writes to this session").click()
    expect(page.get_by_text("no change since it was opened", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    # The agent writes its next turn; nobody touches the page.
    append(session, record("user", "c", "b", "and now the follow-up"))
    expect(_metric(page, "Head messages")).to_contain_text("3", timeout=TIMEOUT_MS)
    # And the status follows: it names the reload and the count it changed (it kept saying
    # "no change since it was loaded" after the count had moved).
    expect(page.get_by_text("(2 → 3 messages); no change since.", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(page.get_by_text("since it was opened", exact=False)).to_have_count(0)
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "follow-live-session")
