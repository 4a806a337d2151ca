"""The app in a real browser: load a sample, run all phases, read the summary, and no XSS.

AppTest checks what the scripts emit; only a browser shows what a user gets: the rendered DOM
(is untrusted message text escaped?), the layout (screenshots into artifacts/screenshots/, which
CI keeps) and the front end's own errors. Run with `.venv/bin/pytest -m e2e tests/e2e`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import (
    SCREENSHOTS,
    AppServer,
    open_app,
    screenshot,
    start_app,
    stop_app,
    wait_idle,
)
from playwright.sync_api import Dialog, Locator, Page, expect

from compaction.summary import SECTION_NAMES

pytestmark = pytest.mark.e2e

SAMPLE = "fix-failing-tests"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
RENDER_TIMEOUT_MS = 90_000  # CI machines are slow and shared; a first run imports the library
DOCS_WIDTH = 1280  # the README's screenshots: narrow enough to stay well under 600 KB each


def _no_exception(page: Page) -> None:
    """A Python exception in a page shows as an stException box: fail with its text."""
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.all_inner_texts()


def _stepper_button(page: Page, label: str) -> Locator:
    return page.locator("[data-testid='stButton'] button").filter(has_text=label)


def _show_phase(page: Page, label: str) -> None:
    """Pick a revealed phase in the "Show phase" segmented control (not the stepper button)."""
    page.locator("[data-testid='stButtonGroup'] button").filter(has_text=label).click()


def _run_all(page: Page) -> None:
    _stepper_button(page, "Run all").click()
    expect(page.get_by_role("heading", name="Before → after")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)


def _changes_table(page: Page) -> Locator:
    """The phase's message-level diff: the table right after its "What changed" line."""
    heading = page.locator("[data-testid='stElementContainer']").filter(
        has=page.get_by_text("What changed", exact=True)
    )
    return heading.locator("xpath=following-sibling::*[1]").locator("[data-testid='stDataFrame']")


