"""The auto-compaction replay: where events land, what the context holds after each, and that
one Compactor carries the summary from one compaction to the next."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest
from timeline_sessions import (
    CONSTRAINT,
    ERROR_LINE,
    FIRST_PATH,
    coding_session,
    filler,
    group,
    over_window_session,
    small_config,
)

from compaction.compactor import INEFFECTIVE_REASON
from compaction.config import CompactionConfig
from compaction.errors import ConfigError, InvalidConversationError, SummarizationError
from compaction.formats import Conversation
from compaction.lab.drift import diff_sections, drift, summary_facts, summary_paths
from compaction.lab.timeline import (
    EFFECTIVE,
    FALLBACK,
    SKIPPED,
    may_compact_after,
    simulate,
)
from compaction.summarizers.base import OnToken, SummaryRequest
from compaction.summary import SECTION_NAMES
from compaction.tokens import make_counter

COUNTER = make_counter("rough")


def test_context_never_exceeds_the_window_after_a_compaction() -> None:
    config = small_config()
    timeline = simulate(coding_session(), config)
    compactions = timeline.compactions
    assert len(compactions) >= 2
    for event in compactions:
        assert event.tokens_after <= config.context_length
        assert event.tokens_after < event.tokens_before
        # The step records what the compaction left, and it is the compacted context's real size.
        step = timeline.steps[event.step]
        assert step.tokens == event.tokens_after
        assert step.tokens == COUNTER.count_messages(event.result.messages)
        assert step.context_messages == len(event.result.messages)
    # The sawtooth drops vertically at each compaction: two points at the event's step.
    xs, ys = timeline.sawtooth()
    assert len(xs) == len(timeline.steps) + len(compactions)
    for event in compactions:
        at = [y for x, y in zip(xs, ys, strict=True) if x == event.step]
        assert at == [event.tokens_before, event.tokens_after]


def test_events_are_exactly_where_the_threshold_is_crossed_at_a_model_call() -> None:
    config = small_config()
    messages = coding_session()
    timeline = simulate(messages, config)
    # Recount from scratch: the running total must equal a full count of the replayed context.
    context: list[dict[str, object]] = []
    for step in timeline.steps:
        context.append(messages[step.index])
        assert step.peak_tokens == COUNTER.count_messages(context)
        eligible = step.peak_tokens >= config.threshold_tokens and may_compact_after(
            messages, step.index
        )
        assert (step.event is not None) == eligible, step
        if step.event is not None:
            event = timeline.events[step.event]
            assert event.step == step.index
            assert event.tokens_before == step.peak_tokens
            context = list(event.result.messages)
    # Never inside a tool group: the message after an event's step is not a tool result.
    for event in timeline.events:
        following = event.step + 1
        assert following == len(messages) or messages[following]["role"] != "tool"


def test_compaction_waits_for_the_tool_results_of_the_group() -> None:
    config = small_config()
    messages = coding_session()
    # A parallel call whose two big results push the context over the threshold mid-group.
    call_a, call_b = (
        group("pa", "read_file", {"path": "a.py"}, ""),
        group("pb", "read_file", {"path": "b.py"}, ""),
    )
    parallel = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call_a[0]["tool_calls"][0], call_b[0]["tool_calls"][0]],
    }
    start = [*messages[:3], parallel]
    start.append({"role": "tool", "tool_call_id": "pa", "content": filler("a", 400)})
    start.append({"role": "tool", "tool_call_id": "pb", "content": filler("b", 400)})
    start.append({"role": "user", "content": "Thanks, go on."})
    timeline = simulate(start, config)
    assert timeline.steps[4].peak_tokens >= config.threshold_tokens  # crossed at the first result
    assert timeline.steps[4].event is None  # ... but the group's second result is still due
    assert timeline.steps[5].event == 0  # compacted once both results are in
    assert timeline.events[0].step == 5


def test_iterative_summaries_carry_the_previous_facts() -> None:
    timeline = simulate(coding_session(), small_config())
    first, second = timeline.compactions[:2]
    assert first.iterative is False
    assert second.iterative is True
    assert first.summary is not None and second.summary is not None
    assert list(first.summary) == list(SECTION_NAMES)
    first_text = "\n".join(first.summary.values())
    second_text = "\n".join(second.summary.values())
    # The file written before the first compaction is still known after the second.
    assert FIRST_PATH in summary_paths(first_text)
    assert FIRST_PATH in second_text
    # So is the user's goal with its constraint.
    assert CONSTRAINT in first_text and CONSTRAINT in second_text


def test_input_is_not_mutated_and_conversation_objects_are_accepted() -> None:
    messages = coding_session()
    before = copy.deepcopy(messages)
    timeline = simulate(Conversation(messages=messages, format="openai"), small_config())
    assert messages == before
    assert len(timeline.steps) == len(messages)


def test_below_the_threshold_nothing_happens() -> None:
    timeline = simulate(coding_session(2), small_config(context_length=100_000))
    assert timeline.events == []
    assert all(step.tokens == step.peak_tokens for step in timeline.steps)
    xs, ys = timeline.sawtooth()
    assert xs == [step.index for step in timeline.steps]
    assert ys == [step.peak_tokens for step in timeline.steps]


def test_anti_thrash_suspension_is_one_event_and_no_further_calls() -> None:
    # Every compaction counts as ineffective: after the first, automatic compaction stops.
    config = small_config(ineffective_savings_pct=99.0, max_ineffective=1)
    messages = coding_session(12)
    timeline = simulate(messages, config)
    assert [event.outcome for event in timeline.events] == ["ineffective", SKIPPED]
    suspended = timeline.events[1]
    assert suspended.skip_reason == INEFFECTIVE_REASON
    later = [
        step
        for step in timeline.steps
        if step.index >= suspended.step
        and step.peak_tokens >= config.threshold_tokens
        and may_compact_after(messages, step.index)
    ]
    assert suspended.attempts == len(later) > 1
    assert suspended.last_step == later[-1].index
    assert all(step.event == 1 for step in later)
    # The context keeps growing once compaction is suspended.
    assert timeline.steps[-1].tokens > timeline.steps[suspended.step].tokens


class DownSummarizer:
    """A summariser whose model is down: every call fails the way the LLM summariser fails."""

    name = "down"

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        raise SummarizationError("the model is down", kind="failed")


def test_a_failed_summary_is_a_fallback_event_and_the_replay_goes_on() -> None:
    timeline = simulate(coding_session(), small_config(), DownSummarizer())
    assert timeline.summarizer == "down"
    compactions = timeline.compactions
    assert compactions and all(event.outcome == FALLBACK for event in compactions)
    assert compactions[0].fallback_used == "static"
    assert "the model is down" in (compactions[0].fallback_reason or "")
    assert compactions[0].summary is None
    assert drift(timeline) == []  # a static marker is not a summary version


def test_to_dict_is_json_ready_and_rows_are_plain() -> None:
    timeline = simulate(coding_session(), small_config())
    data = json.loads(json.dumps(timeline.to_dict(include_results=True)))
    assert data["window"] == 8_000 and data["threshold"] == 4_000
    assert data["outcomes"][EFFECTIVE] == len(timeline.compactions)
    assert len(data["steps"]) == len(timeline.steps)
    assert data["events"][1]["iterative"] is True
    assert "result" in data["events"][0]
    assert "summary" not in timeline.event_rows()[0]
    assert "result" not in timeline.to_dict()["events"][0]


def test_bad_input_raises_a_library_error() -> None:
    with pytest.raises(InvalidConversationError):
        simulate([{"role": "wizard", "content": "hi"}], small_config())
    with pytest.raises(TypeError, match="list of messages"):
        simulate("not a conversation", small_config())
    with pytest.raises(ConfigError, match=r"config must be a CompactionConfig .* got str"):
        simulate(coding_session(), "cfg")  # type: ignore[arg-type]


# -- drift ---------------------------------------------------------------------------------------


def version(number: int, step: int, **sections: str) -> SimpleNamespace:
    named = {name: sections.get(name.split()[0].lower(), "None.") for name in SECTION_NAMES}
    return SimpleNamespace(number=number, step=step, summary=named)


def test_drift_lists_the_fact_that_vanished() -> None:
    first = version(
        0,
        10,
        relevant="- src/auth/login_handler.py — written\n- docs/setup.md — read",
        blocked=f"- pytest failed: {ERROR_LINE}",
        constraints=f"- {CONSTRAINT}",
        critical="Deployed 3f9a2c1b to https://staging.example.com (v2.4.1)",
    )
    second = version(
        1,
        20,
        relevant="- src/auth/login_handler.py — written",
        # The error moved section: it did not vanish.
        critical=f"Known: {ERROR_LINE}. Deployed 3f9a2c1b to https://staging.example.com",
        constraints=f"- {CONSTRAINT}",
    )
    [entry] = drift([first, SimpleNamespace(number=5, step=15, summary=None), second])
    assert (entry.version, entry.event, entry.previous_event, entry.step) == (1, 1, 0, 20)
    vanished = {(fact.category, fact.text) for fact in entry.vanished}
    assert vanished == {("paths", "docs/setup.md"), ("identifiers", "v2.4.1")}
    assert set(entry.changed_sections) == {"Blocked", "Relevant Files", "Critical Context"}
    relevant = next(diff for diff in entry.sections if diff.name == "Relevant Files")
    assert relevant.removed == ["- docs/setup.md — read"] and relevant.added == []
    assert "-- docs/setup.md — read" in relevant.diff
    assert json.loads(json.dumps(entry.to_dict()))["vanished"][0]["section"]


def test_drift_finds_constraints_that_were_dropped() -> None:
    first = version(0, 1, constraints=f"- {CONSTRAINT}\n- Prefer small commits.")
    second = version(1, 2, constraints="- Prefer small commits.")
    [entry] = drift([first, second])
    assert [(f.category, f.text) for f in entry.vanished] == [("constraints", CONSTRAINT)]


def test_drift_over_a_real_timeline_compares_consecutive_summaries() -> None:
    timeline = simulate(coding_session(12), small_config())
    entries = drift(timeline)
    versions = [event for event in timeline.events if event.summary]
    assert len(entries) == len(versions) - 1 >= 1
    for entry in entries:
        before = timeline.events[entry.previous_event].summary
        after = timeline.events[entry.event].summary
        assert before is not None and after is not None
        assert [diff.name for diff in entry.sections] == list(SECTION_NAMES)
        assert entry.sections == diff_sections(before, after)
        after_text = "\n".join(after.values()).lower()
        for fact in entry.vanished:
            assert fact.text.lower() not in after_text
            assert fact in summary_facts(before)


def test_summary_paths_skip_urls_versions_and_attributes() -> None:
    text = "Edited src/app/main.py and config.toml; users.email failed; https://x.org/a/b v1.2.3"
    assert summary_paths(text) == ["src/app/main.py", "config.toml"]
    # A slashed label and prose alternatives are not paths; a bare two-part path still is.
    labelled = "- Files modified/created: tests/conftest.py, and/or src/app"
    assert summary_paths(labelled) == ["tests/conftest.py", "src/app"]


def test_a_context_left_over_the_window_is_flagged_not_hidden() -> None:
    # The latest request alone is larger than the window: it is never cut, so no compaction can
    # bring the context under the window, and the events must say so.
    messages = over_window_session()
    config = small_config()
    timeline = simulate(messages, config)
    last = timeline.events[-1]
    assert last.tokens_after > config.context_length
    assert last.over_window and last.to_dict()["over_window"] is True
    assert last.request_exceeds_window and last.to_dict()["request_exceeds_window"] is True
    assert "the latest user request alone take" in (last.cannot_fit or "")
    assert all(e.over_window == (e.tokens_after > config.context_length) for e in timeline.events)


def test_a_huge_tool_output_in_the_tail_is_cut_to_fit_the_window() -> None:
    # Issue 21: a tool output larger than the window in the protected tail used to outlive every
    # compaction; Fit cuts it, so no model call after a compaction is over the window.
    from timeline_sessions import huge_output_session

    config = small_config()
    timeline = simulate(huge_output_session(), config)
    assert timeline.compactions
    assert timeline.turns_over_window() == []
    assert not any(event.over_window for event in timeline.compactions)
    last = timeline.compactions[-1]
    assert last.fit_cuts >= 1 and last.largest_fit_cut > 0
    assert timeline.to_dict()["turns_over_window"] == 0


def test_over_the_window_compaction_runs_although_anti_thrash_suspended_it() -> None:
    # Issue 21: a tail budget nearly the window's size makes every compaction ineffective, so
    # anti-thrash suspends automatic compaction; once the context is over the window the provider
    # would reject the call, so the replay compacts anyway (forced) and every call fits.
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for turn in range(30):
        messages.append({"role": "user", "content": f"u{turn} " + "word " * 240})
        messages.append({"role": "assistant", "content": f"a{turn} " + "text " * 240})
    config = CompactionConfig(
        context_length=8_000, tail_token_ratio=1.0, tail_soft_factor=1.9, counter="rough"
    )
    timeline = simulate(messages, config)
    forced = [event for event in timeline.events if event.forced]
    assert forced and all(not event.skipped for event in forced)
    assert all(event.to_dict()["forced"] for event in forced)
    assert timeline.turns_over_window() == []


def test_a_replay_that_opens_with_orphan_results_skips_until_a_call_arrives() -> None:
    # compress() refuses a context of nothing but orphan results (issue 21); a replay whose
    # transcript opens with them records a skip with that reason instead of failing.
    log = "orphan output line\n" * 3_000
    messages: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": "ghost", "content": log},
        {"role": "user", "content": "What was that?"},
        {"role": "assistant", "content": "A log from an earlier session."},
    ]
    config = CompactionConfig(context_length=8_000, counter="rough")
    timeline = simulate(messages, config)
    assert timeline.events[0].skipped
    assert "nothing of the conversation survives" in (timeline.events[0].skip_reason or "")
