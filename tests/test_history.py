"""The run history store: migrations, content addressing, concurrency, secrets, bundles, search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_factory import conversation, make_result
from sqlite_utils import Database

from compaction.errors import HistoryError
from compaction.formats.conversation import Conversation
from compaction.history import (
    KNOWN_MIGRATIONS,
    SCHEMA_VERSION,
    History,
    default_path,
    session_id,
)
from compaction.history.schema import MIGRATION_SET, build_migrations

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
# A key with no recognisable shape: only dropping key-named fields keeps it out of the file.
PLAIN_KEY = "localproxy-zq81-hunter2"


def test_default_path_follows_the_environment(_history_db: Path) -> None:
    assert default_path() == _history_db


def test_creates_the_file_and_parent_directories_in_wal_mode(_history_db: Path) -> None:
    assert not _history_db.parent.exists()
    with History() as history:
        assert history.path == _history_db
    assert _history_db.exists()
    db = Database(_history_db)
    assert db.journal_mode == "wal"
    assert {"sessions", "runs", "summaries", "summaries_fts"} <= set(db.table_names())
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_migrates_from_empty_and_reopens_without_reapplying(_history_db: Path) -> None:
    History().close()
    History().close()
    db = Database(_history_db)
    names = [r["name"] for r in db.query("SELECT name FROM _sqlite_migrations ORDER BY id")]
    assert names == list(KNOWN_MIGRATIONS)
    db.close()


@pytest.mark.parametrize("applied", range(1, SCHEMA_VERSION))
def test_migrates_from_each_earlier_version(_history_db: Path, applied: int) -> None:
    _history_db.parent.mkdir(parents=True)
    db = Database(_history_db)
    build_migrations(applied).apply(db)
    # A run written by the older schema must survive the upgrade.
    db.execute(
        "INSERT INTO sessions (id, title, format, message_count, tokens, messages, "
        "first_seen, last_seen) VALUES "
        "('s1', 'old', 'openai', 1, 10, '[]', '2025-01-01', '2025-01-01')"
    )
    db.execute(
        "INSERT INTO runs (session_id, created_at, config, summarizer, tokens_before, "
        "tokens_after, savings_pct, messages_before, messages_after, phase_durations, "
        "duration_s, messages, report, label) VALUES ('s1', '2025-01-01T00:00:00', '{}', "
        "'static', 10, 5, 50.0, 1, 1, '{}', 0.0, '[]', '{}', 'old run')"
    )
    db.close()
    with History() as history:
        (old,) = history.runs()
        assert old.label == "old run" and old.savings_pct == 50.0
        messages = conversation()
        new_id = history.record(messages, make_result(messages))
        assert [r.id for r in history.search("Stripe")] == [new_id]
        assert [r.id for r in history.runs()] == [new_id, old.id]


def test_newer_schema_is_refused_and_left_untouched(_history_db: Path) -> None:
    History().close()
    db = Database(_history_db)
    db["_sqlite_migrations"].insert(
        {"migration_set": MIGRATION_SET, "name": "m999_from_the_future", "applied_at": "x"}
    )
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    before = _history_db.read_bytes()
    with pytest.raises(HistoryError, match="newer version of compaction-lab") as caught:
        History()
    assert str(_history_db) in str(caught.value)
    assert "m999_from_the_future" in str(caught.value)
    assert _history_db.read_bytes() == before


def test_newer_user_version_is_refused(_history_db: Path) -> None:
    History().close()
    db = Database(_history_db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(HistoryError, match="newer version"):
        History()


def test_corrupt_file_names_its_path(_history_db: Path) -> None:
    _history_db.parent.mkdir(parents=True)
    _history_db.write_bytes(b"this is not a sqlite database, just text\n" * 200)
    with pytest.raises(HistoryError) as caught:
        History()
    assert str(_history_db) in str(caught.value)
    assert _history_db.read_bytes().startswith(b"this is not a sqlite database")


def test_unopenable_path_names_its_path(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "history.db"  # a parent that is a file cannot become a directory
    with pytest.raises(HistoryError) as caught:
        History(target)
    assert str(target) in str(caught.value)


def test_same_conversation_twice_is_one_session() -> None:
    messages = conversation()
    loaded = Conversation(messages=[dict(m) for m in messages], format="openai", title="Stripe")
    with History() as history:
        first = history.record(messages, make_result(messages))
        second = history.record(loaded, make_result(messages, "other words"))
        other = conversation("the login page")
        history.record(other, make_result(other))
        sessions = history.sessions()
        assert len(sessions) == 2
        shared = history.run(first).session_id
        assert history.run(second).session_id == shared == session_id(messages)
        row = history.session(shared)
        assert row.run_count == 2 and row.messages == messages and row.message_count == 9
        # The title the list-of-messages call derived is kept; the format fills in later.
        assert row.title == "Turn 0: please fix the Stripe webhook." and row.format == "openai"
        assert [r.id for r in history.runs(session=shared[:10])] == [second, first]


def test_session_id_is_sha256_of_canonical_json() -> None:
    import hashlib

    messages = [{"role": "user", "content": "héllo"}]
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert session_id(messages) == hashlib.sha256(canonical.encode()).hexdigest()


def test_run_row_holds_the_figures_and_the_full_report() -> None:
    messages = conversation()
    result = make_result(messages, fallback_used="extractive")
    with History() as history:
        run_id = history.record(messages, result, label="tail 0.3", note="first try")
        run = history.run(run_id)
    assert (run.tokens_before, run.tokens_after, run.savings_pct) == (1000, 400, 60.0)
    assert run.label == "tail 0.3" and run.note == "first try"
    assert run.summarizer == "llm" and run.focus == "webhooks" and run.model == "gpt-4o"
    assert run.fallback_used == "extractive"
    assert run.llm_prompt_tokens == 1200 and run.llm_cost == pytest.approx(0.0042)
    assert run.phase_durations["cleanup"] == pytest.approx(0.05)
    assert run.duration_s == pytest.approx(0.21)  # the five phases and Fit: 0.01 + … + 0.06
    assert run.tail_budget_tokens == result.config["tail_budget_tokens"]
    assert run.summary_budget_tokens == 2000
    assert run.messages == result.messages
    expected = json.loads(json.dumps(result.to_dict()))
    assert run.report == expected
    assert run.summary == result.summary.to_dict()  # type: ignore[union-attr]
    assert json.loads(json.dumps(run.to_dict()))["id"] == run_id


def test_listing_is_light_and_newest_first() -> None:
    messages = conversation()
    with History() as history:
        ids = [history.record(messages, make_result(messages)) for _ in range(5)]
        listed = history.runs(limit=3)
    assert [r.id for r in listed] == ids[::-1][:3]
    assert all(r.messages is None and r.report is None for r in listed)


def test_fts_search_finds_a_run_by_a_word_of_its_summary() -> None:
    messages = conversation()
    with History() as history:
        stripe = history.record(messages, make_result(messages, "Stripe webhook 400 error"))
        other = history.record(messages, make_result(messages, "database migration timeout"))
        assert [r.id for r in history.search("webhook")] == [stripe]
        assert [r.id for r in history.search("migration timeout")] == [other]
        assert history.search("webhook timeout") == []
        assert history.search('"unbalanced AND (') == []  # user text is never FTS syntax
        history.relabel(other, "best so far")
        assert [r.id for r in history.runs(search="best")] == [other]


def test_relabel_and_delete() -> None:
    messages = conversation()
    with History() as history:
        run_id = history.record(messages, make_result(messages), label="old")
        history.relabel(run_id, "new", note="kept the webhook")
        assert (history.run(run_id).label, history.run(run_id).note) == ("new", "kept the webhook")
        history.relabel(run_id, None)
        assert history.run(run_id).label is None
        assert history.run(run_id).note == "kept the webhook"
        history.delete(run_id)
        assert history.runs() == []
        assert history.search("Stripe") == []  # the FTS rows went with it
        assert len(history.sessions()) == 1  # the conversation stays
        with pytest.raises(HistoryError, match=f"no run {run_id}"):
            history.run(run_id)
        with pytest.raises(HistoryError, match="no run"):
            history.delete(run_id)


def test_compare_reports_config_figures_sections_and_fates() -> None:
    from compaction.config import CompactionConfig

    messages = conversation()
    with History() as history:
        a = history.record(messages, make_result(messages, "Stripe webhook"))
        changed = make_result(messages, "login page", config=CompactionConfig(tail_token_ratio=0.4))
        changed.fates[2] = "kept"
        changed.tokens_after = 300
        b = history.record(messages, changed)
        comparison = history.compare(a, b)
    fields = {c["field"]: (c["a"], c["b"]) for c in comparison.config}
    assert fields["tail_token_ratio"] == (0.3, 0.4)
    assert "tail_budget_tokens" in fields and "model" not in fields
    figures = {f["name"]: f for f in comparison.figures}
    assert figures["tokens_after"]["delta"] == -100 and figures["tokens_after"]["changed"]
    assert not figures["tokens_before"]["changed"]
    assert comparison.changed_sections == list(history_sections())
    assert any(
        line.startswith("+") and "login page" in line for line in comparison.sections[0]["diff"]
    )
    assert comparison.same_session and len(comparison.fates) == len(messages)
    assert [f["index"] for f in comparison.fates if f["changed"]] == [2]
    assert comparison.fates[2]["a"] == "folded" and comparison.fates[2]["b"] == "kept"
    assert json.loads(json.dumps(comparison.to_dict()))["a"] == a


def test_a_run_stored_with_old_fate_names_reads_as_todays_fates() -> None:
    """Runs saved before the fates became an enum hold "summarised" and "args_truncated"; a
    comparison and the app's stored-run view read them as CUT_TO_ONE_LINE and ARGUMENTS_SHORTENED
    (otherwise every old one-liner would look "changed" against a new run)."""
    from compaction.result import Fate
    from compaction.ui.stored_run import result_from_report

    messages = conversation()
    with History() as history:
        old = make_result(messages, "Stripe webhook")
        old.fates[1], old.fates[2] = "summarised", "args_truncated"
        a = history.record(messages, old)
        new = make_result(messages, "Stripe webhook")
        new.fates[1], new.fates[2] = Fate.CUT_TO_ONE_LINE, Fate.ARGUMENTS_SHORTENED
        b = history.record(messages, new)
        comparison = history.compare(a, b)
        report = history.run(a).report
    assert not any(f["changed"] for f in comparison.fates)
    assert comparison.fates[1]["a"] == "cut_to_one_line"
    restored = result_from_report(report or {})
    assert restored.fates[1] == Fate.CUT_TO_ONE_LINE
    assert restored.fates[2] == Fate.ARGUMENTS_SHORTENED


def history_sections() -> tuple[str, ...]:
    from compaction.summary import SECTION_NAMES

    return SECTION_NAMES


def test_session_chart_points_follow_the_runs() -> None:
    from compaction.config import CompactionConfig

    messages = conversation()
    with History() as history:
        for ratio in (0.1, 0.2, 0.3):
            config = CompactionConfig(tail_token_ratio=ratio)
            history.record(messages, make_result(messages, config=config))
        points = history.session_chart(session_id(messages))
    assert [p["tail_token_ratio"] for p in points] == [0.1, 0.2, 0.3]
    budgets = [p["tail_budget_tokens"] for p in points]
    assert budgets == sorted(budgets) and len(set(budgets)) == 3
    assert all(p["savings_pct"] == 60.0 and p["summary_budget_tokens"] == 2000 for p in points)


def test_export_import_round_trip(tmp_path: Path) -> None:
    messages = conversation()
    with History() as history:
        run_id = history.record(messages, make_result(messages), label="keep", note="n")
        bundle = history.export(run_id)
    text = json.dumps(bundle)
    with History(tmp_path / "other.db") as other:
        imported = other.import_bundle(json.loads(text))
        again = other.export(imported)
        assert other.run(imported).label == "keep"
    assert again == bundle
    with History() as history:  # importing into the same history: a new run, the same session
        copy = history.import_bundle(bundle)
        assert copy != run_id
        assert len(history.sessions()) == 1


@pytest.mark.parametrize(
    "bundle, problem",
    [
        ({"kind": "something else"}, "not a compaction-lab run bundle"),
        ({"kind": "compaction-lab/run", "version": 99}, "version 99"),
        ({"kind": "compaction-lab/run", "version": 1, "result": {}}, "conversation.messages"),
        (
            {"kind": "compaction-lab/run", "version": 1, "conversation": {"messages": []}},
            "'result'",
        ),
    ],
)
def test_import_rejects_bad_bundles(bundle: dict[str, Any], problem: str) -> None:
    with History() as history, pytest.raises(HistoryError, match=problem):
        history.import_bundle(bundle)
    with History() as history:
        assert history.runs() == []


def test_record_rejects_what_is_not_a_conversation() -> None:
    messages = conversation()
    with History() as history:
        with pytest.raises(HistoryError, match="message 1 is a str"):
            history.record([messages[0], "oops"], make_result(messages))
        with pytest.raises(HistoryError, match="type int"):
            history.record(42, make_result(messages))
        assert history.runs() == []


def test_no_key_ever_reaches_the_database_file(_history_db: Path) -> None:
    messages = conversation()
    messages.append({"role": "user", "content": f"my key is {SECRET}, keep it safe"})
    result = make_result(
        messages,
        summary_words=f"user shared {SECRET}",
        details={
            "api_key": SECRET,
            "request": {"headers": {"Authorization": f"Bearer {SECRET}"}, "password": SECRET},
            "attempts": [{"token": SECRET, "model": "gpt-4o"}],
            "endpoint": {"api_key": PLAIN_KEY, "api_base": "http://127.0.0.1:9/v1"},
        },
    )
    result.config["api_key"] = SECRET
    result.config["nested"] = {"Key": SECRET, "x-api-key": SECRET, "password": PLAIN_KEY}
    before = json.dumps(result.to_dict())
    with History() as history:
        run_id = history.record(
            messages, result, summarizer_info={"kind": "llm", "model": "gpt-4o", "apiKey": SECRET}
        )
        bundle = history.export(run_id)
        run = history.run(run_id)
    assert json.dumps(result.to_dict()) == before  # the caller's result is not mutated
    assert SECRET not in json.dumps(bundle)
    assert run.summarizer_info == {"kind": "llm", "model": "gpt-4o"}
    assert "api_key" not in run.config and run.config["nested"] == {}
    assert "tokens_before" in run.report  # type: ignore[operator]
    data = b"".join(p.read_bytes() for p in _history_db.parent.iterdir())
    assert SECRET.encode() not in data
    assert b"abcdefghijklmnopqrstuvwxyz0123456789" not in data
    assert PLAIN_KEY.encode() not in data
    assert b"http://127.0.0.1:9/v1" in data  # the endpoint itself is kept
    assert b"Stripe webhook" in data  # the test reads the real bytes, not an empty file


def test_recording_the_same_secret_conversation_twice_stays_redacted(_history_db: Path) -> None:
    # The second record reuses the remembered redaction: it must be just as clean.
    messages = conversation()
    messages.append({"role": "user", "content": f"key {SECRET}"})
    with History() as history:
        first = history.record(messages, make_result(messages))
        second = history.record([dict(m) for m in messages], make_result(messages))
        assert history.run(first).session_id == history.run(second).session_id
        assert history.run(second).session_id == session_id(messages)
        assert len(history.sessions()) == 1
        assert SECRET not in json.dumps(history.session(session_id(messages)).to_dict())
    data = b"".join(p.read_bytes() for p in _history_db.parent.iterdir())
    assert SECRET.encode() not in data


def test_compare_lists_a_different_focus_topic_with_the_settings() -> None:
    # The same conversation and config, compacted without and with a focus: the focus is the
    # setting that differs, and both values are there to read.
    messages = conversation()
    plain = make_result(messages)
    plain.focus = None
    focused = make_result(messages)
    focused.focus = "the Stripe webhook"
    with History() as history:
        a, b = history.record(messages, plain), history.record(messages, focused)
        comparison = history.compare(a, b)
    assert {c["field"]: (c["a"], c["b"]) for c in comparison.config} == {
        "focus": (None, "the Stripe webhook")
    }
