"""A seeded run history for the History and Compare AppTests: real compactions, recorded.

The compactions are computed once per test process (they cost seconds); each test records them
into its own database (COMPACTION_LAB_DB, set by the autouse fixture in tests/conftest.py).
"""

from __future__ import annotations

from functools import cache

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.formats.conversation import Conversation
from compaction.history import History
from compaction.lab.samples import load_sample
from compaction.result import CompactionResult

#: (sample, tail_token_ratio, label) of each seeded run, in recording order.
SEEDED = (
    ("fix-failing-tests", 0.2, "tail 0.2"),
    ("fix-failing-tests", 0.3, None),
    ("orphans", 0.2, None),
)


@cache
def _computed() -> tuple[tuple[Conversation, CompactionResult, str | None], ...]:
    runs = []
    for sample_id, ratio, label in SEEDED:
        conversation = load_sample(sample_id)
        config = CompactionConfig(context_length=128_000, tail_token_ratio=ratio)
        result = Compactor(config).compress(conversation.messages, force=True)
        runs.append((conversation, result, label))
    return tuple(runs)


def seed() -> list[int]:
    """Record the seeded runs into this test's history; their ids in SEEDED order."""
    with History() as history:
        return [history.record(c, r, label=label) for c, r, label in _computed()]


def seeded_runs() -> tuple[tuple[Conversation, CompactionResult, str | None], ...]:
    """The seeded compactions (conversation, result, label), to record one of them again."""
    return _computed()
