"""Helpers for the real-browser tests and bench_browser.py: start the app, launch Chromium, shoot.

AppTest runs the page scripts in-process and never renders anything, so it cannot see what a user
sees: escaping in the DOM, layout, charts, the time to first render. These fixtures start the app
exactly as a user does (a subprocess on a free loopback port, its history in a temporary file so
runs never touch the user's database) and drive Debian's /usr/bin/chromium through Playwright's
sync API. `playwright install` is never used: it downloads a browser, which CI cannot do.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
# Flags from NOTES.md: no sandbox (CI runs as root), no GPU, and nothing that phones home, so the
# browser works with no network at all.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
HEALTH_TIMEOUT_S = 60.0
IDLE_SELECTOR = "[data-testid='stApp'][data-test-script-state='notRunning']"
VIEWPORT = {"width": 1400, "height": 1000}
MAX_SCREENSHOT_HEIGHT = 16_000


@dataclass(frozen=True)
class AppServer:
    """A running `streamlit run app.py`: its base URL and where its history and logs go."""

    url: str
    db_path: Path
    log_path: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return bool(response.read().decode().strip() == "ok")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def start_app(
    workdir: Path,
    env_extra: dict[str, str] | None = None,
    script: str = "app.py",
    cwd: Path = ROOT,
) -> tuple[subprocess.Popen[bytes], AppServer]:
    """Start the app on a free port and wait for its health check; fail with its log if it dies.

    `script` is another Streamlit script to serve instead (bench_browser.py's baseline pages);
    `cwd` is where Streamlit reads its `.streamlit/config.toml` from (bench_browser.py serves an
    older checkout with its own)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    db_path = workdir / "history.db"
    log_path = workdir / "streamlit.log"
    env = {**os.environ, "COMPACTION_LAB_DB": str(db_path), **(env_extra or {})}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    # The log goes to a file, not a pipe: a pipe nobody reads fills up and blocks the server.
    log = log_path.open("wb")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"streamlit exited with code {process.returncode} before it was healthy:\n"
                + log_path.read_text(errors="replace")
            )
        if _healthy(url):
            return process, AppServer(url=url, db_path=db_path, log_path=log_path)
        time.sleep(0.25)
    stop_app(process)
    raise RuntimeError(
        f"streamlit was not healthy at {url}/_stcore/health within {HEALTH_TIMEOUT_S:.0f} s:\n"
        + log_path.read_text(errors="replace")
    )


def stop_app(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def require_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium); "
            "`playwright install` is not used"
        )


def launch_chromium(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def wait_idle(page: Page, timeout_ms: float = 60_000) -> None:
    """Wait until the app has finished its script run (the page shows the final state)."""
    page.wait_for_selector(IDLE_SELECTOR, timeout=timeout_ms)


def open_app(page: Page, url: str, timeout_ms: float = 60_000) -> None:
    page.goto(url)
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout_ms)
    wait_idle(page, timeout_ms)


def screenshot(page: Page, name: str) -> Path:
    """A full-page PNG in artifacts/screenshots/, which CI keeps in its log.

    Streamlit scrolls inside its main container, not the document, so Playwright's full_page
    alone captures one viewport: the viewport is grown to the content's height for the shot.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        """() => Math.max(...['[data-testid="stMain"]', '[data-testid="stAppViewContainer"]',
        '[data-testid="stSidebarContent"]'].map(s => document.querySelector(s)?.scrollHeight ?? 0),
        document.documentElement.scrollHeight)"""
    )
    width = VIEWPORT["width"]
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, MAX_SCREENSHOT_HEIGHT)})
    page.wait_for_timeout(500)  # let charts re-lay out at the new size
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    return path


def choose(page: Page, label: str, option: str, attempts: int = 4, exact: bool = True) -> None:
    """Pick `option` in the selectbox `label`. A rerun that lands while the list is open (the
    history save after Run all finishing) closes it, so the list is opened again until the
    option shows."""
    for _ in range(attempts):
        wait_idle(page, 60_000)
        page.get_by_label(label, exact=True).click()
        item = page.get_by_role("option", name=option, exact=exact)
        try:
            item.wait_for(state="visible", timeout=5_000)
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")  # a list left open would swallow the next click
            continue
        item.click()
        return
    raise AssertionError(f"the option {option!r} of {label!r} never showed")
