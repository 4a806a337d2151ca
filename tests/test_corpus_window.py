"""Issue 21 over the real corpus: replay every session of every corpus file with automatic
compaction at 8K, 16K and 32K windows; no model call after a compaction that ran is over the
window (a provider would reject it), unless that compaction says the system prompt and the latest
request alone exceed the window.

Files are imported with the project's own importers; one that does not import yet (importers are
still being finished) is skipped with the importer's reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_paths import corpus_files as all_corpus_files
from corpus_paths import corpus_path

from compaction import CompactionConfig
from compaction.errors import FormatError
from compaction.formats import load_conversations
from compaction.lab.timeline import simulate

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FILES = [p.name for p in all_corpus_files()]
WINDOWS = (8_000, 16_000, 32_000)


@pytest.mark.skipif(not FILES, reason=f"the shared corpus is not at {CORPUS} (a fresh user clone)")
@pytest.mark.parametrize("name", FILES or ["(no corpus)"])
def test_no_turn_after_a_compaction_is_over_the_window(name: str) -> None:
    try:
        conversations = load_conversations(corpus_path(name))
    except FormatError as exc:
        pytest.skip(f"{name} does not import yet: {exc}")
    for number, conversation in enumerate(conversations):
        for window in WINDOWS:
            timeline = simulate(conversation, CompactionConfig(context_length=window))
            events = {event.number: event for event in timeline.compactions}
            over = {step.index for step in timeline.turns_over_window()}
            latest = None
            for step in timeline.steps:
                if step.event in events:
                    latest = events[step.event]
                if step.index in over:
                    assert latest is not None and latest.request_exceeds_window, (
                        f"{name} conversation {number} at {window:,}: step {step.index} is "
                        f"{step.tokens:,} tokens after compaction {latest and latest.number}"
                    )
            for event in timeline.compactions:
                assert not event.over_window or event.request_exceeds_window, (
                    f"{name} conversation {number} at {window:,}: event {event.number} left "
                    f"{event.tokens_after:,} tokens"
                )
