"""AppTest of the Compare page over a seeded database: figures, config, section diffs, fates."""

from __future__ import annotations

from pathlib import Path

from app_helpers import ROOT, dataframe_with, open_app
from history_seed import seed, seeded_runs

from compaction.history import History

COMPARE = ROOT / "app_pages" / "compare.py"


def test_two_runs_of_one_session_side_by_side() -> None:
    ids = seed()
    with History() as history:
        expected = history.compare(ids[0], ids[1])
        a, b = history.run(ids[0], full=False), history.run(ids[1], full=False)
    at = open_app(COMPARE, compare_a=str(ids[0]), compare_b=str(ids[1]))

    savings = [str(m.value) for m in at.metric if m.label == "Savings"]
    assert savings == [f"{a.savings_pct:.1f}%", f"{b.savings_pct:.1f}%"]
    config = dataframe_with(at, "setting")
    differing = set(config[config["differs"]]["setting"])
    assert differing == {entry["field"] for entry in expected.config}
    assert "tail_token_ratio" in differing and "context_length" not in differing

    diffs = [str(code.value) for code in at.code]
    assert len(diffs) == len(expected.changed_sections) > 0
    for section in expected.sections:
        if section["changed"]:
            assert "\n".join(section["diff"]) in diffs

    fates = dataframe_with(at, "#")
    assert len(fates) == len(expected.fates) == a.messages_before
    assert int(fates["differs"].sum()) == expected.changed_fates > 0


def test_defaults_to_the_two_newest_runs_and_warns_across_sessions() -> None:
    ids = seed()
    at = open_app(COMPARE)
    assert at.number_input(key="compare_a").value == ids[1]
    assert at.number_input(key="compare_b").value == ids[2]
    assert any("different conversations" in str(w.value) for w in at.warning)


def test_the_newest_run_is_compared_with_an_earlier_run_of_its_own_conversation() -> None:
    ids = seed()  # fix-failing-tests twice, then orphans
    conversation, result, _ = seeded_runs()[0]  # the first fix-failing-tests compaction
    with History() as history:
        newest = history.record(conversation, result)  # fix-failing-tests again
    at = open_app(COMPARE)
    # Not the orphans run just before it: the latest earlier run of the same conversation.
    assert at.number_input(key="compare_a").value == ids[1]
    assert at.number_input(key="compare_b").value == newest
    assert not any("different conversations" in str(w.value) for w in at.warning)


def test_needs_two_runs_and_survives_a_bad_database(_history_db: Path) -> None:
    at = open_app(COMPARE)
    assert any("at least two saved runs" in str(i.value) for i in at.info)
    _history_db.parent.mkdir(parents=True, exist_ok=True)
    _history_db.write_bytes(b"garbage" * 500)
    at = open_app(COMPARE)
    assert str(_history_db) in " ".join(str(e.value) for e in at.error)
