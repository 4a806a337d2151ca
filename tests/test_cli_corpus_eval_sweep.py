"""`compaction eval` and `compaction sweep` over a corpus: a folder or a scan's selection, per
session rows, spread and frontier across the sessions, a recommendation that says how often it
wins and where it loses, a clean stop that keeps what finished, and the rules it is chosen by."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from corpus_paths import corpus_path

from compaction.cli import main
from compaction.lab.corpus.compare import recommend_strategy
from compaction.lab.corpus.sweeping import sweep_corpus
from compaction.lab.sweep.grid import parse_grid

NAMES = (
    "claudecode-yatra__claude-session.jsonl",
    "claudecode-bastion__claude-session.jsonl",
    "codex-empireofbits__codex-session.jsonl",
    "gemini-vibecodingtracker__test_conversation_gemini.jsonl",
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in NAMES:
        source = corpus_path(name)
        if source is None:
            pytest.skip("the shared corpus (../shared/corpus) is not beside the project")
        shutil.copy(source, folder / name)
    (folder / "broken.jsonl").write_bytes(b"\x00 not a session")
    return folder


def test_eval_over_a_scans_selection_reports_the_corpus(corpus: Path, tmp_path: Path) -> None:
    scanned = CliRunner().invoke(main, ["scan", str(corpus), "--jobs", "1"])
    assert scanned.exit_code == 0, scanned.output
    out = tmp_path / "eval.json"
    strategies = "compaction,head-tail,codex,gemini-cli"
    result = CliRunner().invoke(
        main, ["eval", "--scan", "--strategies", strategies, "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "4 sessions" in result.output  # the broken file is not in the selection
    assert "across the corpus: mean (p10–p90)" in result.output
    assert "recommended: " in result.output and "wins per choice:" in result.output
    report = json.loads(out.read_text())["corpus"]
    assert {row["strategy"] for row in report["spread"]} == set(strategies.split(","))
    assert report["frontier"] and set(report["frontier"]) <= set(strategies.split(","))
    recommendation = report["recommendation"]
    assert recommendation["sessions"] == 4
    assert recommendation["wins"] + len(recommendation["losses"]) == 4
    # Only Claude Code's sessions, by the scan's agent column.
    picked = CliRunner().invoke(
        main, ["eval", "--scan", "--agent", "claude-code", "--strategies", "compaction"]
    )
    assert picked.exit_code == 0 and "2 sessions" in picked.output, picked.output
    empty = CliRunner().invoke(main, ["eval", "--scan", "--compacted"])
    assert empty.exit_code == 2 and "selection is empty with --compacted" in empty.output
    both = CliRunner().invoke(main, ["eval", str(corpus), "--scan"])
    assert both.exit_code == 2 and "not both" in both.output


def test_eval_without_paths_or_scan_says_what_to_give() -> None:
    result = CliRunner().invoke(main, ["eval"])
    assert result.exit_code == 2 and "PATH..., or --scan" in result.output


def test_sweep_over_a_folder_runs_every_point_on_every_session(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep.json"
    result = CliRunner().invoke(
        main,
        [
            "sweep",
            str(corpus),
            "--param",
            "tail_token_ratio=0.1,0.4",
            "--context-length",
            "20000",
            "--recommend-savings",
            "10",
            "--jobs",
            "2",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "across 4 sessions (2 local processes)" in result.output
    assert "broken.jsonl" in result.output  # its error, as a warning line
    data = json.loads(out.read_text())
    assert len(data["points"]) == 2
    assert all(len(point["runs"]) == 4 for point in data["points"])
    corpus_part = data["corpus"]
    assert len(corpus_part["sessions"]) == 4 and corpus_part["errors"]
    if corpus_part["recommendation"] is not None:
        rec = corpus_part["recommendation"]
        assert rec["wins"] + len(rec["losses"]) == 4


def test_a_corpus_sweep_stopped_by_ctrl_c_keeps_the_files_that_finished(corpus: Path) -> None:
    files: dict[str, Any] = {str(p): None for p in sorted(corpus.iterdir())}

    def interrupt(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    result = sweep_corpus(files, parse_grid(["tail_token_ratio=0.2"]), progress=interrupt)
    assert result.stopped
    assert 1 <= len(result.sessions) <= 2  # the second file may be the broken one
    assert all(len(point.runs) == len(result.sessions) for point in result.sweep.points)


def _digest(source: str, target: int, **rows: dict[str, Any]) -> dict[str, Any]:
    base = {"openai_errors": 0, "anthropic_errors": 0, "savings_pct": 50.0}
    return {
        "source": source,
        "target_tokens": target,
        "strategies": {name: {**base, **row} for name, row in rows.items()},
    }


def test_the_recommendation_counts_wins_and_names_each_loss() -> None:
    digests = [
        # a keeps more within the target: a wins.
        _digest("s1", 100, a={"tokens": 100, "recall": 0.9}, b={"tokens": 90, "recall": 0.8}),
        # a is far over the target: b wins although a keeps more.
        _digest("s2", 100, a={"tokens": 150, "recall": 1.0}, b={"tokens": 100, "recall": 0.7}),
        # b keeps more: a loses on recall.
        _digest("s3", 100, a={"tokens": 100, "recall": 0.5}, b={"tokens": 100, "recall": 0.75}),
        # c wins every session it is eligible in, but a provider rejects it once: never
        # recommended. a and b tie here.
        _digest(
            "s4",
            100,
            a={"tokens": 100, "recall": 0.6},
            b={"tokens": 100, "recall": 0.6},
            c={"tokens": 100, "recall": 1.0, "openai_errors": 1},
        ),
    ]
    for digest in digests[:3]:
        digest["strategies"]["c"] = {
            "tokens": 50,
            "recall": 1.0,
            "openai_errors": 0,
            "anthropic_errors": 0,
            "savings_pct": 50.0,
        }
    recommendation = recommend_strategy(digests)
    assert recommendation is not None
    assert recommendation.wins_by_choice == {"c": 3, "a": 1, "b": 1}
    assert recommendation.choice == "a"  # ties b on wins (1 each), higher mean recall
    assert recommendation.wins == 1 and recommendation.sessions == 4
    reasons = {loss.session: loss.reason for loss in recommendation.losses}
    assert reasons == {"s1": "lower recall", "s2": "over the target", "s3": "lower recall"}
    assert "a wins 1 of 4 sessions (25%)" in recommendation.sentence()


def test_ctrl_c_during_eval_keeps_the_sessions_that_finished(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import compaction.commands.evaluate as evaluate_command

    real = evaluate_command.run_task
    calls: list[str] = []

    def interrupted(task: Any) -> dict[str, Any]:
        calls.append(task[0])
        if len(calls) == 3:
            raise KeyboardInterrupt  # as a Ctrl-C lands while the third session runs
        return real(task)

    monkeypatch.setattr(evaluate_command, "run_task", interrupted)
    out = tmp_path / "eval.json"
    result = CliRunner().invoke(
        main, ["eval", str(corpus), "--strategies", "compaction,head-tail", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "stopped: 2 of 4 sessions evaluated" in result.output
    assert "2 sessions" in result.output
    assert len(json.loads(out.read_text())["sessions"]) == 2


def test_eval_of_an_imported_session_keeps_its_marks(corpus: Path) -> None:
    """The workers get the conversation, not only its messages: the harness's turns in a Gemini
    CLI session are marked, so eval does not mine them as the user's constraints (it did, 57
    facts instead of 54, when the marks moved beside the messages and eval still sent the
    message list alone)."""
    from compaction.commands.evaluate import collect_tasks, run_task
    from compaction.lab.evaluate import evaluate

    path = corpus / "gemini-vibecodingtracker__test_conversation_gemini.jsonl"
    tasks, _ = collect_tasks((str(path),), ("compaction",), 0.5, limit=None)
    (task,) = tasks
    conversation = task[1]
    assert conversation.marks, "the importer marks the harness's turns"
    digest = run_task(task)["strategies"]["compaction"]
    marked = evaluate(conversation, ("compaction",), target_ratio=0.5).summary_row()
    unmarked = evaluate(conversation.messages, ("compaction",), target_ratio=0.5).summary_row()
    assert digest["facts_total"] == marked["strategies"]["compaction"]["facts_total"]
    assert digest["facts_total"] < unmarked["strategies"]["compaction"]["facts_total"]
    assert digest["recall_constraints"] is None  # the harness's instructions are not the user's
