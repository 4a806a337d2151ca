"""AppTest: Phase 3 shows which summary items the focus topic matched (by word stems) and kept."""

from __future__ import annotations

from app_helpers import click, dataframe_with, library_result, open_app

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.samples import load_sample

FOCUS = "failing tests"


def test_phase_3_lists_the_items_the_focus_kept_in_full() -> None:
    at = open_app(sample="fix-failing-tests", p_focus=FOCUS)
    for step in ("step_1", "step_2", "step_3"):
        click(at, step)
    conversation = load_sample("fix-failing-tests")
    expected = Compactor(CompactionConfig()).compress(
        conversation.messages, force=True, focus=FOCUS
    )
    details = expected.phase("summarize").details["summarizer_details"]
    assert details["focus_stems"] == ["fail", "test"]
    assert details["focus_matched"] > 0
    captions = " ".join(str(caption.value) for caption in at.caption)
    assert f"Focus matched {details['focus_matched']} item" in captions
    assert "_fail, test_" in captions or "fail, test" in captions
    shown = dataframe_with(at, "kept")
    assert list(shown["item"]) == [item["text"] for item in details["focus_items"]]
    assert list(shown["kept"]) == [item["kept"] for item in details["focus_items"]]


def test_no_focus_no_focus_list() -> None:
    at = open_app(sample="fix-failing-tests")
    for step in ("step_1", "step_2", "step_3"):
        click(at, step)
    assert "Focus matched" not in " ".join(str(caption.value) for caption in at.caption)
    assert library_result("fix-failing-tests").summary is not None
