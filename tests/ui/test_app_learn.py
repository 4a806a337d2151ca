"""AppTest of the Learn page: the seed's worked example, computed live from the sidebar's config."""

from __future__ import annotations

from app_helpers import LEARN, metrics, open_app

from compaction.config import CompactionConfig
from compaction.ui.learn_content import worked_example


def test_seed_worked_example_with_defaults() -> None:
    at = open_app(LEARN)
    shown = metrics(at)
    assert shown["Trigger"] == "64,000"
    assert shown["Summary budget"] == "8,000"
    example = worked_example(CompactionConfig())
    assert (example.tail, example.middle, example.summary_raw) == (12_800, 49_200, 9_840)
    assert shown["Savings"] == f"{example.savings_pct:.1f}%"
    info = " ".join(str(i.value) for i in at.info)
    assert "9,840" in info and "9,800" in info and "8,000" in info


def test_numbers_follow_the_sliders() -> None:
    at = open_app(LEARN)
    at.number_input(key="p_context_length").set_value(200_000)
    at.run()
    assert not at.exception
    assert metrics(at)["Trigger"] == "100,000"


def test_tiny_conversation_steps_through_every_phase() -> None:
    at = open_app(LEARN)
    slider = at.select_slider(key="learn_phase")
    for phase in range(1, 6):
        slider.set_value(phase)
        at.run()
        assert not at.exception
        assert at.subheader[0].value.startswith(f"Phase {phase}")
        slider = at.select_slider(key="learn_phase")
