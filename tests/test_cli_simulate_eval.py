"""The `simulate` and `eval` commands through click's CliRunner: tables, reports, parallel
workers, and one-line errors with exit status 2 for input that cannot be used."""

from __future__ import annotations

import csv
import json
import sys
import threading
import types
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm_server import DEFAULT_SUMMARY, LLMServer
from timeline_sessions import FIRST_PATH, coding_session

from compaction.cli import main
from compaction.formats import load_conversations
from compaction.lab.evaluate import MATCHED, STRATEGY_NAMES, STRUCTURAL_COLUMNS, evaluate
from compaction.lab.samples import SAMPLES_DIR
from compaction.lab.structural import CATEGORIES as STRUCTURAL
from compaction.lab.sweep.worker import pool_context

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def write_session(path: Path, rounds: int = 8) -> Path:
    path.write_text(json.dumps(coding_session(rounds)))
    return path


def test_simulate_prints_the_events_table_and_writes_the_timeline(tmp_path: Path) -> None:
    session = write_session(tmp_path / "session.json")
    out = tmp_path / "timeline.json"
    result = CliRunner().invoke(
        main, ["simulate", str(session), "--context-length", "8000", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "window 8,000, threshold 4,000 tokens" in lines[0]
    assert lines[1].split()[:6] == ["#", "step", "before", "after", "savings", "outcome"]
    assert "first summary" in result.output and "iterative update" in result.output
    report = json.loads(out.read_text())
    assert report["format"] == "openai" and len(report["steps"]) == len(coding_session(8))
    assert report["events"][1]["iterative"] is True
    assert len(report["drift"]) == len([e for e in report["events"] if e["summary"]]) - 1
    assert FIRST_PATH in json.dumps(report["events"][1]["summary"])


def test_simulate_below_the_threshold_says_so(tmp_path: Path) -> None:
    session = write_session(tmp_path / "session.json", rounds=2)
    result = CliRunner().invoke(main, ["simulate", str(session)])
    assert result.exit_code == 0
    assert "never reached the threshold" in result.output


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--threshold", "2"], "threshold_ratio must be between"),
        (["--context-length", "10"], "context_length must be between"),
        (["--index", "3"], "--index 3 is out of range"),
    ],
)
def test_simulate_bad_settings_exit_2_with_one_line(
    tmp_path: Path, arguments: list[str], expected: str
) -> None:
    session = write_session(tmp_path / "session.json", rounds=2)
    result = CliRunner().invoke(main, ["simulate", str(session), *arguments])
    assert result.exit_code == 2
    assert expected in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_event_that_only_pruned_says_so_and_the_next_summary_is_still_the_first() -> None:
    # At a 45,000-token window the sample's first compaction fits after Phase 1 alone.
    sample = SAMPLES_DIR
    result = CliRunner().invoke(
        main,
        ["simulate", str(sample / "fix-failing-tests.openai.json"), "--context-length", "45000"],
    )
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.strip()[:1].isdigit()]
    assert rows[0].endswith("pruned only (no summary written)")
    assert rows[1].endswith("first summary") and rows[2].endswith("iterative update")


