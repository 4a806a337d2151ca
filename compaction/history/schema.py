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


def m007_corpus_scans(db: Database) -> None:
    """Corpus scans (`compaction scan`, lab/corpus/): every file scanned with the size and mtime
    that make the next scan incremental, its conversations, the compactions their agents made,
    and each scan's aggregates. Plain columns, one fact each, so that SQL and Datasette can
    query them; keyed by path, so a rescan of a changed file replaces its rows."""
    db.execute(
        """
        CREATE TABLE scan_files (
            path TEXT PRIMARY KEY,          -- a file, or `<db>#<session id>` inside a database
            agent TEXT,                     -- the agent whose folder it was found in, if known
            project TEXT,
            size INTEGER NOT NULL,          -- bytes, as listed (0 for a database's session)
            mtime REAL NOT NULL,            -- seconds since the epoch, as listed
            status TEXT NOT NULL,           -- 'ok', 'not a session' or 'error'
            error TEXT,                     -- why it could not be read
            conversations INTEGER NOT NULL,
            warnings INTEGER NOT NULL,      -- the importer's warnings (a skipped broken line)
            duration_s REAL NOT NULL,
            scanned_at TEXT NOT NULL        -- UTC ISO 8601
        )
        """
    )
    db.execute(
        """
        CREATE TABLE scan_sessions (
            path TEXT NOT NULL REFERENCES scan_files(path) ON DELETE CASCADE,
            conversation INTEGER NOT NULL,  -- its index in the file
            agent TEXT NOT NULL,
            format TEXT NOT NULL,
            title TEXT,                     -- redacted, at most 200 characters
            model TEXT,
            project TEXT,
            messages INTEGER NOT NULL,
            tokens INTEGER NOT NULL,        -- our count of the imported messages
            calls INTEGER NOT NULL,         -- model calls whose usage the file records
            input_tokens INTEGER,           -- summed over the calls (NULL: none recorded)
            output_tokens INTEGER,
            cache_read_tokens INTEGER,
            cache_write_tokens INTEGER,
            peak_input_tokens INTEGER,      -- the largest prompt of one call
            recorded_cost_usd REAL,         -- what the file says its calls cost
            cost_usd REAL,                  -- that, or a price from the usage when one is known
            compaction_count INTEGER NOT NULL,
            auto_compactions INTEGER NOT NULL,
            manual_compactions INTEGER NOT NULL,
            PRIMARY KEY (path, conversation)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE scan_compactions (
            path TEXT NOT NULL,
            conversation INTEGER NOT NULL,
            number INTEGER NOT NULL,        -- 1 for the session's first compaction
            position INTEGER NOT NULL,      -- the message where the compacted context begins
            line INTEGER,                   -- where the file records it
            kind TEXT NOT NULL,             -- 'auto', 'manual' or 'unknown'
            trigger_tokens INTEGER,         -- the context when it fired
            trigger_source TEXT NOT NULL,   -- 'usage', 'recorded' or 'counted'
            tokens_before_recorded INTEGER, -- the agent's own figure (Claude Code's preTokens)
            tokens_after INTEGER,
            after_source TEXT,              -- 'usage' or 'counted'
            ratio REAL,                     -- tokens_after / trigger_tokens
            summary_tokens INTEGER,
            summary_readable INTEGER NOT NULL,
            facts_before INTEGER NOT NULL,  -- probe facts of what it compacted away
            kept_by_agent INTEGER,          -- NULL when the summary is encrypted
            forgotten INTEGER,
            forgotten_latest_request INTEGER,
            forgotten_constraints INTEGER,
            forgotten_files INTEGER,
            forgotten_errors INTEGER,
            forgotten_commands INTEGER,
            forgotten_identifiers INTEGER,
            pending_request_lost INTEGER,   -- 1: the user's latest request is not in its context
            window INTEGER,
            kept_by_ours INTEGER,           -- our pipeline at the same size (scan --ours)
            PRIMARY KEY (path, conversation, number),
            FOREIGN KEY (path, conversation) REFERENCES scan_sessions(path, conversation)
                ON DELETE CASCADE
        )
        """
    )
    db.execute(
        """
        CREATE TABLE scans (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,       -- UTC ISO 8601
            roots TEXT NOT NULL,            -- JSON: the paths given, or ["this machine"]
            files INTEGER NOT NULL,
            read INTEGER NOT NULL,          -- files read by this scan
            reused INTEGER NOT NULL,        -- files unchanged since a previous scan
            failed INTEGER NOT NULL,
            stopped INTEGER NOT NULL,       -- 1: interrupted; the files read so far are kept
            where_run TEXT NOT NULL,        -- this process, N local processes, Dask at ADDRESS
            duration_s REAL NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE scan_members (
            scan_id INTEGER NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
            path TEXT NOT NULL,             -- a file the scan covered (its selection)
            PRIMARY KEY (scan_id, path)
        )
        """
    )
    db.execute(
        """
        CREATE TABLE scan_aggregates (
            scan_id INTEGER NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
            agent TEXT NOT NULL,            -- an agent, or 'all'
            metric TEXT NOT NULL,           -- trigger_tokens, ratio, forgotten, ...
            n INTEGER NOT NULL,
            total REAL,
            mean REAL,
            median REAL,
            p10 REAL,
            p90 REAL,
            min REAL,
            max REAL,
            PRIMARY KEY (scan_id, agent, metric)
        )
        """
    )
    db.execute("CREATE INDEX idx_scan_compactions_kind ON scan_compactions (kind)")
    db.execute("CREATE INDEX idx_scan_sessions_agent ON scan_sessions (agent)")


#: The migrations, in the order they apply. Append new ones; never edit or reorder these.
MIGRATIONS: tuple[Callable[[Database], None], ...] = (
    m001_sessions_and_runs,
    m002_summaries_fts,
    m003_run_indexes,
    m004_sweeps,
    m005_full_text,
    m006_dedupe_and_message_store,
    m007_corpus_scans,
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
