"""The history database's schema, as an ordered list of named migrations.

Why migrations and not `CREATE TABLE IF NOT EXISTS`: a history file outlives the code that wrote
it, so every schema change is a new migration appended here, never an edit of an old one; each
open applies whatever is pending. The DDL is written out by hand (rather than inferred from rows)
so that the schema a user sees in `sqlite-utils tables --schema` or Datasette is the documented
one. Applied migrations are recorded by sqlite-utils in `_sqlite_migrations` under the set name
below; `PRAGMA user_version` mirrors their count for tools that only read the header.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database, Migrations

#: The name under which sqlite-utils records our applied migrations.
MIGRATION_SET = "compaction_history"


def m001_sessions_and_runs(db: Database) -> None:
    """A conversation (content-addressed) and one row per compaction run of it."""
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,            -- sha256 of the canonical JSON of the messages
            title TEXT,
            format TEXT,                    -- the source format the conversation came from
            message_count INTEGER NOT NULL,
            tokens INTEGER,
            messages TEXT NOT NULL,         -- JSON list of OpenAI-format messages
            first_seen TEXT NOT NULL,       -- UTC ISO 8601
            last_seen TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            created_at TEXT NOT NULL,       -- UTC ISO 8601
            config TEXT NOT NULL,           -- JSON: the full CompactionConfig
            summarizer TEXT NOT NULL,       -- summariser kind; never a key
            summarizer_info TEXT,           -- JSON: model, endpoint... with secrets stripped
            model TEXT,
            focus TEXT,
            tokens_before INTEGER NOT NULL,
            tokens_after INTEGER NOT NULL,
            savings_pct REAL NOT NULL,
            messages_before INTEGER NOT NULL,
            messages_after INTEGER NOT NULL,
            tail_budget_tokens INTEGER,
            summary_budget_tokens INTEGER,
            skipped INTEGER NOT NULL DEFAULT 0,
            skip_reason TEXT,
            fallback_used TEXT,             -- NULL, 'static' or 'extractive'
            fallback_reason TEXT,
            phase_durations TEXT NOT NULL,  -- JSON: {phase name: seconds}
            duration_s REAL NOT NULL,
            llm_prompt_tokens INTEGER,
            llm_completion_tokens INTEGER,
            llm_cost REAL,
            messages TEXT NOT NULL,         -- JSON: the compacted messages
            report TEXT NOT NULL,           -- JSON: CompactionResult.to_dict() minus `messages`
            label TEXT,
            note TEXT
        )
        """
    )


def m002_summaries_fts(db: Database) -> None:
    """The 13 summary sections of each run, one row each, full-text searchable."""
    db.execute(
        """
        CREATE TABLE summaries (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,      -- 0..12, the order of SECTION_NAMES
            section TEXT NOT NULL,
            body TEXT NOT NULL,
            UNIQUE (run_id, position)
        )
        """
    )
    # Triggers keep the external-content FTS index in step with inserts, updates and deletes.
    db.table("summaries").enable_fts(["section", "body"], create_triggers=True)


def m003_run_indexes(db: Database) -> None:
    """The History page filters runs by session and lists them newest first."""
    db.execute("CREATE INDEX idx_runs_session_id ON runs (session_id, id)")
    db.execute("CREATE INDEX idx_runs_created_at ON runs (created_at)")
    db.execute("CREATE INDEX idx_runs_label ON runs (label)")


def m004_sweeps(db: Database) -> None:
    """Parameter sweeps (compaction/lab/sweep/), kept so the Sweep page can reopen them."""
    db.execute(
        """
        CREATE TABLE sweeps (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,       -- UTC ISO 8601
            label TEXT,
            grid TEXT NOT NULL,             -- JSON: {field: [values]}, in the order swept
            session_ids TEXT NOT NULL,      -- JSON: [sessions.id], one per swept conversation
            base_config TEXT NOT NULL,      -- JSON: the CompactionConfig the grid varies
            summarizer TEXT NOT NULL,       -- summariser kind; never a key
            point_count INTEGER NOT NULL,
            points TEXT NOT NULL,           -- JSON: [SweepPoint.to_dict()]
            details TEXT NOT NULL,          -- JSON: conversations swept, duration, jobs, target
            recommendation TEXT             -- JSON: the recommended point and its snippets
        )
        """
    )
    db.execute("CREATE INDEX idx_sweeps_created_at ON sweeps (created_at)")


def m005_full_text(db: Database) -> None:
    """Labels and titles are bounded for display (records.LABEL_CHARS, records.TITLE_CHARS):
    `label` and `title` hold what is shown, cut with "…"; the full text, when it was cut, is
    kept beside them. Long texts already stored are cut the same way."""
    db.execute("ALTER TABLE runs ADD COLUMN label_full TEXT")  # NULL unless label was cut
    db.execute("ALTER TABLE sessions ADD COLUMN title_full TEXT")  # NULL unless title was cut
    for table, column, limit in (("runs", "label", 200), ("sessions", "title", 300)):
        db.execute(
            f"UPDATE {table} SET {column}_full = {column}, "
            f"{column} = substr({column}, 1, {limit - 1}) || '…' "
            f"WHERE length({column}) > {limit}"
        )


def m006_dedupe_and_message_store(db: Database) -> None:
    """An identical run is stored once (`fingerprint`), and each phase's messages are stored
    once across every run (content-addressed), not again in every run's report: a
    5,000-message session's phases repeat almost every message six times per run."""
    # sha256 of the session, config, focus, summariser and compacted messages; NULL for runs
    # stored before this migration (they are never matched, so never deduplicated).
    db.execute("ALTER TABLE runs ADD COLUMN fingerprint TEXT")
    db.execute("CREATE INDEX idx_runs_fingerprint ON runs (fingerprint)")
    db.execute(
        """
        CREATE TABLE messages_store (
            id TEXT PRIMARY KEY,            -- sha256 of the message's canonical JSON
            message TEXT NOT NULL           -- the message (redacted), JSON
        )
        """
    )


#: The migrations, in the order they apply. Append new ones; never edit or reorder these.
MIGRATIONS: tuple[Callable[[Database], None], ...] = (
    m001_sessions_and_runs,
    m002_summaries_fts,
    m003_run_indexes,
    m004_sweeps,
    m005_full_text,
    m006_dedupe_and_message_store,
)

#: Every migration name this code knows, in order (its length is the schema version).
KNOWN_MIGRATIONS: tuple[str, ...] = tuple(fn.__name__ for fn in MIGRATIONS)
SCHEMA_VERSION = len(KNOWN_MIGRATIONS)


def build_migrations(upto: int | None = None) -> Migrations:
    """The sqlite-utils migration set (the first `upto` migrations only, for upgrade tests)."""
    migrations = Migrations(MIGRATION_SET)
    for fn in MIGRATIONS[:upto]:
        migrations(name=fn.__name__)(fn)
    return migrations
