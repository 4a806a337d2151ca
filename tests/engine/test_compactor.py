"""The Compactor end to end on small conversations: skips (below threshold, nothing to compress,
anti-thrash), fallbacks through a real failing summariser, fates and origins, the system note
over two compactions, iterative updates, and the JSON report."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from engine_helpers import assistant, big, coding_session, system, tool, user

from compaction import CompactionConfig, Compactor, compress
from compaction.compactor import INEFFECTIVE_REASON
from compaction.errors import ConfigError, InvalidConversationError, SummarizationError
from compaction.lab.samples import SAMPLES_DIR
from compaction.phases.outcome import NOTHING_TO_COMPRESS
from compaction.result import FOLDED, KEPT, PHASE_NAMES, REMOVED, SUMMARISED
from compaction.summarizers.base import OnToken, StaticSummarizer, SummaryRequest
from compaction.summary import SECTION_NAMES, SUMMARY_PREFIX, SYSTEM_NOTE, static_marker
from compaction.text.one_liners import STUB_RESULT

CONFIG = CompactionConfig(context_length=2_000, counter="rough")


class BrokenSummarizer:
    """A real summariser whose model is always down."""

    name = "broken"

    def __init__(self, fallback: str = "static") -> None:
        self.fallback = fallback
        self.calls = 0

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        self.calls += 1
        raise SummarizationError("summary model unavailable", kind="unavailable")


def assert_consistent(result: Any, count: int) -> None:
    """Every output message maps back to an input index (or was inserted), every input index has
    a final fate, and nothing in the output is a tool result without its call."""
    assert set(result.fates) == set(range(count))
    last = result.phases[-1]
    assert len(last.origins) == len(result.messages)
    for origin in last.origins:
        assert origin is None or 0 <= origin < count
    kept = {o for o in last.origins if o is not None}
    for index, fate in result.fates.items():
        if fate == FOLDED:
            assert index not in kept
    call_ids = {c["id"] for m in result.messages for c in m.get("tool_calls") or []}
    result_ids = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
    assert set(result_ids) == call_ids
    assert len(result_ids) == len(set(result_ids))


def test_forced_compaction_end_to_end() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    before = copy.deepcopy(messages)
    result = compress(messages, CONFIG)
    assert messages == before
    assert not result.skipped
    assert [p.name for p in result.phases] == list(PHASE_NAMES)
    assert result.messages[:3] == [
        {**messages[0], "content": f"{messages[0]['content']}\n\n{SYSTEM_NOTE}"},
        messages[1],
        messages[2],
    ]
    assert result.messages[3]["content"].startswith(SUMMARY_PREFIX + "\n## Active Task\n")
    assert result.summary is not None and list(result.summary.sections) == list(SECTION_NAMES)
    # The last user message survives whole; here the head ends with an assistant and the tail
    # starts with that user message, so neither role fits and the summary is merged into it.
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    assert result.phase("assemble").details["merged_into"] == last_user
    merged = result.messages[3]
    assert merged["role"] == "user"
    assert merged["content"].endswith("\n\n" + messages[last_user]["content"])
    assert result.tokens_before > result.tokens_after
    assert result.savings_pct == pytest.approx(
        (result.tokens_before - result.tokens_after) / result.tokens_before * 100
    )
    assert result.tokens_after == Compactor(CONFIG).count_tokens(result.messages)
    assert_consistent(result, len(messages))
    assert FOLDED in result.fates.values()
    assert result.fates[0] == "note_added"


def test_fates_record_pruning_of_folded_messages_as_folded() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    result = compress(messages, CONFIG)
    prune = result.phase("prune")
    summarised = [i for i, f in prune.fates.items() if f == SUMMARISED]
    assert summarised
    for index in summarised:
        assert result.fates[index] in (FOLDED, SUMMARISED)


def test_below_threshold_auto_is_skipped() -> None:
    messages = coding_session(turns=1, output_chars=100)
    result = Compactor(CONFIG).compress(messages)
    assert result.skipped
    assert result.skip_reason is not None
    assert result.skip_reason.startswith("below the threshold: ")
    assert "< 1,000 (50% of 2,000)" in result.skip_reason
    assert result.messages == messages
    assert set(result.fates.values()) == {KEPT}
    assert not Compactor(CONFIG).should_compress(messages)


def test_nothing_to_compress() -> None:
    messages = [system(), user("hi"), assistant("hello"), user("bye")]
    result = compress(messages, CONFIG)
    assert result.skipped
    assert result.skip_reason == NOTHING_TO_COMPRESS == "nothing to compress"
    assert result.messages == messages
    names = [p.name for p in result.phases]
    assert names[:2] == ["prune", "boundaries"]
    assert "summarize" not in names


def test_nothing_to_compress_still_names_the_repairs_it_made() -> None:
    # The audit's in/orphan_result.json: a result whose call never existed. Nothing is left to
    # summarise, but the output lost that result, and the skip reason must say so plainly.
    messages = [system(), user("hi"), tool("nope", "result"), assistant("done")]
    result = compress(messages, CONFIG)
    assert result.skipped
    assert result.messages == [messages[0], messages[1], messages[3]]
    assert result.skip_reason == (
        "nothing to compress, but the input was repaired: removed the tool result for call "
        "'nope', message 2: its call was never in the input"
    )
    assert [fix.reason for fix in result.orphan_fixes] == ["its call was never in the input"]
    assert result.fates[2] == REMOVED


def test_a_skip_reason_lists_at_most_three_repairs() -> None:
    ghosts = [tool(f"ghost{n}", "result") for n in range(5)]
    result = compress([system(), user("hi"), *ghosts, assistant("done")], CONFIG)
    assert result.skip_reason is not None
    assert result.skip_reason.count("removed the tool result") == 3
    assert result.skip_reason.endswith("; and 2 more (see orphan_fixes)")
    assert len(result.orphan_fixes) == 5


def ineffective_conversation() -> list[dict[str, Any]]:
    """Over the threshold, but nearly all of it is the protected tail."""
    return [
        system(),
        user("start"),
        assistant("ok"),
        user("tiny middle"),
        assistant("tiny reply"),
        user(big("the latest request", 5_000)),
        assistant("reading it"),
    ]


def test_anti_thrash_skips_the_third_automatic_compaction() -> None:
    compactor = Compactor(CONFIG, StaticSummarizer())
    messages = ineffective_conversation()
    assert compactor.should_compress(messages)
    first = compactor.compress(messages)
    assert not first.skipped and first.savings_pct < 10
    assert first.ineffective_count == 1 and first.suggestion is None
    second = compactor.compress(messages)
    assert second.ineffective_count == 2
    assert second.suggestion is not None
    assert not compactor.should_compress(messages)
    third = compactor.compress(messages)
    assert third.skipped
    assert third.skip_reason == "ineffective compression — consider starting a new session (/new)"
    assert third.skip_reason == INEFFECTIVE_REASON
    forced = compactor.compress(messages, force=True)
    assert not forced.skipped
    # A good compaction resets the count.
    good = compactor.compress(coding_session(turns=8, output_chars=2_000), force=True)
    assert good.savings_pct >= 10
    assert good.ineffective_count == 0
    assert compactor.ineffective_count == 0


def test_failing_summariser_falls_back_to_the_static_marker() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    broken = BrokenSummarizer()
    result = compress(messages, CONFIG, broken)
    assert broken.calls == 1
    assert result.fallback_used == "static"
    assert result.fallback_reason == "unavailable: summary model unavailable"
    middle = result.phase("summarize").details["turns"]
    marker = static_marker(middle)
    assert any(str(m.get("content")).startswith(marker) for m in result.messages)
    assert result.summary is None
    assert_consistent(result, len(messages))


def test_failing_summariser_falls_back_to_extractive_when_asked() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    result = compress(messages, CONFIG, BrokenSummarizer(fallback="extractive"))
    assert result.fallback_used == "extractive"
    assert result.summary is not None
    assert any(str(m.get("content")).startswith(SUMMARY_PREFIX) for m in result.messages)


def test_second_compaction_is_iterative_and_notes_once() -> None:
    compactor = Compactor(CONFIG)
    messages = coding_session(turns=8, output_chars=2_000)
    first = compactor.compress(messages, force=True)
    grown = first.messages + coding_session(turns=6, output_chars=2_000)[3:]
    second = compactor.compress(grown, force=True)
    assert second.iterative
    assert "PREVIOUS SUMMARY:" in second.phase("summarize").details["prompt"]
    assert second.messages[0]["content"].count(SYSTEM_NOTE) == 1
    assert sum(str(m.get("content")).startswith(SUMMARY_PREFIX) for m in second.messages) == 1
    assert_consistent(second, len(grown))


def test_focus_reaches_the_prompt_and_the_result() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    result = compress(messages, CONFIG, focus="module 3")
    assert result.focus == "module 3"
    assert "FOCUS TOPIC: module 3" in result.phase("summarize").details["prompt"]


def test_missing_results_are_stubbed_in_the_output() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    del messages[-2]  # the last call loses its result
    result = compress(messages, CONFIG)
    stubs = [m for m in result.messages if m.get("content") == STUB_RESULT]
    assert len(stubs) == 1
    assert any(f.kind == "inserted_stub" for f in result.orphan_fixes)
    assert_consistent(result, len(messages))


def test_to_dict_is_json_serialisable() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    messages[-2] = {**messages[-2], "tool_call_id": "lost"}
    result = compress(messages, CONFIG)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["messages_before"] == len(messages)
    assert data["messages_after"] == len(result.messages)
    assert data["summary"]["Active Task"]
    assert [p["name"] for p in data["phases"]] == list(PHASE_NAMES)
    assert data["orphan_fixes"]
    assert data["config"]["threshold_tokens"] == 1_000
    skipped = Compactor(CONFIG).compress(coding_session(turns=1, output_chars=10))
    assert json.loads(json.dumps(skipped.to_dict()))["skipped"] is True


def test_repairs_are_reported_and_invalid_input_rejected() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    messages[4] = {**messages[4], "content": 7}
    result = compress(messages, CONFIG)
    assert result.repairs == ["message 4: numeric content converted to text"]
    with pytest.raises(InvalidConversationError) as info:
        compress([*messages, {"role": "robot", "content": "x"}], CONFIG)
    assert info.value.index == len(messages)


def test_when_pruning_alone_fits_the_tail_the_pruned_conversation_is_the_result() -> None:
    # A small tail budget prunes more, and the one-liners then all fit the tail: the result is
    # Phase 1's work, not a skip (a smaller tail must never compact less than a larger one).
    from compaction import load_conversation

    messages = load_conversation(SAMPLES_DIR / "fix-failing-tests.openai.json").messages
    small_tail = compress(messages, CompactionConfig(tail_token_ratio=0.1))
    assert not small_tail.skipped
    assert [p.name for p in small_tail.phases] == ["prune", "boundaries", "cleanup", "fit"]
    assert small_tail.summary is None
    assert small_tail.tokens_after < small_tail.tokens_before * 0.5
    assert small_tail.phase("cleanup").details["note"].startswith("After Phase 1")


def test_a_summary_that_would_grow_the_context_is_discarded() -> None:
    # Twelve one-line turns: the summary's headings and framing alone outweigh the whole middle.
    messages = [system()] + [
        message
        for turn in range(6)
        for message in (user(f"question {turn}: is the cache warm?"), assistant(f"answer {turn}."))
    ]
    compactor = Compactor(CompactionConfig(context_length=1_000, tail_token_ratio=0.1))
    result = compactor.compress(messages, force=True)
    assert [p.name for p in result.phases] == [
        "prune",
        "boundaries",
        "summarize",
        "cleanup",
        "fit",
    ]
    assert result.tokens_after <= result.tokens_before
    assert result.messages == messages  # nothing to prune: the input comes back whole
    assert result.summary is None and compactor.previous_summary is None
    assert set(result.fates.values()) == {KEPT}  # nothing is reported as folded
    summarize = result.phase("summarize").details
    assert summarize["discarded"].startswith("With the summary spliced in the context would grow")
    assert SECTION_NAMES[0] in summarize["summary_text"]  # still there to look at
    assert result.phase("cleanup").details["note"] == summarize["discarded"]
    assert result.phase("cleanup").details["ineffective"] is True
    assert_consistent(result, len(messages))


def test_facts_of_tail_outputs_cut_to_one_line_reach_the_summary() -> None:
    # The orphans sample at a 16K window: Phase 2's tail reaches back over Phase 1's one-liners,
    # so a 32K-character pytest log and a 37K-character journal sit in the tail as one line each.
    # Their identifiers leave the context as surely as the middle's do; the summary keeps them.
    from compaction import load_conversation

    messages = load_conversation(SAMPLES_DIR / "orphans.openai.json").messages
    result = Compactor(CompactionConfig(context_length=16_000)).compress(messages, force=True)
    tail_start = result.phase("boundaries").details["tail_start"]
    assert tail_start < 23  # the two big outputs (23, 25) are in the tail...
    pruned = result.phase("prune")
    assert pruned.fates[23] == SUMMARISED and pruned.fates[25] == SUMMARISED  # ...as one-liners
    assert result.phase("summarize").details["pruned_tail_outputs"] >= 2
    assert result.summary is not None
    critical = result.summary.sections["Critical Context"]
    assert "https://staging.tasklog.dev/" in critical
    assert "8.2.2" in critical and "1.5.0" in critical  # pytest's and pluggy's, from the log


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"config": "x"}, "config must be a CompactionConfig .* got str"),
        ({"config": {}}, "config must be a CompactionConfig .* got dict"),
        ({"summarizer": 1}, "summarizer must have a summarize.* got int"),
        ({"counter": 1}, "counter must be a TokenCounter .* got int"),
    ],
)
def test_a_wrong_component_is_named_when_the_compactor_is_built(
    arguments: dict[str, Any], expected: str
) -> None:
    # Not an AttributeError from inside a phase on the first compress().
    with pytest.raises(ConfigError, match=expected):
        Compactor(**arguments)


def test_focus_must_be_text() -> None:
    messages = coding_session(turns=8, output_chars=2_000)
    with pytest.raises(ConfigError, match=r"focus must be a topic as text .* got int"):
        Compactor(CONFIG).compress(messages, focus=5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (None, "expected a list of messages, got NoneType"),
        ([1], "message 0: expected a message object, got int"),
    ],
)
def test_should_compress_rejects_what_compress_rejects(messages: Any, expected: str) -> None:
    with pytest.raises(InvalidConversationError, match=expected):
        Compactor(CONFIG).should_compress(messages)
    assert Compactor(CONFIG).should_compress([]) is False


def test_anti_thrash_yields_when_the_context_is_over_the_window() -> None:
    # An agent whose context is over its window cannot make its next call: waiting for a manual
    # compaction is not an option then, so automatic compaction runs (and Fit makes it fit).
    from compaction import CompactionConfig, Compactor
    from compaction.compactor import INEFFECTIVE_REASON

    config = CompactionConfig(context_length=2_000, counter="rough", max_ineffective=1)
    big = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "summarise the log"},
        {"role": "assistant", "content": "x " * 6_000},
        {"role": "user", "content": "and now?"},
    ]
    compactor = Compactor(config)
    compactor.ineffective_count = config.max_ineffective  # suspended
    under = [big[0], big[1], {"role": "assistant", "content": "y " * 3_000}, big[3]]
    assert not compactor.should_compress(under)  # at the threshold, under the window: waits
    assert compactor.compress(under).skip_reason == INEFFECTIVE_REASON
    assert compactor.should_compress(big)
    result = compactor.compress(big)
    assert not result.skipped and result.forced_over_window
    assert result.tokens_after <= config.context_length
    assert result.to_dict()["forced_over_window"] is True
