"""Phase 3's cards say where each line came from, and a line opens the message it cites."""

from __future__ import annotations

from app_helpers import click, dataframe_with, library_result, open_app

from compaction.summary import SECTION_NAMES
from compaction.ui.summary_view import SOURCE_ROW_KEY


def test_every_card_line_names_its_messages_and_opens_them() -> None:
    at = open_app(sample="fix-failing-tests")
    expected = library_result("fix-failing-tests")
    assert expected.summary is not None
    for step in (1, 2, 3):
        click(at, f"step_{step}")
    cards = [str(t.value) for t in at.text]
    actions = next(c for c in cards if c.startswith("1. ") or "← #" in c)
    assert "← #" in actions
    # The table lists every line of every section with its sources and the check's verdict.
    table = dataframe_with(at, "check")
    items = [(n, i) for n in SECTION_NAMES for i in expected.summary.section_items(n)]
    assert list(table["line"]) == [item.text for _, item in items]
    assert list(table["from"]) == [item.source_label() for _, item in items]
    assert set(table["check"]) == {"✓"}
    # Selecting a line shows the messages it cites in place (the browser test clicks it and
    # sees the detail pane open there too: AppTest does not run a selection's callback).
    row, (section, item) = next(
        (position, entry) for position, entry in enumerate(items) if entry[1].sources
    )
    at.session_state[SOURCE_ROW_KEY] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    assert not at.exception
    shown = " ".join(str(m.value) for m in at.markdown)
    assert f"**#{item.sources[0]} · " in shown
    assert f"{section}: the line and what it cites" in [str(c.value) for c in at.caption]


def test_the_active_task_card_says_which_message_it_quotes() -> None:
    at = open_app(sample="fix-failing-tests")
    expected = library_result("fix-failing-tests")
    index = expected.phase("summarize").details["latest_user_index"]
    for step in (1, 2, 3):
        click(at, f"step_{step}")
    assert f"latest request, #{index}" in [str(c.value) for c in at.caption]
