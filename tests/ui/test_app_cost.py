"""AppTest of the cost views: the Timeline's recorded usage and dollars on the Claude Code corpus
session (calibrated replay, what-ifs), Audit's recorded size on the Codex one, and the dollars
axis of Evaluate and Sweep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import ROOT, click, dataframe_with, metrics, open_app
from corpus_paths import corpus_path
from streamlit.testing.v1 import AppTest
from test_app_sweep import _choose_two_by_two, _sweep_page

TIMELINE = ROOT / "app_pages" / "timeline.py"
AUDIT = ROOT / "app_pages" / "audit.py"
EVALUATE = ROOT / "app_pages" / "evaluate.py"
SPOTTER = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SHIP = "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl"


def _upload(page: Path, name: str) -> AppTest:
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")
    at = open_app(page)
    at.file_uploader(key="load_upload").set_value((path.name, path.read_bytes(), "text/plain"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_timeline_shows_recorded_against_counted_dollars_and_the_compactions_price() -> None:
    at = _upload(TIMELINE, SPOTTER)
    shown = metrics(at)
    assert shown["Calls with usage"] == "152"
    assert shown["Dollars"] == "$11.8539"
    assert shown["Cache hit"] == "97.7%"
    assert shown["Agent's window"] == "200,000"
    chart = next(c for c in at.get("plotly_chart") if "cost_usage_chart" in str(c.proto.id))
    names = [trace.get("name", "") for trace in json.loads(chart.proto.spec)["data"]]
    assert "recorded prompt (provider)" in names and "counted (what the file holds)" in names
    assert "cumulative $ (right)" in names and "the agent compacted (1)" in names
    compactions = dataframe_with(at, "invalidated cache $")
    assert compactions["next call not cached"].tolist() == [12_500]
    assert any("Cache model against the record" in str(t.value) for t in at.text)


def test_the_calibrated_replay_and_the_what_ifs() -> None:
    at = _upload(TIMELINE, SPOTTER)
    at.toggle(key="timeline_calibrated").set_value(True)
    at.toggle(key="cost_what_if").set_value(True)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Calibrated: the agent's window 200,000" in str(c.value) for c in at.caption)
    scenarios = dataframe_with(at, "scenario")["scenario"].tolist()
    assert scenarios[:3] == ["agent, as billed", "agent, cache model", "ours (default)"]
    assert "peer: hermes" in scenarios


def test_a_session_without_usage_shows_no_cost_section() -> None:
    at = open_app(TIMELINE, sample="orphans")
    assert "Calls with usage" not in metrics(at)


def test_audit_reads_a_codex_compaction_from_the_recorded_usage_and_window() -> None:
    at = _upload(AUDIT, SHIP)
    captions = " ".join(str(c.value) for c in at.caption)
    assert "window 258,400 (recorded by the agent)" in captions
    assert "tokens before 227,252" in captions
    assert "the provider counted 235,330 tokens at the last call before it (91%" in captions


def test_evaluate_and_sweep_gain_a_dollars_axis() -> None:
    at = open_app(EVALUATE, sample="quick-fix")
    # The sample's model (claude-sonnet-4-20250514) is not in litellm's bundled map: unknown.
    assert any("unknown price" in str(c.value) for c in at.caption)
    at.text_input(key="evaluate_price").set_value("claude-sonnet-4-6")
    at.run()
    table = dataframe_with(at, "on the frontier")
    assert table["dollars"].notna().all() and table["on the frontier"].any()
    sweep = _choose_two_by_two(_sweep_page())
    click(sweep, "sweep_run")
    sweep.text_input(key="sweep_price_model").set_value("gpt-5.4")
    sweep.run()
    points = dataframe_with(sweep, "on the frontier")
    assert len(points) == 4 and points["dollars"].notna().all()
