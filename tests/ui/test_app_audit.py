"""AppTest of the Audit page on the Claude Code corpus session that its agent auto-compacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import ROOT, open_app

AUDIT = ROOT / "app_pages" / "audit.py"
CORPUS = ROOT.parent / "shared" / "corpus"
SPOTTER = CORPUS / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _upload(path: Path) -> object:
    at = open_app(AUDIT)
    at.file_uploader(key="load_upload").set_value((path.name, path.read_bytes(), "text/plain"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_audit_page_shows_the_agents_compaction_beside_ours() -> None:
    if not SPOTTER.is_file():
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    at = _upload(SPOTTER)
    label = at.selectbox(key="audit_event").format_func(0)
    assert label == "1. Claude Code compacted at message 229 (auto, 167,094 tokens)"
    metrics = {m.label: str(m.value) for m in at.metric}
    assert int(metrics["Facts compacted away"]) > 50
    assert int(metrics["Ours, same size"]) > int(metrics["Kept by the agent"])
    assert "Ours, agent's budget" not in metrics  # one size story
    texts = [str(t.value) for t in at.text]
    (verdict,) = [t for t in texts if t.startswith("Verdict: ")]
    assert verdict.startswith("Verdict: the agent's context after it was 3,461 tokens and held")
    assert "; ours at the same size (" in verdict and "budget" not in verdict
    assert any(t.startswith("This session is being continued") for t in texts)  # the agent's
    assert any("## Active Task" in t for t in texts)  # ours, section by section
    forgotten = next(frame.value for frame in at.dataframe if "ours kept it" in frame.value.columns)
    assert list(forgotten.columns) == ["kind", "fact", "message #", "ours kept it"]
    assert len(forgotten) > 10
    # A message number is not a forgotten identifier.
    numbers = [str(f).lstrip("#") for f in forgotten["fact"] if str(f).startswith("#")]
    assert not [n for n in numbers if n.isdigit() and int(n) < 344], numbers
    # Reading a forgotten command opens the message that ran it: the command and its result,
    # not "(no text: tool calls only)".
    picker = at.selectbox(key="audit_message_229")
    commands = [i for i, label in enumerate(picker.options) if label.startswith("commands: ")]
    assert commands
    picker.set_value(commands[0]).run()
    assert not at.exception, [e.value for e in at.exception]
    fact_row = forgotten[forgotten["kind"] == "commands"].iloc[0]
    shown = " ".join(str(c.value) for c in [*at.code, *at.text])
    assert str(fact_row["fact"])[:30] in shown.replace("\\n", "\n")
    assert "(no text: tool calls only)" not in shown


def test_a_session_without_recorded_compactions_says_what_has_them() -> None:
    at = open_app(AUDIT, sample="quick-fix")
    assert any("records no compaction its agent made" in str(i.value) for i in at.info)


def test_the_timeline_marks_the_agents_own_compaction_apart_from_the_replay() -> None:
    import json

    if not SPOTTER.is_file():
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    at = open_app(ROOT / "app_pages" / "timeline.py")
    at.file_uploader(key="load_upload").set_value(
        (SPOTTER.name, SPOTTER.read_bytes(), "text/plain")
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    chart = next(c for c in at.get("plotly_chart") if "sawtooth" in str(c.proto.id))
    figure = json.loads(chart.proto.spec)
    (marker,) = [t for t in figure["data"] if t.get("name", "").startswith("recorded by")]
    assert marker["name"] == "recorded by the agent (1)"
    assert marker["x"] == [229] and marker["y"] == [167094]
    assert marker["hovertext"] == [
        "Claude Code compacted here, auto, 167,094 tokens (counted by the agent)"
    ]
    assert any("★ marks the compactions" in str(c.value) for c in at.caption)


def test_the_sample_picker_names_the_loaded_sample_after_a_page_switch() -> None:
    """Issue 33: Inspect → Audit from the sidebar showed "Loaded: The seed's worked example"
    above a picker saying another sample (the first in the list), three times out of three."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["sample"] = "quick-fix"
    at.run()
    assert at.selectbox(key="load_sample_id").value == "quick-fix"
    for page in ("app_pages/audit.py", "app_pages/inspect.py", "app_pages/timeline.py"):
        at.switch_page(page)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["loaded_conversation"].source == "sample:quick-fix"
        assert at.selectbox(key="load_sample_id").value == "quick-fix", page