def docs_screenshot(page: Page, name: str, top: Locator, bottom: Locator | None = None) -> Path:
    """A PNG of the main area (no sidebar) from `top` to the end of `bottom` (else of the page),
    for docs/screenshots; the viewport is grown to the content, as in `screenshot`."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    main = page.locator("[data-testid='stMainBlockContainer']")
    height = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight ?? 1000"
    )
    page.set_viewport_size({"width": DOCS_WIDTH, "height": int(height) + 40})
    page.wait_for_timeout(800)  # let charts re-lay out at the new size
    area, first, last = main.bounding_box(), top.bounding_box(), (bottom or main).bounding_box()
    assert area and first and last, f"{name}: an element to frame is not on screen"
    y = max(first["y"] - 16, 0)
    clip = {
        "x": area["x"],
        "y": y,
        "width": area["width"],
        "height": last["y"] + last["height"] + 16 - y,
    }
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), clip=clip, full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    return path


def _section_cards(page: Page) -> list[Locator]:
    return [page.locator(f".st-key-section_card_{n}") for n in range(1, len(SECTION_NAMES) + 1)]


def test_sample_run_all_phases_shows_the_summary(page: Page, app_server: AppServer) -> None:
    open_app(page, f"{app_server.url}/?sample={SAMPLE}")
    expect(page.get_by_role("heading", name="Inspect")).to_be_visible()
    expect(page.get_by_text("Coding agent fixes a failing pytest suite").first).to_be_visible()
    expect(page.locator("[data-testid='stVegaLiteChart']").nth(1)).to_be_visible()
    _no_exception(page)
    screenshot(page, "inspect-loaded")

    # Clicking a bar of the per-message chart opens that message.
    bar = _hover_bar(page, "#5")
    page.mouse.click(*bar)
    expect(page.get_by_label("Open message #")).to_have_value("5", timeout=RENDER_TIMEOUT_MS)
    expect(page.get_by_text("#5 · ", exact=False).first).to_be_visible()
    wait_idle(page)

    _run_all(page)
    # Run all lands on the result (issue 33): before → after and the 13 section cards, in view
    # without another click; the phases stay in the picker beside it.
    for number, (card, name) in enumerate(zip(_section_cards(page), SECTION_NAMES, strict=True), 1):
        expect(card).to_be_attached()
        expect(card).to_contain_text(f"{number}. {name}")
    _no_exception(page)
    _show_phase(page, "6 · Fit")
    expect(page.get_by_role("heading", name="Fit · The result fits the window")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    _show_phase(page, "5 · Cleanup")
    expect(page.get_by_role("heading", name="Phase 5 · Cleanup and anti-thrash")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    savings = page.locator("[data-testid='stMetric']").filter(has_text="Savings").first
    expect(savings).to_contain_text("%")
    _no_exception(page)
    screenshot(page, "inspect-phase5-final")

    _show_phase(page, "3 · Summarise")
    expect(page.get_by_role("heading", name="Phase 3 · Structured summary")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    expect(page.get_by_text("The 13 sections")).to_be_visible()
    for number, (card, name) in enumerate(zip(_section_cards(page), SECTION_NAMES, strict=True), 1):
        expect(card).to_be_visible()
        expect(card).to_contain_text(f"{number}. {name}")
    filled = [card for card in _section_cards(page) if "None." not in card.inner_text()]
    assert filled, "every one of the 13 summary sections is empty for the sample"
    expect(_changes_table(page)).to_be_visible()
    _no_exception(page)
    screenshot(page, "inspect-phase3-summary")
    docs_screenshot(
        page,
        "docs-inspect",
        page.get_by_role("heading", name="Phase 3 · Structured summary"),
        _changes_table(page),
    )

    _show_phase(page, "1 · Prune")
    expect(page.get_by_role("heading", name="Phase 1 · Prune old tool outputs")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    expect(page.get_by_text("One-line summaries")).to_be_visible()
    expect(_changes_table(page)).to_be_visible()
    # The text diff of the first changed message, shown as a unified diff.
    expect(page.locator("[data-testid='stCode']").filter(has_text="@@").first).to_be_visible()
    _no_exception(page)
    screenshot(page, "inspect-phase1-diff")


def test_learn_page(page: Page, app_server: AppServer) -> None:
    open_app(page, app_server.url)
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Learn").click()
    expect(page.get_by_role("heading", name="Learn: how compaction works")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    expect(page.get_by_role("heading", name="The worked example")).to_be_visible()
    expect(page.get_by_role("heading", name="Why each rule exists")).to_be_visible()
    # The seed's example at the default settings: trigger 64,000 and the 8,000-token clamp.
    expect(page.locator("[data-testid='stMetric']").filter(has_text="Trigger")).to_contain_text(
        "64,000"
    )
    expect(
        page.locator("[data-testid='stMetric']").filter(has_text="Summary budget")
    ).to_contain_text("8,000")
    _no_exception(page)
    screenshot(page, "learn")


def xss_conversation() -> list[dict[str, Any]]:
    """A session whose user quotes HTML, long enough that the quote is summarised into a card."""
    notes = "Notes on the renderer and its escaping rules. " * 500
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix {IMG} in the comment renderer."},  # the title
        {"role": "assistant", "content": "Reading the template first."},
        {
            "role": "user",
            "content": f"The comment field must show {SCRIPT} and {IMG} as text, never run them.",
        },
    ]
    for i in range(6):
        call_id = f"call_{i}"
        arguments = json.dumps({"path": f"app/templates_{i}.py"})
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": arguments},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": f"# file {i} renders {IMG}\n" + "echo(comment)\n" * 700,
            },
            {"role": "assistant", "content": f"File {i} still echoes {SCRIPT} unescaped. {notes}"},
        ]
    messages.append({"role": "user", "content": "Now escape it everywhere."})
    return messages


def _tooltip_at(page: Page, x: float, y: float) -> str | None:
    page.mouse.move(x, y)
    page.wait_for_timeout(25)
    tip = page.locator("#vg-tooltip-element.visible")
    return tip.inner_text() if tip.count() else None


def _chart_row(page: Page) -> tuple[float, float, float]:
    """(left, right, y) of a line across the per-message chart's plot area."""
    chart = page.locator("[data-testid='stVegaLiteChart']").nth(1)
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None
    # Each message has an invisible full-height target, so any height inside the plot works.
    return box["x"], box["x"] + box["width"], box["y"] + 40


def _tooltips(page: Page, steps: int = 60) -> list[str]:
    """Sweep the mouse across the per-message chart: the tooltip texts it showed."""
    left, right, y = _chart_row(page)
    seen = []
    for step in range(steps):
        text = _tooltip_at(page, left + (right - left) * step / (steps - 1), y)
        if text:
            seen.append(text)
    return seen


def _hover_bar(page: Page, label: str) -> tuple[float, float]:
    """A point on the bar whose tooltip names message `label` (e.g. "#5"), walking from the left."""
    left, right, y = _chart_row(page)
    x = left
    while x < right:
        text = _tooltip_at(page, x, y)
        if text and label in [line.strip() for line in text.splitlines()]:
            return x, y
        x += 3
    raise AssertionError(f"no bar of the message chart shows {label} in its tooltip")


def _open_message(page: Page, index: int) -> None:
    box = page.get_by_label("Open message #")
    box.fill(str(index))
    box.press("Enter")
    expect(page.get_by_text(f"#{index} · ", exact=False).first).to_be_visible()
    wait_idle(page)


