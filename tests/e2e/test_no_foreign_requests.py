"""A conversation full of Markdown images and links makes the browser request nothing but the
app's own origin (issue 20 item 11): a title such as `Fix ![p](http://host/t.png)` rendered as
Markdown is a tracking beacon.

The page's every request is recorded from the first navigation on, while the conversation is
uploaded, shown, opened message by message, run through all phases and each phase's view is
shown; any request to another origin fails the test (data: and blob: URLs are the page's own).
Run with `.venv/bin/pytest -m e2e tests/e2e/test_no_foreign_requests.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from e2e_helpers import VIEWPORT, AppServer, open_app, screenshot, wait_idle
from playwright.sync_api import Browser, Locator, Page, Request, expect

pytestmark = pytest.mark.e2e

RENDER_TIMEOUT_MS = 90_000
# Port 9 (discard) on loopback: nothing answers, but the browser's attempt is a request event.
FOREIGN = "http://127.0.0.1:9"
PHASES = ("1 · Prune", "2 · Boundaries", "3 · Summarise", "4 · Assemble", "5 · Cleanup", "6 · Fit")


def beacon(where: str) -> str:
    return f"{FOREIGN}/{where}.png"


def hostile_conversation(rounds: int = 6) -> list[dict[str, Any]]:
    """Markdown images, links, HTML images and LaTeX in the title, prose, tool names, call ids,
    arguments and results: each URL names where it came from."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"Agent. ![s]({beacon('system')}) [l]({FOREIGN}/l)"},
        {
            "role": "user",
            "content": f"Fix ![p]({beacon('title')}) and [docs]({FOREIGN}/docs) $x^2$ "
            f'<img src="{beacon("title-html")}">',
        },
    ]
    for turn in range(rounds):
        call_id = f"call_{turn}_![c]({beacon(f'call-id-{turn}')})"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {turn}: ![a]({beacon(f'assistant-{turn}')}) "
                + "reading the files " * 40,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "fetch",
                            "arguments": json.dumps({"url": beacon(f"arguments-{turn}")}),
                        },
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": f"Error: ![e]({beacon(f'tool-{turn}')}) failed $y$\n" + "line\n" * 60,
            }
        )
        messages.append(
            {"role": "user", "content": f"Keep ![u]({beacon(f'user-{turn}')}) [x]({FOREIGN}/x)"}
        )
    messages.append({"role": "user", "content": f"Finally ![f]({beacon('latest')}) $z$ now."})
    return messages


class Requests:
    """Every request the page makes, split into the app's own origin and the rest."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.foreign: list[str] = []
        self.own = 0

    def __call__(self, request: Request) -> None:
        url = request.url
        scheme = urlsplit(url).scheme
        if scheme in ("data", "blob"):
            return
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" == self.origin or (
            scheme in ("ws", "wss") and f"http://{parts.netloc}" == self.origin
        ):
            self.own += 1
        else:
            self.foreign.append(url)


def _button(page: Page, label: str) -> Locator:
    return page.locator("[data-testid='stButton'] button").filter(has_text=label)


def _no_exception(page: Page) -> None:
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


def _open_message(page: Page, index: int) -> None:
    box = page.get_by_label("Open message #")
    box.fill(str(index))
    box.press("Enter")
    expect(page.get_by_text(f"#{index} · ", exact=False).first).to_be_visible()
    wait_idle(page)


@dataclass
class Seen:
    """What the browser did while showing the conversation."""

    foreign: list[str]
    own: int
    images: list[list[str]]  # [src, is it in the loader's expander label ("label"/"")]
    links: list[list[str]]  # the same for links


@pytest.fixture(scope="module")
def seen(
    chromium: Browser, app_server: AppServer, tmp_path_factory: pytest.TempPathFactory
) -> Seen:
    context = chromium.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        return _show_everything(page, app_server, tmp_path_factory.mktemp("beacons"))
    finally:
        context.close()


def _show_everything(page: Page, app_server: AppServer, tmp_path: Path) -> Seen:
    requests = Requests(app_server.url)
    page.on("request", requests)
    upload = tmp_path / "beacons.json"
    conversation = hostile_conversation()
    upload.write_text(json.dumps(conversation), encoding="utf-8")

    open_app(page, f"{app_server.url}/?p_context_length=8000")  # so the middle is summarised
    page.get_by_role("tab", name="Upload").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(upload)
    count = f"{len(conversation)} messages"
    expect(page.get_by_text(count, exact=False).first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    _no_exception(page)
    # The title is on the page as text: its Markdown read as plain words (issue 33: a title is
    # never Markdown), its HTML as characters (an escaped tag, not an <img>).
    header = page.get_by_text(count, exact=False).first
    expect(header).to_contain_text("Fix p and docs")
    expect(header).to_contain_text(f'<img src="{beacon("title-html")}">')

    for index in (1, 2, 3, len(conversation) - 1):  # the title, a tool call, its result, the last
        _open_message(page, index)
    _no_exception(page)

    _button(page, "Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    for label in PHASES:
        page.locator("[data-testid='stButtonGroup'] button").filter(has_text=label).click()
        wait_idle(page)
        _no_exception(page)
    page.wait_for_timeout(1_000)  # images load asynchronously after the DOM settles
    screenshot(page, "no-foreign-requests")

    main = page.locator("[data-testid='stApp']")
    images = main.locator(f"img[src^='{FOREIGN}']").evaluate_all(
        "els => els.map(e => [e.src, e.closest('summary')?.innerText?.includes('Loaded: ')"
        " ? 'label' : ''])"
    )
    links = main.locator(f"a[href^='{FOREIGN}']").evaluate_all(
        "els => els.map(e => [e.href, e.closest('summary')?.innerText?.includes('Loaded: ')"
        " ? 'label' : ''])"
    )
    return Seen(requests.foreign, requests.own, images, links)


# compaction/ui/loader.py labels its expander "Loaded: <title> — load another" with the raw
# title, and an expander label renders Markdown images: that one fetches the title's image.
LOADER_LABEL_BEACONS = {beacon("title")}


def test_nothing_but_the_loader_label_requests_another_origin(seen: Seen) -> None:
    assert seen.own > 0  # the listener saw the app's own traffic
    assert [url for url in seen.foreign if url not in LOADER_LABEL_BEACONS] == []
    assert [image for image in seen.images if image[1] != "label"] == []
    assert [link for link in seen.links if link[1] != "label"] == [], "a link is clickable"


def test_no_request_leaves_the_app_origin(seen: Seen) -> None:
    assert seen.foreign == [], f"requests to other origins: {seen.foreign}"
    assert seen.images == [], f"images from the conversation in the page: {seen.images}"
    assert seen.links == [], f"links from the conversation in the page: {seen.links}"
