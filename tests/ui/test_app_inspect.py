"""AppTest of the Inspect page: every sample through the phases, checked against the library."""

from __future__ import annotations

import pytest
from app_helpers import (
    click,
    dataframe_with,
    library_result,
    metrics,
    open_app,
    section_headers,
    suggested_result,
)
from streamlit.testing.v1 import AppTest

from compaction.lab.samples import list_samples
from compaction.summary import SECTION_NAMES
from compaction.ui.phase_views import FIX_LABELS

SAMPLE_IDS = [sample.id for sample in list_samples()]


def show_cleanup(at: AppTest) -> None:
    """Put Phase 5 on view (the stepper's segmented control) after Run all."""
    at.session_state["phase_view"] = 5
    at.run()
    assert not at.exception


def test_samples_are_present() -> None:
    assert SAMPLE_IDS, "sample_sessions/index.json lists no samples"


@pytest.mark.parametrize("sample_id", SAMPLE_IDS)
def test_each_sample_runs_all_phases(sample_id: str) -> None:
    sample = next(s for s in list_samples() if s.id == sample_id)
    at = open_app(sample=sample_id)
    expected = suggested_result(sample_id)  # a link applies the sample's suggestions
    bounds = expected.phase("boundaries").details
    shown = metrics(at)
    assert shown["Head messages"] == str(bounds["head_messages"])
    assert shown["Middle messages"] == str(bounds["middle_messages"])
    assert shown["Tail messages"] == str(bounds["tail_messages"])

    click(at, "step_all")
    show_cleanup(at)  # Run all shows the last step, Fit; the fixes are Cleanup's
    shown = metrics(at)
    assert shown["Savings"] == f"{expected.savings_pct:.1f}%"
    assert shown["Tokens before"] == f"{expected.tokens_before:,}"
    assert shown["Tokens after"] == f"{expected.tokens_after:,}"
    fixes = dataframe_with(at, "fix") if expected.orphan_fixes else None
    if fixes is not None:
        assert list(fixes["fix"]) == [FIX_LABELS[fix.kind] for fix in expected.orphan_fixes]
    assert sample.title in " ".join(str(m.value) for m in at.markdown)


def test_stepping_shows_each_phase_view() -> None:
    at = open_app(sample="fix-failing-tests")
    expected = library_result("fix-failing-tests")
    assert not at.button(key="step_1").disabled
    assert at.button(key="step_3").disabled  # phases unlock one at a time

    click(at, "step_1")
    dedupe = dataframe_with(at, "kept copy #")
    assert len(dedupe) == expected.phase("prune").details["deduplicated_count"] > 0
    one_liners = dataframe_with(at, "one-line summary")
    lines = [row["line"] for row in expected.phase("prune").details["summaries"]]
    assert list(one_liners["one-line summary"]) == lines
    assert any("IntegrityError" in line for line in lines)  # the evidence survives pruning
    changes = dataframe_with(at, "change")
    assert len(changes) > 0

    click(at, "step_2")
    texts = " ".join(str(m.value) for m in at.markdown)
    assert "soft ceiling" in texts and "raw walk stopped" in texts

    click(at, "step_3")
    assert section_headers(at) == list(SECTION_NAMES)
    empty = sum(1 for name in SECTION_NAMES if expected.summary and expected.summary.is_empty(name))
    assert f"{13 - empty} filled, {empty} empty" in " ".join(str(m.value) for m in at.markdown)

    click(at, "step_4")
    captions = " ".join(str(c.value) for c in at.caption)
    assert expected.phase("assemble").details["role_reason"] in captions

    click(at, "step_5")
    assert metrics(at)["Savings"] == f"{expected.savings_pct:.1f}%"
    assert "Saved to history as run #1" in " ".join(str(c.value) for c in at.caption)
    validity = dataframe_with(at, "provider")
    assert list(validity["provider"]) == ["openai", "anthropic"]
    assert all(verdict.startswith("✅") for verdict in validity["output"])

    click(at, "step_6")
    fit = expected.phase("fit")
    assert "Fit · The result fits the window" in " ".join(str(s.value) for s in at.subheader)
    assert metrics(at)["Window"] == f"{fit.details['window']:,}"
    assert metrics(at)["Cuts"] == str(len(fit.details["cuts"]))


