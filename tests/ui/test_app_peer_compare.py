"""AppTest of Inspect's "compare with…": a peer's policy on the loaded sample beside our result,
checked against the library — the figures, validity, and every message's fate in both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_helpers import click, library_result, open_app

from compaction.config import CompactionConfig
from compaction.lab.peers import PEERS, PeerState
from compaction.lab.samples import load_sample
from compaction.provider_rules import errors, validate
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import make_counter
from compaction.ui.peer_compare import LABELS, OURS

SAMPLE = "fix-failing-tests"


def expected_run(name: str):  # type: ignore[no-untyped-def]
    config = CompactionConfig()
    counter = make_counter(config.counter, config.model)
    messages = load_sample(SAMPLE).messages
    return PEERS[name].compact(
        messages, config.context_length, counter, ExtractiveSummarizer(), PeerState()
    )


def fates_frame(at):  # type: ignore[no-untyped-def]
    """The compare view's fate table (the only one with a role and a `differs` column)."""
    for frame in at.dataframe:
        value = frame.value
        data = getattr(value, "data", value)  # a Styler shows as its frame
        if {"role", "differs"} <= set(data.columns):
            return data
    raise AssertionError("no fate table on the page")


def test_compare_with_a_peer_shows_both_fates_side_by_side() -> None:
    at = open_app(sample=SAMPLE)
    click(at, "step_all")
    assert at.selectbox(key="inspect_compare_peer").value == "(none)"
    at.selectbox(key="inspect_compare_peer").set_value("codex")
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    ours = library_result(SAMPLE)
    theirs = expected_run("codex")
    frame = fates_frame(at)
    count = len(load_sample(SAMPLE).messages)
    assert list(frame["#"]) == list(range(count))
    assert list(frame["codex"]) == [LABELS[theirs.fates[i]] for i in range(count)]
    assert list(frame[OURS]) == [LABELS[ours.fates.get(i, "kept")] for i in range(count)]
    # Codex keeps no assistant or tool message: every one of them reads "folded" on its side.
    roles = list(frame["role"])
    codex_fates = list(frame["codex"])
    assert {codex_fates[i] for i, role in enumerate(roles) if role in ("assistant", "tool")} == {
        LABELS["folded"]
    }
    assert frame["differs"].sum() > 0

    after = [str(m.value) for m in at.metric if m.label == "Tokens after"]
    assert f"{ours.tokens_after:,}" in after and f"{theirs.tokens_after:,}" in after
    openai_ok = not errors(validate(theirs.messages, "openai"))
    verdict = "openai: accepted" if openai_ok else "openai: rejected"
    assert any(verdict in str(c.value) for c in at.caption)
    assert any("only the policy is the peer's" in str(c.value) for c in at.caption)

    at.toggle(key="peer_compare_only_changed").set_value(True)
    at.run()
    only = fates_frame(at)
    assert bool(only["differs"].all()) and len(only) == int(frame["differs"].sum())


def test_openhands_filters_what_its_condensation_cut_so_no_provider_rejects_it() -> None:
    at = open_app(sample=SAMPLE, p_context_length="16000", inspect_compare_peer="openhands")
    click(at, "step_all")
    theirs = expected_run_at("openhands", 16_000)
    shown = fates_frame(at)
    assert list(shown["openhands"]) == [LABELS[theirs.fates[i]] for i in range(len(shown))]
    # The 125-message sample condenses to 60 events, cutting through tool groups; V0's
    # ConversationMemory filters the unmatched calls and results out of the prompt.
    assert theirs.details["filtered_unmatched"] > 0
    assert len(theirs.messages) == 60 - theirs.details["filtered_unmatched"]
    assert not errors(validate(theirs.messages, "openai"))
    assert not any("openai: rejected" in str(c.value) for c in at.caption)


@pytest.fixture
def fresh_peer_runs() -> Iterator[None]:
    """The view caches each peer's run: this test's unfiltered run must neither come from an
    earlier test nor stay for a later one."""
    import streamlit as st

    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_a_peer_whose_output_a_provider_rejects_is_reported_not_repaired(
    monkeypatch: pytest.MonkeyPatch, fresh_peer_runs: None
) -> None:
    # No peer at its published settings sends an orphan any more; without its prompt filter,
    # OpenHands' condensation would, which is what this view must show and never repair.
    monkeypatch.setattr(
        "compaction.lab.peers.openhands.filter_unmatched_tool_calls",
        lambda view, origins: (list(view), list(origins), {}),
    )
    at = open_app(sample=SAMPLE, p_context_length="16000", inspect_compare_peer="openhands")
    click(at, "step_all")
    theirs = expected_run_at("openhands", 16_000)
    shown = fates_frame(at)
    assert list(shown["openhands"]) == [LABELS[theirs.fates[i]] for i in range(len(shown))]
    # The 125-message sample condenses to 60 events, cutting through tool groups: OpenAI
    # rejects the result (a call without its result, a result without its call) — shown, and
    # the output is the peer's own, not repaired.
    assert len(theirs.messages) == 60
    assert errors(validate(theirs.messages, "openai"))
    assert any("openai: rejected" in str(c.value) for c in at.caption)
    assert any("Why a provider rejects openhands" in e.label for e in at.expander)
    codes = "\n".join(str(c.value) for c in at.code)
    assert "has no tool result" in codes


def expected_run_at(name: str, window: int):  # type: ignore[no-untyped-def]
    config = CompactionConfig(context_length=window)
    counter = make_counter(config.counter, config.model)
    messages = load_sample(SAMPLE).messages
    return PEERS[name].compact(messages, window, counter, ExtractiveSummarizer(), PeerState())
