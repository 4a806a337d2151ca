"""Shared helpers for the AppTest suites: open the app's pages and read what they show.

The suites open a page file (app_pages/inspect.py) rather than app.py, so each test drives one
page with its widgets. A page draws the shared frame itself when app.py did not
(compaction/ui/frame.py), so a page file is a complete app; the browser tests run app.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.samples import get_sample, load_sample
from compaction.result import CompactionResult
from compaction.summary import SECTION_NAMES

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
INSPECT = ROOT / "app_pages" / "inspect.py"
LEARN = ROOT / "app_pages" / "learn.py"
TIMEOUT = 90


def open_app(page: Path = INSPECT, **query: str) -> AppTest:
    """The page with `query` as its URL parameters, run once."""
    at = AppTest.from_file(str(page), default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    """label -> value of every metric on the page (a later one with the same label wins)."""
    return {metric.label: str(metric.value) for metric in at.metric}


def section_headers(at: AppTest) -> list[str]:
    """The 13 section cards' headers, in page order."""
    found = []
    for element in at.markdown:
        for number, name in enumerate(SECTION_NAMES, 1):
            if str(element.value).startswith(f"**{number}. {name}**"):
                found.append(name)
    return found


def library_result(sample_id: str, **config: Any) -> CompactionResult:
    """What the library computes for a sample with the app's defaults (forced, extractive)."""
    conversation = load_sample(sample_id)
    return Compactor(CompactionConfig(**config)).compress(conversation.messages, force=True)


def suggested_result(sample_id: str) -> CompactionResult:
    """What the library computes for a sample with its suggested settings, as the app opens it
    (from the picker or a `?sample=` link alike)."""
    settings = dict(get_sample(sample_id).settings)
    focus = settings.pop("focus", None)
    conversation = load_sample(sample_id)
    return Compactor(CompactionConfig(**settings)).compress(
        conversation.messages, force=True, focus=focus
    )


def dataframe_with(at: AppTest, column: str) -> Any:
    """The (pandas) value of the first dataframe that has `column`."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no dataframe with a {column!r} column")


def shown_texts(at: AppTest) -> list[str]:
    """Message text as the page shows it: prose through st.text, tool output through st.code
    (both plain text: never markdown, never HTML)."""
    return [str(element.value) for element in [*at.text, *at.code]]
