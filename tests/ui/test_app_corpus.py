"""AppTest of the Corpus page: a scan run from the page (a corrupt file a row with its error),
its filters, the distributions per agent, opening a row, and the corpus sweep's frontier."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_helpers import ROOT, open_app
from corpus_paths import corpus_path
from streamlit.testing.v1 import AppTest

CORPUS_PAGE = ROOT / "app_pages" / "corpus.py"
NAMES = (
    "claudecode-yatra__claude-session.jsonl",
    "codex-empireofbits__codex-session.jsonl",
    "opencode-dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json",
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    target.mkdir()
    for name in NAMES:
        source = corpus_path(name)
        if source is None:
            pytest.skip("the shared corpus (../shared/corpus) is not beside the project")
        shutil.copy(source, target / name)
    (target / "corrupt.jsonl").write_bytes(b"\x00\xff\xfe this is not a session")
    return target


def scanned(folder: Path) -> AppTest:
    at = open_app(CORPUS_PAGE)
    at.text_area(key="corpus_folders").set_value(str(folder))
    at.button(key="corpus_scan").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sessions_table(at: AppTest):  # type: ignore[no-untyped-def]
    return next(frame.value for frame in at.dataframe if "status" in frame.value.columns)


def test_without_a_scan_the_page_says_how_to_start() -> None:
    at = open_app(CORPUS_PAGE)
    assert any("No scan yet" in str(info.value) for info in at.info)


def test_a_scan_from_the_page_lists_every_file_and_a_corrupt_one_with_its_error(
    folder: Path,
) -> None:
    at = scanned(folder)
    assert any("4 file(s): 4 read" in str(s.value) for s in at.success)
    table = sessions_table(at)
    assert len(table) == 4
    corrupt = table[table["file"] == "corrupt.jsonl"].iloc[0]
    assert corrupt["status"] == "error" and "binary content" in corrupt["error"]
    # The file in error leads the grid and is named, with its error, in text above it.
    assert table.iloc[0]["file"] == "corrupt.jsonl"
    warned = [str(w.value) for w in at.warning if "could not be read" in str(w.value)]
    assert len(warned) == 1 and "corrupt.jsonl" in warned[0] and "binary content" in warned[0]
    assert "(1 in error)" in warned[0]  # the same count as the "Files in error" metric
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Files in error"] == "1"
    assert metrics["Compactions (auto / manual)"] == "1 (0 / 1)"
    # The OpenCode session's compaction is charted in each distribution.
    charts = [chart for chart in at.get("plotly_chart")]
    assert len(charts) == 3
    # A second scan reads nothing: every file is unchanged.
    at.button(key="corpus_scan").click()
    at.run()
    assert any("0 read, 4 unchanged" in str(s.value) for s in at.success)


def test_the_filters_narrow_the_table(folder: Path) -> None:
    at = scanned(folder)
    at.multiselect(key="corpus_agents").set_value(["opencode"])
    at.run()
    assert list(sessions_table(at)["agent"]) == ["opencode"]
    at.multiselect(key="corpus_agents").set_value([])
    at.checkbox(key="corpus_compacted").check()
    at.run()
    assert list(sessions_table(at)["compactions"]) == [1]
    at.checkbox(key="corpus_compacted").uncheck()
    at.checkbox(key="corpus_errors").check()
    at.run()
    assert list(sessions_table(at)["file"]) == ["corrupt.jsonl"]


def test_a_row_opens_in_audit(folder: Path) -> None:
    at = scanned(folder)
    at.checkbox(key="corpus_compacted").check()
    at.run()
    at.session_state["corpus_table"] = {"selection": {"rows": [0], "columns": []}}
    at.button(key="corpus_open_audit").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # Run alone (no app.py navigation) the page cannot switch: it says what it would open.
    page, path = at.session_state["_corpus_opened"]
    assert page == "audit" and path == str(folder / NAMES[2])
    assert any(str(path) in str(info.value) for info in at.info)


def test_the_selection_is_swept_and_its_frontier_drawn(folder: Path) -> None:
    at = scanned(folder)
    at.text_input(key="corpus_sweep_params").set_value("tail_token_ratio=0.1,0.4")
    at.number_input(key="corpus_window").set_value(16_000)
    at.slider(key="corpus_target").set_value(5)
    at.button(key="corpus_sweep").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 4  # the three distributions and the frontier
    shown = " ".join(str(m.value) for m in at.markdown)
    assert "**Recommended:** tail\\_token\\_ratio=" in shown and "of 3 sessions" in shown
    # Saved in the history, where the Sweep page reopens it.
    from compaction.history import History

    with History() as history:
        assert [row.label for row in history.sweeps()] == ["corpus sweep"]


def test_a_scanned_folders_session_opens_by_link_and_an_unscanned_one_does_not(
    folder: Path, tmp_path: Path
) -> None:
    # The Corpus page opens a row in Inspect or Audit with a `?session=` link: a folder the
    # person scanned is one they named on purpose, so its files open; a copy elsewhere does not.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(folder / NAMES[0], elsewhere / NAMES[0])
    opened = open_app(session=str(folder / NAMES[0]))
    assert "loaded_conversation" not in opened.session_state or not str(
        opened.session_state["loaded_conversation"].source
    ).startswith("local:")  # not scanned yet: refused
    scanned(folder)
    opened = open_app(session=str(folder / NAMES[0]))
    assert not [e.value for e in opened.error]
    assert opened.session_state["loaded_conversation"].source == f"local:{folder / NAMES[0]}"
    refused = open_app(session=str(elsewhere / NAMES[0]))
    assert any("session folder" in str(e.value) for e in refused.error)