def test_orphan_fix_list() -> None:
    at = open_app(sample="orphans")
    click(at, "step_all")
    show_cleanup(at)
    fixes = dataframe_with(at, "fix")
    assert {"stub inserted", "result removed"} <= set(fixes["fix"])
    expected = library_result("orphans")
    assert list(fixes["call id"]) == [fix.tool_call_id for fix in expected.orphan_fixes]
    # A stub has no input message and a removed result no output position: "—", never "None".
    for column, attribute in (("input #", "message_index"), ("output #", "output_index")):
        assert list(fixes[column]) == [
            "—" if getattr(fix, attribute) is None else f"#{getattr(fix, attribute)}"
            for fix in expected.orphan_fixes
        ]


def test_parameter_change_recomputes_regions() -> None:
    at = open_app(sample="fix-failing-tests")
    before = metrics(at)["Tail messages"]
    at.slider(key="p_tail_token_ratio").set_value(0.5)
    at.run()
    assert not at.exception
    expected = library_result("fix-failing-tests", tail_token_ratio=0.5)
    tail = expected.phase("boundaries").details["tail_messages"]
    assert metrics(at)["Tail messages"] == str(tail) != before
    captions = " ".join(str(c.value) for c in at.sidebar.caption)
    assert "tail budget **32,000 tokens**" in captions  # 128,000 × 0.5 × 0.5


def test_url_parameters_set_the_config() -> None:
    at = open_app(sample="teaching-example", p_context_length="64000", p_orphan_strategy="strip")
    assert at.number_input(key="p_context_length").value == 64_000
    assert at.selectbox(key="p_orphan_strategy").value == "strip"
    expected = library_result("teaching-example", context_length=64_000, orphan_strategy="strip")
    tail = expected.phase("boundaries").details["tail_messages"]
    assert metrics(at)["Tail messages"] == str(tail)


def test_invalid_parameters_show_an_error_not_a_traceback() -> None:
    at = open_app(sample="orphans")
    at.number_input(key="p_summary_min_tokens").set_value(9_000)  # above the 8,000 maximum
    at.run()
    assert not at.exception
    assert any("summary_min_tokens must not exceed" in str(e.value) for e in at.error)


def test_history_toggle_off_saves_nothing() -> None:
    at = open_app(sample="orphans")
    at.toggle(key="p_save_history").set_value(False)
    click(at, "step_all")
    assert not any("Saved to history" in str(c.value) for c in at.caption)


def test_open_message_shows_tool_calls_with_arguments() -> None:
    at = open_app(sample="fix-failing-tests")
    expected = library_result("fix-failing-tests")
    index = next(i for i, m in enumerate(expected.phase("prune").messages) if m.get("tool_calls"))
    at.number_input(key="inspect_open").set_value(index)
    at.run()
    assert any("tool call" in str(c.value) for c in at.caption)
    assert any(code.language == "json" for code in at.code)


def test_phase_token_counts_chain_and_match_the_library() -> None:
    """Each phase starts where the previous one ended, with the library's PhaseResult numbers."""
    at = open_app(sample="fix-failing-tests")
    expected = library_result("fix-failing-tests")
    previous_after: str | None = None
    for number, phase in enumerate(expected.phases, 1):
        click(at, f"step_{number}")
        if number >= 5:
            # The final view's own before/after metrics (same labels) come after the phase's.
            cleanup = [m for m in at.metric if m.label in ("Tokens before", "Tokens after")][:2]
            shown = {m.label: str(m.value) for m in cleanup}
        else:
            shown = metrics(at)
        assert shown["Tokens before"] == f"{phase.tokens_before:,}", phase.name
        assert shown["Tokens after"] == f"{phase.tokens_after:,}", phase.name
        if previous_after is not None:
            assert shown["Tokens before"] == previous_after, phase.name
        previous_after = shown["Tokens after"]


def test_no_middle_after_phase_1_says_no_summary_instead_of_a_clamped_budget() -> None:
    at = open_app(sample="fix-failing-tests")
    at.slider(key="p_tail_token_ratio").set_value(0.4)
    at.run()
    captions = [str(c.value) for c in at.caption if "summary budget" in str(c.value)]
    assert captions == ["summary budget: no middle is left after Phase 1, so no summary is written"]
    at.slider(key="p_tail_token_ratio").set_value(0.2)
    at.run()
    captions = [str(c.value) for c in at.caption if "summary budget" in str(c.value)]
    assert len(captions) == 1 and "of the" in captions[0] and "-token middle" in captions[0]


