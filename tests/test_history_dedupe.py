"""A run saved twice is stored once, and each message of the phases is stored once across runs.

Real SQLite, a real compaction run of a sample session."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from history_factory import conversation, make_result

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.history import History
from compaction.history.scrub import MessageRedactor
from compaction.lab.samples import load_sample


def _size(path: Path) -> int:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def test_an_identical_run_is_stored_once_when_deduplicating(_history_db: Path) -> None:
    messages = conversation()
    result = make_result(messages)
    with History() as history:
        first = history.record(messages, result, dedupe=True)
        again = history.record(messages, result, dedupe=True)
        assert again == first
        assert len(history.runs()) == 1
        # Another config of the same conversation is another run; without dedupe, a copy.
        other = make_result(messages, config=CompactionConfig(tail_token_ratio=0.25))
        assert history.record(messages, other, dedupe=True) != first
        assert history.record(messages, result) != first
        assert len(history.runs()) == 3
        assert len(history.sessions()) == 1  # the conversation itself is stored once


def test_phase_messages_are_stored_once_and_read_back_as_recorded(_history_db: Path) -> None:
    messages = load_sample("fix-failing-tests").messages  # 125 messages, 66K tokens
    config = CompactionConfig(context_length=45_000)
    result = Compactor(config).compress(messages, force=True)
    expected = result.to_dict()
    with History() as history:
        first = history.record(messages, result)
    one_run = _size(_history_db)
    with History() as history:
        second = history.record(messages, result, label="a copy")  # no dedupe: a second run
        stored = history.run(second)
    two_runs = _size(_history_db)
    assert stored.report is not None
    for phase, original in zip(stored.report["phases"], expected["phases"], strict=True):
        # As recorded: redacted (the sample holds a SECRET_KEY), otherwise the same messages.
        assert phase["messages"] == MessageRedactor()(original["messages"]), phase["name"]
        assert "message_ids" not in phase
    # The second run re-uses every stored message: it costs a fraction of the first.
    assert two_runs - one_run < one_run / 3, (one_run, two_runs)
    with sqlite3.connect(_history_db) as db:
        (distinct,) = db.execute("SELECT COUNT(*) FROM messages_store").fetchone()
    phase_messages = sum(len(p["messages"]) for p in expected["phases"])
    assert distinct < phase_messages / 2, (distinct, phase_messages)

    with History() as history:
        history.delete(first)
        assert history.run(second).report["phases"][0]["messages"]  # still resolvable
        history.delete(second)
    with sqlite3.connect(_history_db) as db:
        (left,) = db.execute("SELECT COUNT(*) FROM messages_store").fetchone()
    assert left == 0, "a deleted run's phase messages stay in the file"
