"""AppTest of the History page over a seeded database: the table, search, a stored run shown
from its report, relabel, delete with confirmation, the session chart, and a corrupt database."""

from __future__ import annotations

from pathlib import Path

from app_helpers import ROOT, click, dataframe_with, open_app, section_headers
from history_seed import seed
from streamlit.testing.v1 import AppTest

from compaction.history import History
from compaction.summary import SECTION_NAMES

HISTORY = ROOT / "app_pages" / "history.py"


def first_metrics(at: AppTest) -> dict[str, str]:
    """label -> value of the first metric with that label (the run's own, before the phase's)."""
    shown: dict[str, str] = {}
    for metric in at.metric:
        shown.setdefault(metric.label, str(metric.value))
    return shown


def test_table_chart_and_search() -> None:
    ids = seed()
    at = open_app(HISTORY)
    table = dataframe_with(at, "savings %")
    assert list(table["run"]) == ids[::-1]
    assert "tail 0.2" in list(table["label"])
    assert at.get("plotly_chart"), "the session chart is drawn"

    at.text_input(key="history_search").set_value("IntegrityError")
    at.run()
    found = list(dataframe_with(at, "savings %")["run"])
    assert set(found) <= set(ids[:2]) and found  # only the pytest session mentions it


def test_open_run_from_url_shows_the_stored_report() -> None:
    ids = seed()
    with History() as history:
        stored = history.run(ids[0])
    at = open_app(HISTORY, run=str(ids[0]))
    shown = first_metrics(at)
    assert shown["Tokens before"] == f"{stored.tokens_before:,}"
    assert shown["Tokens after"] == f"{stored.tokens_after:,}"
    assert shown["Savings"] == f"{stored.savings_pct:.1f}%"
    assert section_headers(at) == list(SECTION_NAMES)  # the Phase 3 cards, from the report
    fates = dataframe_with(at, "fate")
    assert int(fates["messages"].sum()) == stored.messages_before


def test_relabel_and_delete() -> None:
    ids = seed()
    at = open_app(HISTORY, run=str(ids[1]))
    at.text_input(key="history_label").set_value("wide tail")
    click(at, "history_relabel")
    with History() as history:
        assert history.run(ids[1], full=False).label == "wide tail"
    assert "wide tail" in list(dataframe_with(at, "savings %")["label"])

    click(at, "history_delete")
    with History() as history:
        assert len(history.runs()) == 3  # nothing deleted before the confirmation
    click(at, "history_delete_confirm")
    with History() as history:
        assert [r.id for r in history.runs()] == [ids[2], ids[0]]
    assert ids[1] not in list(dataframe_with(at, "savings %")["run"])


def test_corrupt_database_is_reported_with_its_path(_history_db: Path) -> None:
    _history_db.parent.mkdir(parents=True, exist_ok=True)
    _history_db.write_bytes(b"this is not a sqlite database" * 100)
    at = open_app(HISTORY)
    errors = " ".join(str(e.value) for e in at.error)
    assert str(_history_db) in errors


def test_a_single_run_chart_has_a_readable_axis() -> None:
    from compaction.ui.history_views import session_chart

    point = {
        "run_id": 1,
        "label": None,
        "summarizer": "extractive",
        "savings_pct": 60.0,
        "tail_budget_tokens": 12_800,
        "summary_budget_tokens": 2_000,
    }
    figure = session_chart([point], "one run")
    assert tuple(figure.layout.xaxis.range) == (10_240, 15_360)  # ±20%, not ±0.001
    assert tuple(figure.layout.xaxis2.range) == (1_600, 2_400)
