"""AppTest of the Sweep page: a 2 × 2 sweep on a sample, its charts, frontier and recommendation,
reopening it from the history, opening a point in Inspect, and the LLM cost confirmation (nothing
is sent to the loopback server before the user confirms)."""

from __future__ import annotations

from pathlib import Path

from app_helpers import ROOT, TIMEOUT, click
from llm_server import LLMServer
from streamlit.testing.v1 import AppTest

from compaction.config import CompactionConfig
from compaction.history import History
from compaction.lab.samples import load_sample
from compaction.lab.sweep.run import sweep

SWEEP = ROOT / "app_pages" / "sweep.py"
SAMPLE = "orphans"
CONTEXT = 8_000
GRID = {"tail_token_ratio": [0.1, 0.3], "summary_ratio": [0.1, 0.3]}


def _sweep_page(**query: str) -> AppTest:
    at = AppTest.from_file(str(SWEEP), default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _without_the_loaded_conversation(at: AppTest) -> None:
    """The app opens on the teaching example, which a sweep includes by default: these tests
    sweep only the sessions they choose."""
    for toggle in at.toggle:
        if toggle.key == "sweep_use_loaded":
            toggle.set_value(False)


def _choose_two_by_two(at: AppTest) -> AppTest:
    _without_the_loaded_conversation(at)
    at.multiselect(key="sweep_samples").set_value([SAMPLE])
    at.number_input(key="sweep_context_length").set_value(CONTEXT)
    for name in GRID:
        at.slider(key=f"sweep_range_{name}").set_value((0.1, 0.3))
        at.number_input(key=f"sweep_step_{name}").set_value(0.2)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _codes(at: AppTest) -> str:
    return "\n".join(str(code.value) for code in at.code)


def test_sweep_runs_charts_recommends_and_saves(_history_db: Path) -> None:
    at = _choose_two_by_two(_sweep_page())
    assert "**4 point(s)** per session" in [str(c.value) for c in at.caption]
    click(at, "sweep_run")

    charts = at.get("plotly_chart")
    # savings heatmap, recall heatmap, the frontier scatter, recall against dollars
    assert len(charts) == 4
    expected = sweep(
        [load_sample(SAMPLE).messages], GRID, base_config=CompactionConfig(context_length=CONTEXT)
    )
    table = at.dataframe[0].value  # the frontier
    frontier = expected.frontier()
    assert list(table["point"]) == [p.index for p in frontier]
    assert list(table["savings %"]) == [round(p.savings_pct, 1) for p in frontier]

    best = expected.recommend(50)
    assert best is not None
    codes = _codes(at)
    assert "CompactionConfig(" in codes and "context_length=8000" in codes
    assert "compaction compress INPUT" in codes and "--context-length 8000" in codes
    assert "compression:" in codes and "enabled: true" in codes
    # and the one line for each framework adapter, with the same settings
    for adapter in ("CompactionMiddleware(", "compaction_capability(", "CompactionFilter("):
        assert f"{adapter}CompactionConfig(context_length=8000" in codes
    assert any(best.label in str(s.value) for s in at.success)
    assert not any("wrote a summary" in str(i.value) for i in at.info)  # these points did

    with History() as history:
        (stored,) = history.sweeps()
    assert stored.point_count == 4 and stored.grid == GRID
    assert stored.recommendation is not None and stored.recommendation["point"] == best.index

    # A raised target the sweep cannot reach says so instead of recommending.
    at.slider(key="sweep_target").set_value(100)
    at.run()
    assert any("No valid point saves 100%" in str(w.value) for w in at.warning)

    # A new session reopens the saved sweep from the list, with the same frontier.
    again = _sweep_page()
    assert again.get("plotly_chart") == []
    click(again, "sweep_reopen")
    assert len(again.get("plotly_chart")) == 4
    assert list(again.dataframe[0].value["point"]) == [p.index for p in frontier]
    assert f"saved as sweep #{stored.id}" in " ".join(str(c.value) for c in again.caption)


def test_a_point_opens_in_inspect_with_its_settings() -> None:
    at = _choose_two_by_two(_sweep_page())
    at.toggle(key="sweep_save").set_value(False)
    click(at, "sweep_run")
    with History() as history:
        assert history.sweeps() == []  # the toggle was off
    at.selectbox(key="sweep_point").set_value(3)  # tail 0.3, summary 0.3
    at.run()
    click(at, "sweep_open_inspect")
    assert at.session_state["p_tail_token_ratio"] == 0.3
    assert at.session_state["p_summary_ratio"] == 0.3
    assert at.session_state["p_context_length"] == CONTEXT
    # The sidebar's widgets are bound to the URL, so Inspect's address carries the point.
    assert at.query_params["p_tail_token_ratio"] == "0.3"
    assert at.query_params["p_context_length"] == str(CONTEXT)
    loaded = at.session_state["loaded_conversation"]
    assert loaded.messages == load_sample(SAMPLE).messages  # the swept conversation is loaded


def test_llm_sweep_asks_before_spending(llm_server: LLMServer) -> None:
    at = _sweep_page(
        p_summarizer="llm", p_llm_model="openai/test-model", p_llm_api_base=llm_server.base_url
    )
    at.text_input(key="llm_api_key").set_value("sk-test")
    at = _choose_two_by_two(at)
    click(at, "sweep_run")
    warning = " ".join(str(w.value) for w in at.warning)
    assert "summary call(s) to openai/test-model" in warning
    assert "Nothing has been sent yet" in warning
    assert llm_server.requests == []
    assert at.get("plotly_chart") == []

    click(at, "sweep_confirm")
    assert llm_server.requests, "the confirmed sweep called the model"
    assert all(r.model == "test-model" for r in llm_server.requests)
    assert len(at.get("plotly_chart")) == 4


def test_readme_walkthrough_recommends_what_the_readme_says() -> None:
    # README "Tune your agent in five minutes": the sample loaded, summary minimum 500, the
    # default 4 × 3 grid at a 64,000-token base window, savings target 80%.
    at = _sweep_page(sample="fix-failing-tests", p_summary_min_tokens="500")
    assert at.toggle(key="sweep_use_loaded").value is True
    assert "**12 point(s)** per session" in [str(c.value) for c in at.caption]
    at.number_input(key="sweep_context_length").set_value(64_000)
    at.toggle(key="sweep_save").set_value(False)
    at.run()
    click(at, "sweep_run")
    at.slider(key="sweep_target").set_value(80)
    at.run()
    success = " ".join(str(s.value) for s in at.success)
    assert "tail_token_ratio=0.2, summary_ratio=0.1" in success
    assert "saves 86.5%, probe recall 52.0%" in success
    assert (
        "CompactionConfig(context_length=64000, summary_ratio=0.1, summary_min_tokens=500)"
        in _codes(at)
    )


def test_a_sweep_where_no_point_summarises_says_why_summary_settings_are_flat() -> None:
    # At a 128K window, tails of 0.1 and 0.4: every point fits after Phase 1, none summarises.
    at = _sweep_page()
    _without_the_loaded_conversation(at)
    at.multiselect(key="sweep_samples").set_value(["fix-failing-tests"])
    at.number_input(key="sweep_context_length").set_value(128_000)
    at.slider(key="sweep_range_tail_token_ratio").set_value((0.1, 0.4))
    at.number_input(key="sweep_step_tail_token_ratio").set_value(0.3)
    at.slider(key="sweep_range_summary_ratio").set_value((0.1, 0.3))
    at.number_input(key="sweep_step_summary_ratio").set_value(0.2)
    at.run()
    click(at, "sweep_run")
    notes = [str(i.value) for i in at.info if "wrote a summary" in str(i.value)]
    assert len(notes) == 1 and "so summary_ratio changes nothing here" in notes[0]


def test_a_peer_parameter_is_a_sweep_axis_on_the_page() -> None:
    at = _sweep_page()
    _without_the_loaded_conversation(at)
    at.multiselect(key="sweep_samples").set_value([SAMPLE])
    at.number_input(key="sweep_context_length").set_value(CONTEXT)
    at.selectbox(key="sweep_param_1").set_value("hermes.protect_last_n")
    at.selectbox(key="sweep_param_2").set_value("(none)")
    at.run()
    at.number_input(key="sweep_from_hermes.protect_last_n").set_value(5)
    at.number_input(key="sweep_to_hermes.protect_last_n").set_value(25)
    at.number_input(key="sweep_by_hermes.protect_last_n").set_value(10)
    at.run()
    assert "**3 point(s)** per session" in [str(c.value) for c in at.caption]
    click(at, "sweep_run")
    expected = sweep(
        [load_sample(SAMPLE).messages],
        {"hermes.protect_last_n": [5, 15, 25]},
        base_config=CompactionConfig(context_length=CONTEXT),
    )
    shown = [p.index for p in expected.frontier()]
    assert list(at.dataframe[0].value["point"]) == shown
    assert "make_peer('hermes'" in _codes(at)  # the recommendation runs the peer, not a config
