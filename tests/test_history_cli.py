"""`compaction history …` through click's CliRunner, against a real history file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from history_factory import conversation, make_result

from compaction.cli import main
from compaction.commands.history import save_run
from compaction.history import History


@pytest.fixture
def two_runs() -> tuple[int, int]:
    from compaction.config import CompactionConfig

    messages = conversation()
    first = save_run(messages, make_result(messages, "Stripe webhook 400"), label="baseline")
    second = save_run(
        messages,
        make_result(messages, "login page", config=CompactionConfig(tail_token_ratio=0.4)),
        label="wider tail",
    )
    return first, second


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["history", *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_save_run_writes_to_the_default_history(_history_db: Path) -> None:
    messages = conversation()
    run_id = save_run(messages, make_result(messages), label="from compress")
    assert _history_db.exists()
    with History() as history:
        assert history.run(run_id).label == "from compress"


def test_list_shows_runs_newest_first(two_runs: tuple[int, int]) -> None:
    code, out, _ = run("list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[0] == "ID"
    assert lines[1].split()[0] == str(two_runs[1]) and "wider tail" in lines[1]
    assert lines[2].split()[0] == str(two_runs[0]) and "60.0%" in lines[2]


def test_list_filters_and_json(two_runs: tuple[int, int]) -> None:
    code, out, _ = run("list", "--search", "webhook", "--json")
    assert code == 0
    assert [r["id"] for r in json.loads(out)] == [two_runs[0]]
    with History() as history:
        session = history.sessions()[0].id
    code, out, _ = run("list", "--session", session[:8], "--limit", "1", "--json")
    assert [r["id"] for r in json.loads(out)] == [two_runs[1]]
    code, out, _ = run("list", "--search", "nothing-like-this")
    assert (code, out.strip()) == (0, "no matching runs")


def test_list_on_an_empty_history() -> None:
    assert run("list")[:2] == (0, "no runs stored yet\n")


def test_show_prints_figures_and_summary(two_runs: tuple[int, int]) -> None:
    code, out, _ = run("show", str(two_runs[0]))
    assert code == 0
    assert f"run {two_runs[0]}" in out and "label: baseline" in out
    assert "tokens 1000 → 400 (60.0% saved)" in out
    assert "## Active Task\nActive Task: Stripe webhook 400" in out
    code, out, _ = run("show", str(two_runs[0]), "--json")
    assert json.loads(out)["report"]["tokens_after"] == 400


def test_compare_prints_the_differences(two_runs: tuple[int, int]) -> None:
    code, out, _ = run("compare", *map(str, two_runs))
    assert code == 0
    assert "tail_token_ratio: 0.3 → 0.4" in out
    assert "summary sections changed: Active Task, Goal" in out
    assert "+Goal: login page" in out
    code, out, _ = run("compare", *map(str, two_runs), "--json")
    assert json.loads(out)["b"] == two_runs[1]


def test_export_import_round_trip(two_runs: tuple[int, int], tmp_path: Path) -> None:
    bundle_path = tmp_path / "run.json"
    code, _, err = run("export", str(two_runs[0]), "-o", str(bundle_path))
    assert code == 0 and str(bundle_path) in err
    code, stdout_bundle, _ = run("export", str(two_runs[0]))
    assert json.loads(stdout_bundle) == json.loads(bundle_path.read_text())
    other = tmp_path / "other.db"
    result = CliRunner().invoke(main, ["history", "--db", str(other), "import", str(bundle_path)])
    assert result.exit_code == 0 and result.stdout == "imported run 1\n"
    with History(other) as history:
        assert history.export(1) == json.loads(stdout_bundle)


def test_label_and_delete(two_runs: tuple[int, int]) -> None:
    first = str(two_runs[0])
    assert run("label", first, "best", "--note", "kept the webhook")[0] == 0
    with History() as history:
        assert (history.run(two_runs[0]).label, history.run(two_runs[0]).note) == (
            "best",
            "kept the webhook",
        )
    code, out, _ = run("delete", first, input="n\n")
    assert code == 0 and "nothing deleted" in out
    code, out, _ = run("delete", first, input="y\n")
    assert code == 0 and f"deleted run {first}" in out
    assert run("delete", str(two_runs[1]), "--yes")[0] == 0
    with History() as history:
        assert history.runs() == []


@pytest.mark.parametrize(
    "args",
    [("show", "999"), ("compare", "999", "1000"), ("delete", "999", "-y"), ("label", "999", "x")],
)
def test_missing_run_exits_2_with_one_line(args: tuple[str, ...], _history_db: Path) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.startswith("error: no run 999") and str(_history_db) in err
    assert len(err.strip().splitlines()) == 1


def test_import_of_a_bad_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run("import", str(bad))
    assert code == 2 and err.startswith(f"error: {bad}: not a JSON run bundle")
    bad.write_text(json.dumps({"kind": "other"}))
    code, _, err = run("import", str(bad))
    assert code == 2 and "not a compaction-lab run bundle" in err
    code, _, err = run("import", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_corrupt_history_exits_2_naming_the_file(_history_db: Path) -> None:
    _history_db.parent.mkdir(parents=True)
    _history_db.write_bytes(b"garbage" * 1000)
    code, out, err = run("list")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and str(_history_db) in err
    assert "Traceback" not in err