def test_message_html_is_shown_as_text(page: Page, app_server: AppServer, tmp_path: Path) -> None:
    dialogs: list[str] = []

    def record(dialog: Dialog) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", record)
    upload = tmp_path / "comments.json"
    upload.write_text(json.dumps(xss_conversation()), encoding="utf-8")
    open_app(page, app_server.url)
    page.get_by_role("tab", name="Upload").click()
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(upload)
    expect(page.get_by_text("23 messages", exact=False).first).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    _no_exception(page)
    # The first user message is the conversation's title, which the page shows in markdown.
    overview = page.get_by_text("23 messages", exact=False).first
    expect(overview).to_contain_text(f"Fix {IMG} in the comment renderer")

    _open_message(page, 3)
    detail = page.locator("[data-testid='stText']").filter(has_text=SCRIPT).first
    expect(detail).to_contain_text(f"must show {SCRIPT} and {IMG} as text")
    # The chart's tooltips show message previews: markup in them is text too.
    previews = _tooltips(page)
    assert any(IMG in text for text in previews), previews
    assert page.locator("#vg-tooltip-element img").count() == 0
    # The loader's expander label carries the title too (from the run after the upload's).
    loader = page.locator("[data-testid='stExpander'] summary").filter(has_text="Loaded: ")
    expect(loader).to_contain_text(f"Loaded: Fix {IMG} in the comment renderer")
    screenshot(page, "xss-message")

    _run_all(page)
    _show_phase(page, "3 · Summarise")
    expect(page.get_by_text("The 13 sections")).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    wait_idle(page)
    constraints = page.locator(".st-key-section_card_3")
    expect(constraints).to_contain_text(SECTION_NAMES[2])
    expect(constraints).to_contain_text(f"must show {SCRIPT} and {IMG} as text")
    _no_exception(page)
    screenshot(page, "xss-summary")

    assert page.locator("img[src='x']").count() == 0, "an <img src=x> from a message is in the DOM"
    scripts = page.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert not any("alert(1)" in (text or "") for text in scripts), scripts
    page.wait_for_timeout(500)  # an onerror handler fires asynchronously, after the load fails
    assert dialogs == [], f"a dialog fired: {dialogs}"


def test_timeline_page_replays_a_sample(page: Page, app_server: AppServer) -> None:
    # A 45,000-token window makes the 66,637-token sample compact three times: once by pruning
    # alone, then a first summary and its iterative update, so the drift view has two versions.
    open_app(page, f"{app_server.url}/timeline?sample={SAMPLE}&p_context_length=45000")
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible()
    expect(page.get_by_role("heading", name="Summary drift")).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page)
    events = page.locator("[data-testid='stMetric']").filter(has_text="Events").first
    expect(events).to_contain_text("3")
    expect(page.get_by_text("Summary version", exact=True)).to_be_visible()  # two summaries
    expect(page.locator("[data-testid='stPlotlyChart']").first).to_be_visible()
    _no_exception(page)
    screenshot(page, "timeline")
    # The iterative update dropped facts of the first summary: the drift lists them in the page's
    # last table (the section diffs below it are code blocks).
    expect(page.get_by_text("Facts that vanished", exact=False)).to_be_visible()
    vanished = page.locator("[data-testid='stDataFrame']").last
    docs_screenshot(page, "docs-timeline", page.get_by_role("heading", name="Timeline"), vanished)


def test_sweep_page_runs_a_two_by_two_sweep(page: Page, app_server: AppServer) -> None:
    open_app(page, f"{app_server.url}/sweep?sample={SAMPLE}")
    expect(page.locator("h1").filter(has_text="Sweep")).to_be_visible()
    # Default ranges are tail 0.1-0.4 and summary 0.1-0.3: steps spanning them leave 2 × 2.
    for label, step in (("tail_token_ratio step", "0.3"), ("summary_ratio step", "0.2")):
        box = page.get_by_label(label)
        box.fill(step)
        box.press("Enter")
        wait_idle(page)
    expect(page.get_by_text("4 point(s)", exact=False).first).to_be_visible()
    page.get_by_role("button", name="Run sweep").click()
    expect(page.locator("[data-testid='stPlotlyChart']").nth(2)).to_be_visible(
        timeout=RENDER_TIMEOUT_MS
    )
    wait_idle(page, RENDER_TIMEOUT_MS)
    # 2 heatmaps, the savings/recall frontier, recall against dollars (issue 36)
    expect(page.locator("[data-testid='stPlotlyChart']")).to_have_count(4)
    _no_exception(page)
    screenshot(page, "sweep")
    docs_screenshot(page, "docs-sweep", page.locator("h1").filter(has_text="Sweep"))


def test_a_shared_link_is_the_first_request_of_a_fresh_server(page: Page, tmp_path: Path) -> None:
    # A link someone shared, opened before anyone visited the root: the app's own menu, and every
    # setting in the link in force on the first run (not only the ones drawn before the config).
    process, server = start_app(tmp_path)
    try:
        link = f"/timeline?sample={SAMPLE}&p_context_length=45000&p_threshold_ratio=0.7"
        open_app(page, server.url + link)
        sidebar = page.locator("[data-testid='stSidebar']")
        expect(sidebar.get_by_role("link", name="Inspect")).to_be_visible()
        expect(sidebar.get_by_role("link", name="app", exact=True)).to_have_count(0)
        expect(sidebar).to_contain_text("compaction triggers at 31,500 tokens")
        expect(page.locator("[data-testid='stMain']")).to_contain_text("threshold 31,500")
        _no_exception(page)
    finally:
        stop_app(process)
