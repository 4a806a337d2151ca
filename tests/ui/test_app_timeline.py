"""AppTest of the Timeline page: the replay of a sample with a small window, checked against
`compaction.simulate` itself — events, the sawtooth's markers, one event's phases, the drift."""

from __future__ import annotations

import json

from app_helpers import ROOT, dataframe_with, metrics, open_app

from compaction.config import CompactionConfig
from compaction.lab.drift import drift
from compaction.lab.samples import load_sample
from compaction.lab.timeline import simulate
from compaction.ui.timeline_views import event_inputs

TIMELINE = ROOT / "app_pages" / "timeline.py"
WINDOW = 16_000


def test_replay_shows_events_sawtooth_and_drift() -> None:
    expected = simulate(load_sample("already-compacted").messages, CompactionConfig(WINDOW))
    assert len(expected.events) >= 3
    at = open_app(TIMELINE, sample="already-compacted", p_context_length=str(WINDOW))

    shown = metrics(at)
    assert shown["Events"] == str(len(expected.events))
    events = dataframe_with(at, "outcome")
    assert list(events["outcome"]) == [e.outcome for e in expected.events]
    assert list(events["tokens_after"]) == [e.tokens_after for e in expected.events]

    traces = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    markers = {t["name"]: t["x"] for t in traces if t.get("mode") == "markers"}
    for outcome in {e.outcome for e in expected.events}:
        steps = [e.step for e in expected.events if e.outcome == outcome]
        assert markers[f"{outcome} ({len(steps)})"] == steps

    # The default event is the first; its inspector shows the summary phase of that result.
    assert at.selectbox(key="timeline_event").value == 0
    assert any(str(s.value).startswith("Phase 3") for s in at.subheader)
    first = expected.events[0]
    shown = metrics(at)
    assert shown["Context before"] == f"{first.tokens_before:,}"
    assert shown["Context after"] == f"{first.tokens_after:,}"

    at.selectbox(key="timeline_event").set_value(1)
    at.run()
    assert not at.exception
    assert expected.events[1].iterative
    assert "iterative update" in " ".join(str(m.value) for m in at.markdown)

    entries = drift(expected)
    table = dataframe_with(at, "facts vanished")
    assert list(table["facts vanished"]) == [len(e.vanished) for e in entries]
    # The first version with vanished facts (checked against the library) lists exactly them.
    dropping = next(e for e in entries if e.vanished)
    at.selectbox(key="drift_version").set_value(dropping.version)
    at.run()
    listed = dataframe_with(at, "category")
    assert list(listed["text"]) == [fact.text for fact in dropping.vanished]


def test_event_inputs_rebuild_each_compacted_context() -> None:
    messages = load_sample("orphans").messages
    timeline = simulate(messages, CompactionConfig(WINDOW))
    inputs = event_inputs(messages, timeline)
    assert sorted(inputs) == [e.number for e in timeline.events]
    for event in timeline.events:
        assert len(inputs[event.number]) == event.messages_before


def test_no_event_below_the_threshold() -> None:
    at = open_app(TIMELINE, sample="quick-fix")
    assert metrics(at)["Events"] == "0"
    assert any("never reached the threshold" in str(i.value) for i in at.info)


def test_a_context_left_over_the_window_is_a_warning_on_the_page() -> None:
    from timeline_sessions import over_window_session

    messages = over_window_session()
    at = open_app(TIMELINE, p_context_length="8000")
    at.text_area(key="load_paste").set_value(json.dumps(messages))
    at.button(key="load_paste_btn").click()
    at.run()
    assert not at.exception
    warnings = [str(w.value) for w in at.warning if "still over the 8,000-token" in str(w.value)]
    assert len(warnings) == 1


def test_a_peer_replays_with_its_own_trigger_and_policy() -> None:
    from compaction.lab.peers import PEERS
    from compaction.lab.timeline import simulate_peer

    messages = load_sample("already-compacted").messages
    expected = simulate_peer(messages, PEERS["hermes"], CompactionConfig(WINDOW))
    assert expected.events
    at = open_app(
        TIMELINE, sample="already-compacted", p_context_length=str(WINDOW), timeline_policy="hermes"
    )
    assert metrics(at)["Events"] == str(len(expected.events))
    events = dataframe_with(at, "outcome")
    assert list(events["step"]) == [e.step for e in expected.events]
    assert list(events["tokens_after"]) == [e.tokens_after for e in expected.events]
    assert any("hermes's trigger and policy" in str(c.value) for c in at.caption)
    # The threshold line is hermes' own: 0.75 of a window under 512K.
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    labels = [a.get("text") for a in spec["layout"].get("annotations", [])]
    assert f"threshold {int(WINDOW * 0.75):,}" in labels

    masking = open_app(TIMELINE, sample="already-compacted", timeline_policy="observation-masking")
    assert any("masks every observation" in str(i.value) for i in masking.info)
