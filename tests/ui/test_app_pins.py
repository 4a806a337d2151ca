"""AppTest of pins in the app (issue 33): pin the open message, run again and see it kept; the
sidebar's rules; the pins in the region bar, in the URL and in the history."""

from __future__ import annotations

from app_helpers import ROOT, click, dataframe_with, open_app, suggested_result

from compaction.history import History
from compaction.phases.pins import Pins
from compaction.result import Fate

SAMPLE = "fix-failing-tests"
HISTORY = ROOT / "app_pages" / "history.py"


def _summarised_middle_message() -> int:
    """A message the sample's suggested run summarises (so pinning it changes its fate)."""
    result = suggested_result(SAMPLE)
    summarised = sorted(i for i, fate in result.fates.items() if fate == Fate.FOLDED_INTO_SUMMARY)
    assert summarised, dict(result.fates)
    return summarised[len(summarised) // 2]


def test_a_message_pinned_from_the_list_is_kept_on_the_next_run() -> None:
    target = _summarised_middle_message()
    at = open_app(sample=SAMPLE)
    click(at, "step_all")
    at.session_state["inspect_open"] = target
    at.run()
    assert at.button(key="pin_open_message").label == f"📌 Pin #{target}"
    click(at, "pin_open_message")
    assert at.session_state["p_pins"] == [str(target)]
    # The region bar says what is pinned, and the message list marks it.
    assert any(
        "pinned** (kept verbatim" in str(c.value) and f"#{target}" in str(c.value)
        for c in at.caption
    )
    # The per-message chart marks it, at its own place on the message axis.
    marked = [
        c.proto for c in at.get("vega_lite_chart") if "pinned (kept verbatim)" in c.proto.spec
    ]
    assert len(marked) == 1
    assert f"#{target}" in str(marked[0].datasets)  # the markers' rows (Arrow-encoded)
    click(at, "step_all")
    kept = dataframe_with(at, "why")
    why = dict(zip(kept["#"], kept["why"], strict=True))
    assert why[target] == f"pinned #{target}"  # (a tool call's results come with it)
    assert at.button(key="pin_open_message").label == f"Unpin #{target}"
    # The run is stored with its pins.
    with History() as history:
        runs = history.runs(limit=5)
        stored = history.run(runs[0].id)
    assert Pins.of(stored.config.get("pins")).messages == (target,)


def test_pins_come_from_the_url_and_a_rule_keeps_its_messages() -> None:
    at = open_app(sample=SAMPLE, p_pins="user")
    assert at.session_state["p_pins"] == ["user"]
    assert at.multiselect(key="p_pins").value == ["user"]
    click(at, "step_all")
    kept = dataframe_with(at, "why")
    assert len(kept) >= 1 and all(
        why == "the user's message" or "user" in why for why in kept["why"]
    )


def test_an_unreadable_pin_is_a_parameter_error_not_a_crash() -> None:
    at = open_app(sample=SAMPLE, p_pins="text:(unclosed")
    assert any("Invalid parameters" in str(e.value) for e in at.error)


def test_a_run_stored_with_pins_reopens_with_them() -> None:
    target = _summarised_middle_message()
    at = open_app(sample=SAMPLE, p_pins=str(target))
    click(at, "step_all")
    with History() as history:
        run_id = history.runs(limit=1)[0].id
    page = open_app(HISTORY, run=str(run_id))
    assert any(f"Pinned in this run: messages #{target}" in str(c.value) for c in page.caption)
    assert page.button(key="history_reopen").label.endswith("settings and pins")
    page.session_state["p_pins"] = []  # the person has since cleared them
    click(page, "history_reopen")
    assert page.session_state["p_pins"] == [str(target)]
    # The run's conversation, opened by the link the button follows, with the pins restored.
    again = open_app(from_run=str(run_id), p_pins=str(target))
    click(again, "step_all")
    assert (
        dict(zip(*(dataframe_with(again, "why")[c] for c in ("#", "why")), strict=True))[target]
        == f"pinned #{target}"
    )


def test_loading_another_conversation_drops_the_pins_by_number_and_keeps_the_rules() -> None:
    # Message #5 of one conversation is another message of the next: a pin by number must not
    # silently keep it there.
    at = open_app(sample=SAMPLE)
    at.session_state["inspect_open"] = 5
    at.run()
    click(at, "pin_open_message")
    at.multiselect(key="p_pins").set_value(["5", "user"]).run()
    at.selectbox(key="load_sample_id").set_value("quick-fix").run()
    click(at, "load_sample_btn")
    assert at.session_state["loaded_conversation"].source == "sample:quick-fix"
    assert at.multiselect(key="p_pins").value == ["user"]
