"""Issue 20, the history's part: hostile bundles (3), huge numbers (4), terminal escapes (6),
LIKE wildcards (8), unbounded labels and titles (12) and read-only history files (13)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from history_factory import conversation, make_result

from compaction.cli import main
from compaction.commands.history import save_run
from compaction.errors import HistoryError
from compaction.history import History

HUGE = "99999999999999999999999"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
OSC0 = "\x1b]0;title\x07"


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["history", *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "Error:" not in out
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, err
    return err


@pytest.fixture
def stored() -> int:
    messages = conversation()
    return save_run(messages, make_result(messages), label="baseline")


# -- item 3: hostile bundles ---------------------------------------------------------------------


def test_import_deeply_nested_bundle_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    err = one_line_error(*run("import", str(path)))
    assert "nested too deeply" in err and str(path) in err


def test_import_bundle_with_huge_integer_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "digits.json"
    path.write_text('{"kind": "compaction-lab/run", "version": ' + "7" * 5000 + "}", "utf-8")
    err = one_line_error(*run("import", str(path)))
    assert "digits" in err and str(path) in err


def test_import_bundle_nested_just_under_the_parser_limit(tmp_path: Path, stored: int) -> None:
    code, out, _ = run("export", str(stored))
    bundle = json.loads(out)
    deep: object = "x"
    for _ in range(900):
        deep = [deep]
    bundle["result"]["phases"][0]["details"] = {"deep": deep}
    path = tmp_path / "deepish.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    code, out, err = run("import", str(path))
    assert "Traceback" not in err
    assert code in (0, 2), (code, out, err)


def test_import_bundle_with_out_of_range_numbers(tmp_path: Path, stored: int) -> None:
    _, out, _ = run("export", str(stored))
    bundle = json.loads(out)
    bundle["result"]["tokens_before"] = 10**30
    path = tmp_path / "big.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    err = one_line_error(*run("import", str(path)))
    assert str(path) in err
    bundle["result"]["tokens_before"] = 10
    bundle["version"] = 1e400  # inf once parsed
    path.write_text(json.dumps(bundle).replace("Infinity", "1e400"), encoding="utf-8")
    one_line_error(*run("import", str(path)))


def test_import_bundle_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "text.json"
    path.write_text("just some words\n", encoding="utf-8")
    err = one_line_error(*run("import", str(path)))
    assert "not a JSON run bundle" in err


# -- item 4: huge run ids and limits -------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("show", HUGE),
        ("show", "0"),
        ("show", "--", "-1"),
        ("export", HUGE),
        ("label", HUGE, "x"),
        ("delete", "-y", HUGE),
        ("compare", HUGE, "1"),
        ("compare", "1", HUGE),
        ("list", "--limit", HUGE),
    ],
)
def test_huge_numbers_are_rejected_by_click(stored: int, args: tuple[str, ...]) -> None:
    code, out, err = run(*args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "OverflowError" not in err
    assert "range" in err


def test_largest_sqlite_integer_is_a_missing_run(stored: int) -> None:
    code, _, err = run("show", str(2**63 - 1))
    assert code == 2 and f"no run {2**63 - 1}" in err


def test_library_rejects_out_of_range_ids(stored: int) -> None:
    with History() as history:
        with pytest.raises(HistoryError, match="no run"):
            history.run(10**30)
        with pytest.raises(HistoryError, match="no run"):
            history.delete(-(10**30))
        assert [r.id for r in history.runs(limit=10**30)] == [stored]


# -- item 6: terminal escapes --------------------------------------------------------------------


@pytest.fixture
def hostile() -> tuple[int, int]:
    messages = conversation(f"the {OSC0} webhook")
    messages[1]["content"] = f"Fix {OSC52} now {OSC0}"

    class Titled:
        def __init__(self) -> None:
            self.messages = messages
            self.title = f"title {OSC0} {OSC52}"
            self.format = "openai"

    first = save_run(Titled(), make_result(messages, f"summary {OSC52}"), label=f"l {OSC52}")
    second = save_run(
        Titled(),
        make_result(messages, f"other {OSC0}"),
        label=f"m {OSC0}",
        note=f"note {OSC52}\u009b2J",
    )
    return first, second


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("list", "--json"),
        ("show", "{a}"),
        ("show", "{b}"),
        ("show", "--json", "{b}"),
        ("show", "--full", "{a}"),
        ("compare", "{a}", "{b}"),
        ("compare", "--json", "{a}", "{b}"),
        ("export", "{a}"),
        ("export", "{b}"),
    ],
)
def test_no_raw_escape_reaches_stdout(hostile: tuple[int, int], args: tuple[str, ...]) -> None:
    a, b = hostile
    code, out, err = run(*(arg.format(a=a, b=b) for arg in args))
    assert code == 0, (out, err)
    for raw in ("\x1b", "\x07", "\u009b"):
        assert raw not in out and raw not in err
    if "--json" not in args and args[0] != "export":
        assert "\\x1b]" in out  # shown, escaped
    else:
        json.loads(out)  # still valid JSON


def test_json_output_keeps_the_text(hostile: tuple[int, int]) -> None:
    a, b = hostile
    _, out, _ = run("show", "--json", str(b))
    assert json.loads(out)["note"] == f"note {OSC52}\u009b2J"
    _, out, _ = run("export", str(a))
    assert json.loads(out)["run"]["label"] == f"l {OSC52}"


def test_delete_prompt_and_label_echo_are_escaped(hostile: tuple[int, int]) -> None:
    a, _ = hostile
    code, out, _ = run("delete", str(a), input="n\n")
    assert code == 0 and "\x1b" not in out and "nothing deleted" in out
    code, out, _ = run("label", str(a), f"new {OSC0}")
    assert code == 0 and "\x1b" not in out and "\x07" not in out


# -- item 8: LIKE wildcards in search ------------------------------------------------------------


@pytest.fixture
def wildcard_runs() -> dict[str, int]:
    labels = {
        "percent": "cut 50% of tokens",
        "underscore": "tail_ratio sweep",
        "plain": "baseline run",
        "both": "a_b 10%",
    }
    ids = {}
    for key, label in labels.items():
        messages = conversation(key)
        ids[key] = save_run(messages, make_result(messages, "nothing special"), label=label)
    return ids


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("%", {"percent", "both"}),
        ("_", {"underscore", "both"}),
        ("50%", {"percent"}),
        ("tail_ratio", {"underscore"}),
        ("tail%ratio", set()),
        ("t_il", set()),
        ("a_b 10%", {"both"}),
        ("\\", set()),
        ("baseline", {"plain"}),
    ],
)
def test_search_treats_percent_and_underscore_literally(
    wildcard_runs: dict[str, int], query: str, expected: set[str]
) -> None:
    code, out, err = run("list", "--search", query, "--json")
    assert code == 0, err
    found = {r["id"] for r in json.loads(out)}
    assert found == {wildcard_runs[key] for key in expected}
    with History() as history:
        assert {r.id for r in history.search(query)} == found


def test_search_finds_a_literal_backslash() -> None:
    messages = conversation("backslash")
    run_id = save_run(messages, make_result(messages, "nothing"), label="C:\\temp\\%x")
    save_run(conversation("other"), make_result(conversation("other"), "nothing"), label="Ctemp")
    with History() as history:
        assert [r.id for r in history.search("C:\\temp\\%")] == [run_id]


# -- item 12: long labels and titles -------------------------------------------------------------

LONG_LABEL = "label " + "x" * 100_000
LONG_TITLE = "title " + "y" * 100_000


class _Titled:
    def __init__(self, title: str, topic: str = "long") -> None:
        self.messages = conversation(topic)
        self.title = title
        self.format = "openai"


def test_store_bounds_labels_and_titles_and_keeps_them_in_full() -> None:
    from compaction.history.records import LABEL_CHARS, TITLE_CHARS

    conv = _Titled(LONG_TITLE)
    run_id = save_run(conv, make_result(conv.messages), label=LONG_LABEL)
    with History() as history:
        (listed,) = history.runs()
        assert len(listed.label or "") == LABEL_CHARS and (listed.label or "").endswith("…")
        assert len(listed.session_title or "") == TITLE_CHARS
        assert listed.label_full is None  # listings stay light
        run = history.run(run_id)
        assert run.full_label == LONG_LABEL and run.full_session_title == LONG_TITLE
        assert run.label == listed.label
        (session,) = history.sessions()
        assert len(session.title or "") == TITLE_CHARS
        assert history.session(session.id).full_title == LONG_TITLE
        assert [r.id for r in history.runs(label=LONG_LABEL)] == [run_id]
        assert [r.id for r in history.search("x" * 500)] == [run_id]  # past the cut
        bundle = history.export(run_id)
        assert bundle["run"]["label"] == LONG_LABEL
        assert bundle["conversation"]["title"] == LONG_TITLE
        history.relabel(run_id, "short")
        assert history.run(run_id).label == "short" and history.run(run_id).label_full is None
        history.relabel(run_id, LONG_LABEL)
        assert history.run(run_id).full_label == LONG_LABEL
        # A bundle carrying the long texts is bounded the same way on import.
        bundle["conversation"]["messages"] = conversation("imported")
        imported = history.import_bundle(bundle)
        again = history.run(imported)
        assert len(again.label or "") == LABEL_CHARS and again.full_label == LONG_LABEL
        assert again.full_session_title == LONG_TITLE


def test_short_texts_are_stored_unchanged() -> None:
    conv = _Titled("t" * 300)
    run_id = save_run(conv, make_result(conv.messages), label="l" * 200)
    with History() as history:
        run = history.run(run_id)
        assert run.label == "l" * 200 and run.label_full is None
        assert run.session_title == "t" * 300 and run.session_title_full is None


def test_cli_bounds_long_labels_and_show_full_prints_them() -> None:
    conv = _Titled(LONG_TITLE)
    run_id = save_run(conv, make_result(conv.messages), label=LONG_LABEL)
    code, out, _ = run("list")
    assert code == 0 and max(len(line) for line in out.splitlines()) < 200
    assert "label xxx" in out and "…" in out
    code, out, _ = run("show", str(run_id))
    assert code == 0 and len(out) < 20_000 and "--full" in out
    code, out, _ = run("show", "--full", str(run_id))
    assert code == 0 and LONG_LABEL in out and LONG_TITLE in out
    code, out, _ = run("delete", str(run_id), input="n\n")
    assert code == 0 and len(out) < 300
    code, out, _ = run("label", str(run_id), LONG_LABEL)
    assert code == 0 and len(out) < 300


def test_migration_bounds_texts_already_stored(_history_db: Path) -> None:
    from sqlite_utils import Database

    from compaction.history.schema import build_migrations

    _history_db.parent.mkdir(parents=True)
    db = Database(_history_db)
    build_migrations(4).apply(db)
    db.execute(
        "INSERT INTO sessions VALUES (?, ?, 'openai', 1, 10, '[]', '2025-01-01', '2025-01-01')",
        ["s1", LONG_TITLE],
    )
    db.execute(
        "INSERT INTO runs (session_id, created_at, config, summarizer, tokens_before, "
        "tokens_after, savings_pct, messages_before, messages_after, phase_durations, "
        "duration_s, messages, report, label) VALUES ('s1', '2025-01-01T00:00:00', '{}', "
        "'static', 10, 5, 50.0, 1, 1, '{}', 0.0, '[]', '{}', ?)",
        [LONG_LABEL],
    )
    db.close()
    with History() as history:
        (old,) = history.runs()
        assert len(old.label or "") == 200 and len(old.session_title or "") == 300
        full = history.run(old.id)
        assert full.full_label == LONG_LABEL and full.full_session_title == LONG_TITLE


def test_history_page_cuts_long_labels_and_titles() -> None:
    from compaction.ui.history_views import SHOWN_CHARS, run_rows, session_name

    conv = _Titled(LONG_TITLE)
    save_run(conv, make_result(conv.messages), label=LONG_LABEL)
    with History() as history:
        runs = history.runs()
        (session,) = history.sessions()
    rows = run_rows(runs)
    assert len(rows["label"][0]) == SHOWN_CHARS and rows["label"][0].endswith("…")
    assert len(rows["session"][0]) == SHOWN_CHARS
    assert len(session_name(session)) < SHOWN_CHARS + 40


# -- item 13: read-only history files ------------------------------------------------------------


def _journal_mode(path: Path) -> str:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def rollback_journal_db(_history_db: Path) -> tuple[Path, int]:
    """A history file with runs, switched back to a rollback journal, as a copy from another
    machine (or a file written before WAL) would be."""
    run_id = save_run(conversation(), make_result(conversation()), label="kept")
    conn = sqlite3.connect(_history_db)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    assert _journal_mode(_history_db) == "delete"
    return _history_db, run_id


@pytest.mark.parametrize(
    "args",
    [("list",), ("list", "--search", "Stripe"), ("show", "{id}"), ("export", "{id}")],
)
def test_reading_never_writes_the_file(
    rollback_journal_db: tuple[Path, int], args: tuple[str, ...]
) -> None:
    path, run_id = rollback_journal_db
    before = path.read_bytes()
    code, _, err = run(*(a.format(id=run_id) for a in args))
    assert code == 0, err
    assert _journal_mode(path) == "delete"  # not switched to WAL
    assert not path.with_name(path.name + "-wal").exists()
    assert path.read_bytes() == before


def test_compare_never_writes_the_file(rollback_journal_db: tuple[Path, int]) -> None:
    path, run_id = rollback_journal_db
    before = path.read_bytes()
    code, _, err = run("compare", str(run_id), str(run_id))
    assert code == 0, err
    assert _journal_mode(path) == "delete" and path.read_bytes() == before


def test_read_path_opens_with_mode_ro(
    rollback_journal_db: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[tuple[str, bool]] = []
    real = sqlite3.connect

    def spy(database: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append((str(database), bool(kwargs.get("uri"))))
        return real(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", spy)
    code, _, err = run("list")
    assert code == 0, err
    assert opened and all(uri and name.endswith("?mode=ro") for name, uri in opened)


def test_read_only_history_refuses_writes_with_a_clear_message(
    rollback_journal_db: tuple[Path, int],
) -> None:
    path, run_id = rollback_journal_db
    before = path.read_bytes()
    with History(path, readonly=True) as history:
        assert [r.id for r in history.runs()] == [run_id]
        with pytest.raises(HistoryError, match="read-only"):
            history.relabel(run_id, "changed")
        with pytest.raises(HistoryError, match="read-only"):
            history.delete(run_id)
        with pytest.raises(HistoryError, match="read-only"):
            history.record(conversation("new"), make_result(conversation("new")))
    assert path.read_bytes() == before


def test_chmod_0444_history_can_be_listed(rollback_journal_db: tuple[Path, int]) -> None:
    path, run_id = rollback_journal_db
    path.chmod(0o444)
    try:
        code, out, err = run("list")
        assert code == 0, err
        assert "kept" in out
        code, out, err = run("show", str(run_id))
        assert code == 0, err
        if os.geteuid() != 0:  # root writes through file permissions
            code, _, err = run("label", str(run_id), "changed")
            assert code == 2 and "read-only" in err and "Traceback" not in err
    finally:
        path.chmod(0o644)


def test_read_only_open_of_a_schema_4_file(_history_db: Path) -> None:
    """A file from the previous version (no full-text columns) is readable read-only, unmigrated."""
    from sqlite_utils import Database

    from compaction.history.schema import build_migrations

    _history_db.parent.mkdir(parents=True)
    db = Database(_history_db)
    build_migrations(4).apply(db)
    db.execute(
        "INSERT INTO sessions VALUES ('s1', 'old', 'openai', 1, 10, '[]', '2025-01-01', "
        "'2025-01-01')"
    )
    db.execute(
        "INSERT INTO runs (session_id, created_at, config, summarizer, tokens_before, "
        "tokens_after, savings_pct, messages_before, messages_after, phase_durations, "
        "duration_s, messages, report, label) VALUES ('s1', '2025-01-01T00:00:00', '{}', "
        "'static', 10, 5, 50.0, 1, 1, '{}', 0.0, '[]', '{}', 'old run')"
    )
    db.close()
    with History(_history_db, readonly=True) as history:
        (old,) = history.runs(label="old run")
        assert history.run(old.id).full_label == "old run"
        assert history.session("s1").full_title == "old"
        assert history.search("old")[0].id == old.id
    with History(_history_db) as history:  # a writable open migrates it
        assert history.run(old.id).label == "old run"


def test_missing_file_is_not_created_by_a_read_only_open(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no run history"):
        History(tmp_path / "absent.db", readonly=True)
    assert not (tmp_path / "absent.db").exists()


def _as_nobody_available() -> bool:
    import shutil
    import sys

    return (
        hasattr(os, "geteuid")
        and os.geteuid() == 0
        and shutil.which("setpriv") is not None
        and Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}").exists()
    )


@pytest.mark.skipif(not _as_nobody_available(), reason="needs root, setpriv and a system python")
@pytest.mark.parametrize("layout", ["read-only file, rollback journal", "read-only directory, WAL"])
def test_read_only_history_as_an_unprivileged_user(layout: str) -> None:
    """What file permissions really do, run as `nobody`: list works, a write says read-only."""
    import shutil
    import subprocess
    import sys
    import sysconfig
    import tempfile

    import compaction

    base = Path(tempfile.mkdtemp(prefix="compaction-ro-", dir="/tmp"))
    try:
        base.chmod(0o755)
        folder = base / "h"
        folder.mkdir()
        db = folder / "history.db"
        with History(db) as history:
            history.record(conversation(), make_result(conversation()), label="kept")
        if layout.endswith("rollback journal"):
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.close()
            os.chown(folder, 65534, 65534)  # nobody may write the directory, not the file
            db.chmod(0o444)
        else:
            db.chmod(0o444)
            folder.chmod(0o555)
        before = db.read_bytes()
        python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
        env = {
            "HOME": str(base),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": f"{Path(compaction.__file__).parent.parent}:"
            f"{sysconfig.get_paths()['purelib']}",
            "COMPACTION_LAB_DB": str(db),
        }

        def as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            return subprocess.run(
                [*command, python, "-m", "compaction", "history", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )

        listed = as_nobody("list")
        assert listed.returncode == 0, listed.stderr
        assert "kept" in listed.stdout
        labelled = as_nobody("label", "1", "changed")
        assert labelled.returncode == 2 and "read-only" in labelled.stderr
        assert "Traceback" not in labelled.stderr
        assert db.read_bytes() == before
    finally:
        for path in (base, *base.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(base)