def _agentic_run() -> list[dict[str, object]]:
    """One request, then a long run of tool calls: the request is pinned (issue 21)."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Hello."},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "Migrate the billing service."},
    ]
    for number in range(40):
        call_id = f"c{number}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "terminal", "arguments": '{"command": "make"}'},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": f"{number} ok\n" * 300}
        )
    messages.append({"role": "assistant", "content": "Done."})
    return messages


def test_the_boundary_explainer_shows_a_pinned_request_and_fit_its_own_step() -> None:
    import json

    at = open_app(p_context_length="8000")
    at.text_area(key="load_paste").set_value(json.dumps(_agentic_run()))
    click(at, "load_paste_btn")
    click(at, "step_1")
    click(at, "step_2")
    texts = " ".join(str(m.value) for m in at.markdown)
    assert "**Latest request pinned** (#3" in texts and "pinned instead" in texts
    click(at, "step_all")
    assert "6 · Fit" in [str(b.label) for b in at.button]
    # Run all lands on the result (issue 33); Fit is one pick away, its own step.
    assert "Before → after" in [str(s.value) for s in at.subheader]
    at.session_state["phase_view"] = 6
    at.run()
    assert "Fit · The result fits the window" in " ".join(str(s.value) for s in at.subheader)


def test_run_all_lands_on_the_result_with_the_summary_and_the_orphan_fixes() -> None:
    """Issue 33: Run all showed phase 6, Fit ("nothing was cut"); the 13 sections and the
    orphan fixes — what a person runs the phases for — were two clicks away."""
    at = open_app(sample="orphans")
    expected = suggested_result("orphans")
    assert expected.orphan_fixes and expected.summary is not None
    click(at, "step_all")
    headings = [str(s.value) for s in at.subheader]
    assert "Before → after" in headings
    assert not [h for h in headings if h.startswith(("Fit ·", "Phase "))]
    assert section_headers(at) == list(SECTION_NAMES)
    fixes = dataframe_with(at, "fix")
    assert list(fixes["fix"]) == [FIX_LABELS[fix.kind] for fix in expected.orphan_fixes]
    shown = metrics(at)
    assert shown["Tokens after"] == f"{expected.tokens_after:,}"
    assert shown["Savings"] == f"{expected.savings_pct:.1f}%"


def test_a_revealed_phase_button_shows_it_and_keeps_the_later_phases() -> None:
    """Issue 33: "1 · Prune" after Run all silently threw phases 2–6 away."""
    at = open_app(sample="fix-failing-tests")
    click(at, "step_all")
    click(at, "step_1")
    assert at.session_state["inspect_step"] == 6  # nothing hidden
    headings = [str(s.value) for s in at.subheader]
    assert "Phase 1 · Prune old tool outputs" in headings
    assert "Before → after" in headings  # the run's result stays below
    click(at, "step_5")
    assert "Phase 5 · Cleanup and anti-thrash" in [str(s.value) for s in at.subheader]
    assert at.session_state["inspect_step"] == 6
    click(at, "step_reset")  # only Reset starts over
    assert at.session_state["inspect_step"] == 0


def test_the_current_settings_export_as_code_for_each_adapter() -> None:
    at = open_app(sample="fix-failing-tests", p_tail_token_ratio="0.35")  # not the default
    (expander,) = [e for e in at.expander if e.label == "Use these settings in your agent"]
    python, cli, yaml, *adapters = [str(code.value) for code in expander.code]
    assert cli.startswith("compaction compress INPUT") and "compression:" in yaml
    config = python.splitlines()[-1]  # CompactionConfig(...) with what the sidebar changed
    assert config.startswith("CompactionConfig(") and "tail_token_ratio=0.35" in config
    assert len(adapters) == 3
    for code, adapter in zip(
        adapters,
        ("CompactionMiddleware(", "compaction_capability(", "CompactionFilter("),
        strict=True,
    ):
        compile(code, adapter, "exec")
        assert f"{adapter}{config}, record_to=True)" in code
