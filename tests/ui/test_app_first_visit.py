"""AppTest of the app as a new user finds it: the conversation it opens on, links that name a
conversation and its settings, one sample's suggestions not following the user to the next, the
reason a compaction was skipped, and history saves only what the person ran."""

from __future__ import annotations

import json

from app_helpers import ROOT, click, open_app
from streamlit.testing.v1 import AppTest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig, model_context_length
from compaction.history import History
from compaction.lab.samples import get_sample, load_sample
from compaction.ui.params import MODELS

EVALUATE = ROOT / "app_pages" / "evaluate.py"


def _texts(at: AppTest, kind: str) -> str:
    return " ".join(str(element.value) for element in getattr(at, kind))


def _runs() -> int:
    with History() as history:
        return len(history.runs())


def test_the_app_opens_on_the_teaching_example_with_the_stepper() -> None:
    at = open_app()
    loaded = at.session_state["loaded_conversation"]
    assert loaded.source == "sample:teaching-example"
    assert at.query_params["sample"] == "teaching-example"
    assert "Run step by step" in _texts(at, "markdown")
    assert not at.button(key="step_1").disabled
    assert "Middle messages" in [metric.label for metric in at.metric]
    # The sample's description (what to look at, phase by phase) is in view, not folded away:
    # in the open Load panel on landing, and below it once a sample was picked.
    assert get_sample("teaching-example").description in _texts(at, "caption")
    at.selectbox(key="load_sample_id").set_value("orphans")
    click(at, "load_sample_btn")
    assert not at.expander[0].proto.expanded
    assert f"ℹ️ {get_sample('orphans').description}" in [str(c.value) for c in at.caption]


def test_the_app_reopens_the_last_conversation_the_person_had_open() -> None:
    at = open_app()
    at.selectbox(key="load_sample_id").set_value("orphans")
    click(at, "load_sample_btn")
    assert at.query_params["sample"] == "orphans"
    again = open_app()  # a new visit: a new session
    assert again.session_state["loaded_conversation"].source == "sample:orphans"
    assert again.query_params["sample"] == "orphans"


def test_a_link_applies_the_samples_suggestions_it_does_not_set_itself() -> None:
    at = open_app(sample="research-session")
    assert at.text_input(key="p_focus").value == get_sample("research-session").settings["focus"]
    other = open_app(sample="research-session", p_focus="refunds")
    assert other.text_input(key="p_focus").value == "refunds"
    # A sender who cleared the suggested focus (a default Streamlit leaves out of the URL)
    # sends a link that says so, and the receiver gets no focus either.
    at.text_input(key="p_focus").set_value("")
    at.run()
    assert at.query_params["unsuggested"] == "focus"
    link = {name: at.query_params[name] for name in at.query_params}
    received = open_app(**link)
    assert received.text_input(key="p_focus").value == ""


def test_a_samples_focus_does_not_follow_the_user_to_the_next_sample() -> None:
    at = open_app(sample="research-session")
    at.selectbox(key="load_sample_id").set_value("orphans")
    click(at, "load_sample_btn")
    assert at.text_input(key="p_focus").value == ""
    assert "p_focus" not in at.query_params
    notice = _texts(at, "info")
    assert "settings changed with the conversation" in notice
    assert "Focus topic: “the Stripe webhook” → none" in notice
    # A suggestion the person changed is theirs: it stays.
    at = open_app(sample="research-session")
    at.text_input(key="p_focus").set_value("the refunds job")
    at.run()
    at.selectbox(key="load_sample_id").set_value("orphans")
    click(at, "load_sample_btn")
    assert at.text_input(key="p_focus").value == "the refunds job"


def test_a_history_run_link_opens_its_conversation() -> None:
    messages = load_sample("orphans").messages
    with History() as history:
        run_id = history.record(messages, Compactor(CompactionConfig()).compress(messages))
    at = open_app(from_run=str(run_id))
    loaded = at.session_state["loaded_conversation"]
    assert len(loaded.messages) == len(messages)
    assert at.query_params["from_run"] == str(run_id)
    missing = open_app(from_run="999")
    assert "cannot be opened" in _texts(missing, "error")


def test_a_skipped_compaction_says_which_budget_and_what_would_compact() -> None:
    at = open_app(sample="quick-fix")
    warning = _texts(at, "warning")
    assert "Compaction skipped: nothing to compress." in warning
    assert "The tail allowance (soft ceiling 19,200 tokens" in warning
    assert "To compact, lower the window to" in warning


def test_history_saves_the_runs_the_person_ran_once_each() -> None:
    at = open_app(sample="orphans")
    click(at, "step_1")
    click(at, "step_2")
    assert _runs() == 0  # looking at phases is not a run to keep
    click(at, "step_all")
    at.run()  # the save is written in the background
    assert "Saved to history as run #1" in _texts(at, "caption")
    assert _runs() == 1
    # A setting changed after the run shows the new run but does not save it unasked.
    at.number_input(key="p_context_length").set_value(64_000)
    at.run()
    assert _runs() == 1
    click(at, "save_run")
    at.run()
    assert _runs() == 2
    # The same run again (Reset, Run all) is stored once.
    at.number_input(key="p_context_length").set_value(128_000)
    click(at, "step_reset")
    click(at, "step_all")
    at.run()
    assert _runs() == 2
    assert "Saved to history as run #1" in _texts(at, "caption")


def test_a_multi_conversation_upload_keeps_its_picker_in_view() -> None:
    document = [
        {
            "id": str(n),
            "conversations": [
                {"from": "human", "value": f"task {n}"},
                {"from": "gpt", "value": "done"},
            ],
        }
        for n in range(3)
    ]
    at = open_app()
    data = json.dumps(document).encode()
    at.file_uploader(key="load_upload").set_value(("runs.json", data, "application/json"))
    at.run()
    assert not at.exception
    picker = at.selectbox(key="load_pick")
    assert "holds 3 conversations" in str(picker.label)
    # Outside the Load panel (which folds once a conversation is loaded).
    inside = {id(box) for expander in at.expander for box in expander.selectbox}
    assert id(picker) not in inside
    picker.set_value(2)
    at.run()
    assert at.session_state["loaded_conversation"].messages[0]["content"] == "task 2"
    assert "sample" not in at.query_params  # an upload cannot travel in a link


def test_every_model_the_picker_offers_has_a_known_window() -> None:
    for model in MODELS:
        assert model_context_length(model) > 0, model


def test_evaluate_names_its_columns_in_words() -> None:
    at = open_app(EVALUATE, sample="orphans")
    columns = list(at.dataframe[0].value.columns)
    assert "recall: latest request" in columns and "recall: files written" in columns
    assert not any("_" in column for column in columns), columns


def test_phase_three_shows_the_summary_s_own_tokens() -> None:
    at = open_app(sample="fix-failing-tests")
    click(at, "step_1")
    click(at, "step_2")
    click(at, "step_3")
    assert "The summary itself: **" in _texts(at, "markdown")


def test_learn_explains_the_clamp_to_a_learner() -> None:
    at = open_app(ROOT / "app_pages" / "learn.py")
    info = _texts(at, "info")
    assert "Why 8,000 and not 9,840?" in info
    assert "design notes" not in info
