"""`compaction scan` through click's CliRunner: the corpus folder, this machine's sessions (the
app's discovery, with every agent's root moved to a temporary folder), the outputs, the history
tables SQL can read, incremental rescans and the errors a user can act on."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from claude_records import write_live_session
from click.testing import CliRunner
from corpus_paths import CORPUS_DIRS, corpus_files, corpus_path

from compaction.cli import main
from compaction.formats.local_sessions import ROOTS


@pytest.mark.skipif(not corpus_files(), reason="the shared corpus is not beside the project")
def test_scan_over_the_corpus_prints_each_compaction_and_the_aggregates(
    tmp_path: Path, _history_db: Path
) -> None:
    out = tmp_path / "scan.json"
    sessions_csv = tmp_path / "sessions.csv"
    compactions_csv = tmp_path / "compactions.csv"
    folders = [str(d) for d in CORPUS_DIRS if d.is_dir()]
    result = CliRunner().invoke(
        main,
        [
            "scan",
            *folders,
            "--jobs",
            "2",
            "--json",
            str(out),
            "--csv",
            str(sessions_csv),
            "--compactions-csv",
            str(compactions_csv),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3 compaction(s) recorded by their agents" in result.output
    assert "167,094 (recorded)" in result.output and "118,210 (usage)" in result.output
    assert "summary not readable" in result.output  # Codex's encrypted compaction
    data = json.loads(out.read_text())
    assert data["aggregates"]["all"]["compactions"] == 3
    assert len(data["compactions"]) == 3
    with compactions_csv.open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["kind"] for row in rows} == {"auto", "manual"}
    with sessions_csv.open() as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == len(data["sessions"])
    # The history holds plain tables: a person's SQL reads the per-agent medians.
    db = sqlite3.connect(_history_db)
    medians = dict(
        db.execute(
            "SELECT agent, median FROM scan_aggregates WHERE metric = 'trigger_tokens' "
            "AND scan_id = (SELECT max(id) FROM scans) AND n > 0"
        ).fetchall()
    )
    assert medians["claude-code"] == 167_094 and medians["opencode"] == 118_210
    assert db.execute("SELECT count(*) FROM scan_compactions").fetchone()[0] == 3
    again = CliRunner().invoke(main, ["scan", *folders])
    assert again.exit_code == 0 and "0 read" in again.output, again.output


def test_scan_without_paths_reads_the_sessions_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for root in ROOTS:
        monkeypatch.setenv(root.variable, str(tmp_path / "roots" / root.agent))
    write_live_session(tmp_path / "roots" / "claude-code" / "-home-me-project")
    result = CliRunner().invoke(main, ["scan", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "1 file(s), 1 session(s): 1 read" in result.output
    assert "claude-code" in result.output
    picked = CliRunner().invoke(main, ["scan", "--agent", "codex"])
    assert picked.exit_code == 2 and "no session file found on this machine" in picked.output


def test_scan_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["scan", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    both = CliRunner().invoke(main, ["scan", str(tmp_path), "--agent", "codex"])
    assert both.exit_code == 2 and "without PATH" in both.output
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = CliRunner().invoke(main, ["scan", str(empty)])
    assert nothing.exit_code == 2 and "no session file found" in nothing.output


def test_a_corrupt_file_is_a_row_and_the_scan_succeeds(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    source = corpus_path("claudecode-yatra__claude-session.jsonl")
    if source is None:
        pytest.skip("the shared corpus is not beside the project")
    shutil.copy(source, folder / "good.jsonl")
    (folder / "bad.jsonl").write_bytes(b"\x00\xff garbage")
    out = tmp_path / "scan.json"
    result = CliRunner().invoke(main, ["scan", str(folder), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 file(s) in error" in result.output
    assert "bad.jsonl: binary content" in result.output
    rows = json.loads(out.read_text())["sessions"]
    assert [r["status"] for r in rows if r["path"].endswith("bad.jsonl")] == ["error"]
