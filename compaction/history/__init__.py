"""Run history: every compaction run kept in SQLite, browsable, searchable and comparable.

Users tune parameters by trying many; the history lets them come back to a run, compare two and
see which settings worked best on which session. The store is a plain SQLite file (readable by
`sqlite-utils` and Datasette) at `$COMPACTION_LAB_DB`, else in the platform's user data
directory; its schema evolves only through the ordered migrations in `schema.py`.

    from compaction.history import History
    with History() as history:
        run_id = history.record(conversation, result, label="tail 0.3")
        history.compare(run_id, other_id).changed_sections
"""

from __future__ import annotations

from compaction.errors import HistoryError
from compaction.history.compare import Comparison
from compaction.history.connection import ENV_VAR, default_path
from compaction.history.records import canonical_json, session_id
from compaction.history.rows import RunRow, SessionRow
from compaction.history.schema import KNOWN_MIGRATIONS, MIGRATIONS, SCHEMA_VERSION
from compaction.history.scrub import is_secret_name, scrub
from compaction.history.store import BUNDLE_KIND, BUNDLE_VERSION, History
from compaction.history.sweeps import SweepRow

__all__ = [
    "BUNDLE_KIND",
    "BUNDLE_VERSION",
    "ENV_VAR",
    "KNOWN_MIGRATIONS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Comparison",
    "History",
    "HistoryError",
    "RunRow",
    "SessionRow",
    "SweepRow",
    "canonical_json",
    "default_path",
    "is_secret_name",
    "scrub",
    "session_id",
]