def test_simulate_unreadable_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("just some notes, not a conversation")
    result = CliRunner().invoke(main, ["simulate", str(bad)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: ") and str(bad) in result.output
    missing = CliRunner().invoke(main, ["simulate", str(tmp_path / "missing.json")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    # A path that is not there is a missing file, not text in an unknown format.
    assert "missing.json: file not found" in missing.output


def make_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_session(folder / "a.json", rounds=3)
    write_session(folder / "b.json", rounds=5)
    (folder / "nested").mkdir()
    write_session(folder / "nested" / "c.json", rounds=4)
    (folder / "README.md").write_text("These are sessions.")
    (folder / ".hidden.json").write_text("{")
    (folder / "build.py").write_text("print('builds the sessions')")
    (folder / "nested" / "make.py").write_text("")
    return folder


def test_eval_over_a_folder_with_two_jobs(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    json_out, csv_out = tmp_path / "eval.json", tmp_path / "eval.csv"
    result = CliRunner().invoke(
        main,
        ["eval", str(folder), "--jobs", "2", "--json", str(json_out), "--csv", str(csv_out)],
    )
    assert result.exit_code == 0, result.output
    assert "3 sessions" in result.output
    assert "skipped" in result.output and "README.md" in result.output  # said, not dropped
    assert ".hidden" not in result.output
    # Code beside the sessions is one line, not a warning per file.
    assert "ignored 2 file(s) that are not sessions: 2 .py" in result.output
    assert "build.py" not in result.output
    table_rows = [line.split()[0] for line in result.output.splitlines()]
    assert all(name in table_rows for name in STRATEGY_NAMES)
    report = json.loads(json_out.read_text())
    assert [row["strategy"] for row in report["table"]] == list(STRATEGY_NAMES)
    assert [Path(s["source"]).name for s in report["sessions"]] == ["a.json", "b.json", "c.json"]
    with csv_out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 * len(STRATEGY_NAMES)
    assert {"source", "strategy", "savings_pct", "recall_files", "openai_errors"} <= set(rows[0])

    # In-process (--jobs 1) gives the same numbers as the worker processes.
    again = CliRunner().invoke(main, ["eval", str(folder), "--json", str(json_out)])
    assert again.exit_code == 0
    in_process = json.loads(json_out.read_text())
    strip = [{k: v for k, v in r.items() if "duration" not in k} for r in report["table"]]
    assert strip == [
        {k: v for k, v in r.items() if "duration" not in k} for r in in_process["table"]
    ]


def test_spawned_workers_do_not_rerun_the_callers_main_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under Streamlit (and AppTest) `__main__` is the page script being run; a spawned worker
    that re-ran it would run the page without a session (or, as here, die on it) and break the
    pool. Threads are alive, as in the app, so the pool spawns."""
    page = tmp_path / "page.py"
    page.write_text("raise RuntimeError('the page ran inside a worker')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    release = threading.Event()
    server_thread = threading.Thread(target=release.wait, daemon=True)
    server_thread.start()
    try:
        assert pool_context().get_start_method() == "spawn"
        folder = make_folder(tmp_path)
        result = CliRunner().invoke(main, ["eval", str(folder), "--jobs", "2"])
    finally:
        release.set()
        server_thread.join()
    assert result.exit_code == 0, result.output
    assert "3 sessions" in result.output
    assert sys.modules["__main__"] is fake_main  # the caller's own entry is put back


def test_eval_strategies_subset_and_limit(tmp_path: Path) -> None:
    many = tmp_path / "many.json"
    # A JSON array of runs with `traj` lists (tau-bench style): several conversations in one file.
    many.write_text(json.dumps([{"traj": coding_session(2)} for _ in range(3)]))
    result = CliRunner().invoke(
        main, ["eval", str(many), "--strategies", "prune-only,compaction", "--limit", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "2 sessions" in result.output
    assert "evaluating 2 of 3 conversations" in result.output
    assert "head-tail" not in result.output


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--strategies", "magic"], "unknown strategy 'magic'"),
        (["--target-ratio", "0"], "--target-ratio must be in (0, 1]"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--limit", "0"], "--limit must be at least 1"),
        (
            ["--by-session", "--strategies", "compaction,head-tail"],
            "--by-session compares compaction with head-tail-matched",
        ),
    ],
)
def test_eval_bad_settings_exit_2(tmp_path: Path, arguments: list[str], expected: str) -> None:
    session = write_session(tmp_path / "s.json", rounds=2)
    result = CliRunner().invoke(main, ["eval", str(session), *arguments])
    assert result.exit_code == 2
    assert expected in result.output and len(result.output.strip().splitlines()) == 1


def test_eval_reports_structural_recall_per_category_third_and_session(tmp_path: Path) -> None:
    # At a tenth of its size the sample's pipeline keeps less than head-tail of one category.
    sample = SAMPLES_DIR / "fix-failing-tests.openai.json"
    json_out, csv_out = tmp_path / "eval.json", tmp_path / "eval.csv"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            str(sample),
            "--target-ratio",
            "0.1",
            "--by-session",
            "--json",
            str(json_out),
            "--csv",
            str(csv_out),
        ],
    )
    assert result.exit_code == 0, result.output
    expected = evaluate(load_conversations(sample)[0], target_ratio=0.1)
    rows = {row["strategy"]: row for row in expected.rows()}
    report = json.loads(json_out.read_text())
    for entry in report["table"]:
        for column in STRUCTURAL_COLUMNS:
            assert entry[column] == rows[entry["strategy"]][column], column
    digest = report["sessions"][0]
    ours = expected.outcomes["compaction"].structural
    assert ours is not None
    shown = digest["structural"]["compaction"]["categories"]
    assert {name: (c["found"], c["total"]) for name, c in shown.items()} == {
        name: (ours.found.get(name, 0), ours.total.get(name, 0)) for name in STRUCTURAL
    }
    (session,) = report["by_session"]
    assert session["ours"]["total"] == rows["compaction"]["recall_structural"]
    assert (
        session["head_tail_matched"]["definitions"]
        == rows[MATCHED]["recall_structural_definitions"]
    )
    behind = [
        name
        for name in STRUCTURAL
        if (rows["compaction"][f"recall_structural_{name}"] or 0)
        < (rows[MATCHED][f"recall_structural_{name}"] or 0)
    ]
    # Each category where the pipeline keeps less is a loss, with examples (the folding itself
    # is tested in tests/lab/test_per_session.py; on this sample ours may lose nothing).
    assert [loss["figure"] for loss in report["losses"]] == behind
    assert all(loss["examples"] for loss in report["losses"])
    with csv_out.open() as handle:
        header = next(csv.reader(handle))
    assert set(STRUCTURAL_COLUMNS) <= set(header)
    # The two printed tables: per strategy, and the pipeline against head-tail per session.
    assert "structural recall per category" in result.output
    assert "missing  early err  defs  skills  decisions  1st third" in result.output
    session_line = next(
        line for line in result.output.splitlines() if line.startswith("fix-failing-tests")
    )
    assert f"{rows['compaction']['recall_structural']:.2f}/" in session_line
    for figure in behind:
        assert f"fix-failing-tests.openai.json  {figure}" in result.output


def test_eval_bad_inputs_exit_2(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a conversation")
    named = CliRunner().invoke(main, ["eval", str(notes)])
    assert named.exit_code == 2 and "cannot read" in named.output
    missing = CliRunner().invoke(main, ["eval", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = CliRunner().invoke(main, ["eval", str(empty)])
    assert nothing.exit_code == 2 and "no conversation found" in nothing.output


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus folder {CORPUS} is absent")
def test_eval_on_a_corpus_transcript_keeps_the_pipeline_valid(tmp_path: Path) -> None:
    out = tmp_path / "eval.json"
    source = CORPUS / "sweagent-demo-fc__marshmallow-code__marshmallow-1867.traj"
    result = CliRunner().invoke(main, ["eval", str(source), "--json", str(out)])
    assert result.exit_code == 0, result.output
    table = {row["strategy"]: row for row in json.loads(out.read_text())["table"]}
    assert table["compaction"]["openai_failures"] == 0
    assert table["compaction"]["anthropic_failures"] == 0


def test_simulate_says_when_a_compaction_leaves_the_context_over_the_window(
    tmp_path: Path,
) -> None:
    from timeline_sessions import over_window_session

    messages = over_window_session()
    path = tmp_path / "big.json"
    path.write_text(json.dumps(messages))
    result = CliRunner().invoke(main, ["simulate", str(path), "--context-length", "8000"])
    assert result.exit_code == 0, result.output
    assert "still over the 8,000-token window" in result.output
    assert "the system prompt and the latest request alone exceed the window" in result.output
    assert "left the context over the window" in result.output.splitlines()[-1]


def test_eval_summarises_with_a_model_and_runs_the_judged_probes(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The full pipeline's summary comes from one model, the judged answers from another, both on
    # the loopback server; the key comes from the environment and is never written out.
    monkeypatch.setenv("COMPACTION_API_KEY", "sk-eval-secret-77")
    llm_server.answer(DEFAULT_SUMMARY, model="sum-model")
    llm_server.answer(f"## Continuation\n{FIRST_PATH}", model="judge-model")
    session = write_session(tmp_path / "s.json", rounds=6)
    out = tmp_path / "eval.json"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            str(session),
            "--strategies",
            "head-tail,compaction",
            "--model",
            "openai/sum-model",
            "--judge",
            "openai/judge-model",
            "--api-base",
            llm_server.base_url,
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    models = [request.model for request in llm_server.requests]
    assert models.count("sum-model") == 1 and models.count("judge-model") == 2
    assert "summarised with openai/sum-model" in result.output
    header = next(line for line in result.output.splitlines() if line.startswith("strategy"))
    assert "judged" in header.split()
    report = out.read_text()
    assert "sk-eval-secret-77" not in report and "sk-eval-secret-77" not in result.output
    judged = json.loads(report)["sessions"][0]["judged"]
    assert [row["strategy"] for row in judged] == ["head-tail", "compaction"]


PEER_STRATEGIES = "hermes,codex,openhands,gemini-cli,observation-masking,compaction"


def test_eval_table_with_the_peers_checks_each_peer_for_provider_validity(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for rounds in (6, 12):
        write_session(folder / f"s{rounds}.json", rounds=rounds)
    out = tmp_path / "eval.json"
    result = CliRunner().invoke(
        main, ["eval", str(folder), "--strategies", PEER_STRATEGIES, "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    names = PEER_STRATEGIES.split(",")
    lines = result.output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("strategy"))
    assert "openai ✗" in lines[header] and "anthropic ✗" in lines[header]
    assert [line.split()[0] for line in lines[header + 2 : header + 2 + len(names)]] == names
    report = json.loads(out.read_text())
    assert [row["strategy"] for row in report["table"]] == names
    for session in report["sessions"]:
        for name in names:
            row = session["strategies"][name]
            # Each peer's own output was validated, and it reports tokens, savings and recall.
            assert {"openai_errors", "anthropic_errors", "valid", "tokens", "recall"} <= set(row)
    # Codex keeps no assistant or tool message: on these sessions it saves more than masking.
    table = {row["strategy"]: row for row in report["table"]}
    assert table["codex"]["mean_savings_pct"] > table["observation-masking"]["mean_savings_pct"]
    assert table["codex"]["openai_failures"] == 0


def test_eval_writes_the_per_session_table_as_markdown(tmp_path: Path) -> None:
    sample = SAMPLES_DIR / "orphans.openai.json"
    out = tmp_path / "sessions.md"
    result = CliRunner().invoke(main, ["eval", str(sample), "--markdown", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| session | n | behind / tied | facts | total | latest |")
    assert lines[2].startswith("| orphans.openai.json | 1 | 0 / ")
    assert len(lines) == 3
