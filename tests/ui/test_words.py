"""Wording shared by the pages: counts in English, download names a file system likes."""

from __future__ import annotations

from compaction.ui.inspect_view import file_stem
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
