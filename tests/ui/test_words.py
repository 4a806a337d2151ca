"""Wording shared by the pages: counts in English, download names a file system likes."""

from __future__ import annotations

from compaction.ui.final_view import file_stem
from compaction.ui.state import make_loaded
from compaction.ui.words import plural

MESSAGES = [{"role": "user", "content": "hi"}]


def test_plural_counts_read_as_english() -> None:
    assert plural(1, "message") == "1 message"
    assert plural(0, "message") == "0 messages"
    assert plural(4810, "message") == "4,810 messages"
    assert plural(2, "summary", "summaries") == "2 summaries"


def test_a_download_is_named_after_the_sample_or_a_slug_of_the_title() -> None:
    sample = make_loaded(MESSAGES, "An interrupted run", "openai", "sample:orphans")
    assert file_stem(sample) == "orphans"
    upload = make_loaded(
        MESSAGES, "An interrupted run leaves orphaned tool calls / <b>", "openai", "upload:x.json"
    )
    assert file_stem(upload) == "an-interrupted-run-leaves-orphaned-tool"
    assert file_stem(make_loaded(MESSAGES, "???", "openai", "paste")) == "conversation"


def test_timestamps_read_as_a_person_says_them() -> None:
    from datetime import UTC, datetime

    from compaction.ui.words import when

    now = datetime(2026, 12, 3, 17, 30, tzinfo=UTC)
    assert when("2026-12-03T17:29:40.000+00:00", now) == "just now"
    assert when("2026-12-03T17:18:00.000+00:00", now) == "12 min ago"
    assert when("2026-12-03T09:05:00+00:00", now) == "today 09:05"
    assert when("2026-12-02T23:59:00+00:00", now) == "yesterday 23:59"
    assert when("2026-11-20T08:00:00+00:00", now) == "20 Nov 08:00"
    assert when("2025-01-01T00:00:00", now) == "1 Jan 2025 00:00"  # naive: stored as UTC
    assert when("not a time", now) == "not a time"
    assert when(None, now) == ""
