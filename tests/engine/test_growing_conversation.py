"""The agent loop's incremental check: the same answers as a full check, each message read once.

`GrowingConversation.check` must give exactly what `validate_messages` gives at every length of
a growing conversation (repairs included, in the same order), re-check only what was appended,
and notice an earlier message edited in place.
"""

from __future__ import annotations

import copy
import operator
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_files as all_corpus_files
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction import CompactionConfig, Compactor
from compaction.cache import CompactionCache
from compaction.errors import InvalidConversationError
from compaction.input.checks import validate_messages
from compaction.input.growing import (
    GrowingConversation,
    check_and_count_once,
    check_once,
    remember_checked,
)
from compaction.phases.regions import plan_regions
from compaction.result import without_timings
from compaction.tokens import RoughCounter

CACHE = CompactionCache()  # the check and counts a re-run with other budgets reuses


def call(call_id: str, name: str = "read_file", arguments: Any = '{"path": "a.py"}') -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def repairing_conversation() -> list[dict[str, Any]]:
    """A conversation that needs every kind of repair, spread along its length."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug \ud800 in auth."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "content": "first"},  # no id: paired by position with c1
        {"role": "tool", "tool_call_id": "c2", "content": None},
        {"role": "assistant", "content": 42, "tool_calls": [call("c1", arguments={"x": 1})]},
        {"role": "tool", "tool_call_id": "c1", "content": "reused id"},  # renamed c1_2
        {"role": "assistant", "content": "", "tool_calls": [call("", arguments="NaN")]},
        {"role": "tool", "tool_call_id": "call_missing_7_0", "content": "x" * 300},
        {"role": "user", "content": ["bare string part", {"type": "text", "text": "ok"}]},
        {"role": "assistant", "content": "Done.", "tool_calls": []},
    ]


def test_every_prefix_checks_as_a_full_check_would() -> None:
    conversation = repairing_conversation()
    growing = GrowingConversation()
    for length in range(1, len(conversation) + 1):
        prefix = conversation[:length]
        checked, repairs, reused = growing.check(prefix)
        assert (checked, repairs) == validate_messages(prefix)
        assert reused == length - 1  # only the appended message was checked again


def test_an_earlier_message_edited_in_place_is_checked_again() -> None:
    conversation = repairing_conversation()
    growing = GrowingConversation()
    growing.check(conversation)
    conversation[2]["tool_calls"].append(call("c3"))  # a nested edit, same message object
    checked, repairs, reused = growing.check(conversation)
    assert reused == 0
    assert (checked, repairs) == validate_messages(conversation)
    conversation[1]["content"] = "replaced text"
    checked, _, reused = growing.check(conversation)
    assert reused == 0 and checked[1]["content"] == "replaced text"


def test_a_replaced_or_removed_message_starts_over() -> None:
    conversation = repairing_conversation()
    growing = GrowingConversation()
    growing.check(conversation)
    shorter = conversation[:-2]
    assert growing.check(shorter)[2] == 0
    swapped = [*shorter[:3], dict(shorter[3]), *shorter[4:]]  # equal, but another object
    checked, repairs, reused = growing.check(swapped)
    assert reused == 0 and (checked, repairs) == validate_messages(swapped)


def test_a_rejected_message_raises_the_full_checks_error_and_leaves_no_stale_state() -> None:
    conversation = repairing_conversation()[:3]
    growing = GrowingConversation()
    growing.check(conversation)
    bad = [*conversation, {"role": "robot", "content": "?"}]
    with pytest.raises(InvalidConversationError) as raised:
        growing.check(bad)
    with pytest.raises(InvalidConversationError) as full:
        validate_messages(bad)
    assert str(raised.value) == str(full.value)
    assert growing.check(conversation)[2] == 0  # started over after the failure


def test_remember_false_reuses_but_keeps_nothing_new() -> None:
    conversation = repairing_conversation()
    growing = GrowingConversation()
    growing.check(conversation[:4])
    longer = conversation[:6]
    checked, repairs, reused = growing.check(longer, remember=False)
    assert (checked, repairs) == validate_messages(longer) and reused == 0
    assert growing.check(conversation[:4], remember=False)[2] == 4
    assert growing.check(longer)[2] == 4  # the remembered prefix is still the first four


def test_a_region_plan_reuses_the_current_caches_check_and_sees_an_edit() -> None:
    # The app plans the regions again on every slider move, with its cache current.
    conversation = repairing_conversation()
    config = CompactionConfig(context_length=1_000, protect_first_n=1)
    cache = CompactionCache()
    plain = plan_regions(conversation, config)  # no cache current: a full check
    with cache.active():
        first = plan_regions(conversation, config)
        assert cache.conversation.conversation.holds(conversation)  # remembered
        again = plan_regions(conversation, config.replace(tail_token_ratio=0.3))
        assert check_once(conversation)[2] == len(conversation)  # the plans reused it
        conversation[1]["content"] = "Fix the bug \udfff in the login form."  # edited in place
        edited = plan_regions(conversation, config)
    assert (first.messages, first.repairs, first.tokens) == (
        plain.messages,
        plain.repairs,
        plain.tokens,
    )
    assert again.messages == plain.messages and again.repairs == plain.repairs
    assert (edited.messages, edited.repairs) == validate_messages(conversation)
    assert "login form" in edited.messages[1]["content"]


def test_the_checked_list_is_the_callers_to_keep() -> None:
    conversation = repairing_conversation()
    growing = GrowingConversation()
    first, _, _ = growing.check(conversation)
    first.clear()
    second, _, _ = growing.check(conversation)
    assert second == validate_messages(conversation)[0]


def test_should_compress_counts_an_edited_message_again() -> None:
    compactor = Compactor(CompactionConfig(context_length=1_000), counter=RoughCounter())
    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "short"},
    ]
    assert not compactor.should_compress(conversation)
    conversation[1]["content"] = "x" * 4_000  # a streamed message grew in place: 1,000 tokens
    assert compactor.should_compress(conversation)
    conversation.append({"role": "assistant", "content": "y" * 10})
    assert compactor.should_compress(conversation)
    tally = compactor._checked_and_counted(conversation)[2]
    assert sum(tally) == compactor.count_tokens(conversation)
    # What it remembers counted is each message's count (the rest is counted when needed).
    assert all(
        count is None or count == compactor.counter.count_message(message)
        for count, message in zip(compactor._counts, conversation, strict=True)
    )


def test_agent_loop_decisions_match_a_fresh_compactor_each_step() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "agent"}]
    for turn in range(100):
        messages.append({"role": "user", "content": f"step {turn}: run the tests"})
        messages.append(
            {"role": "assistant", "content": "Running.", "tool_calls": [call(f"c{turn}")]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "ok " * 150})
    config = CompactionConfig(context_length=8_000)
    looping = Compactor(config, counter=RoughCounter())
    context: list[dict[str, Any]] = []
    for message in messages:
        context.append(message)
        fresh = Compactor(config, counter=RoughCounter())
        fresh.ineffective_count = looping.ineffective_count
        decision = looping.should_compress(context)
        assert decision == fresh.should_compress(context)
        if decision:
            result = looping.compress(context)
            if not result.skipped:
                context = list(result.messages)


@pytest.mark.parametrize(
    "node",
    [
        "plain",
        "café",
        "lone \ud800 high",
        {"role": "user", "content": "x"},
        {"\udc00": 1},
        {"content": [{"type": "text", "text": "ok"}, {"type": "text", "text": "a\udfffb"}]},
        {"tool_calls": [{"function": {"name": "n", "arguments": '{"k": "é"}'}}]},
        {"tool_calls": [{"function": {"name": "n\ud801", "arguments": "{}"}}]},
        {"k": 3.0, "t": ("\ud800",)},
    ],
)
def test_the_quick_surrogate_test_agrees_with_the_repair(node: Any) -> None:
    from compaction.input.checks import _holds_surrogates, _without_surrogates
    from compaction.input.snapshot import snapshot

    assert _holds_surrogates(node) == (_without_surrogates(node)[1] > 0)
    # The cache's check finds them by the snapshot's walk, which searches only its suspects.
    suspects: list[Any] = []
    taken = snapshot(node, suspects)
    assert any(map(_holds_surrogates, suspects)) == _holds_surrogates(node)
    assert snapshot(node) == taken == node  # taken without the suspects: the same copy


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "lone \ud800 high", "\udc01": ("\ud802",)},
        {"role": "user", "content": [{"type": "text", "text": "a\udfffb"}, "bare \ud800"]},
        {"role": "user", "content": "café \ud800", ("t",): 1, 2: "é"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "n\ud801"}}]},
    ],
)
def test_the_cache_check_repairs_surrogates_as_the_plain_check_does(message: Any) -> None:
    conversation = [{"role": "system", "content": "s"}, message]
    assert check_once(conversation, CompactionCache())[:2] == validate_messages(conversation)


# -- the cache's check: a re-run with other budgets is a new Compactor given the same cache -----


def test_a_conversation_checked_again_in_the_process_is_reused_unchanged() -> None:
    conversation = repairing_conversation()
    first = check_once(conversation, CACHE)
    assert first[:2] == validate_messages(conversation)
    # Remembered from the first sighting (by snapshots): the first re-run checks nothing
    # again, as the later ones do.
    second = check_once(list(conversation), CACHE)  # another list, the same message objects
    assert second == (first[0], first[1], len(conversation))
    assert all(map(operator.is_, second[0], first[0]))  # the very messages the check gave
    third = check_once(list(conversation), CACHE)
    assert third[:2] == first[:2]
    assert third[2] == len(conversation)
    longer = [*conversation, {"role": "user", "content": "one more"}]
    assert check_once(longer, CACHE) == (*validate_messages(longer), len(conversation))


def test_a_snapshot_differs_after_every_edit_in_place_and_only_then() -> None:
    from compaction.input.snapshot import snapshot

    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}],
        "tool_calls": [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}],
    }
    taken = snapshot(message)
    assert message == taken == snapshot(message, [])
    edits = [
        lambda m: m["content"][0].update(text="b"),  # a leaf deep inside
        lambda m: m["content"].append({"type": "text", "text": "c"}),  # a list grows
        lambda m: m["tool_calls"][0]["function"].pop("arguments"),  # a key goes
        lambda m: m.update(name="x"),  # a key comes
        lambda m: m.update(content=[[{"type": "text", "text": "a"}]]),  # nesting changes
        lambda m: m.update(content=[]),
    ]
    for edit in edits:
        edited = {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}],
            "tool_calls": [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}],
        }
        assert edited == taken  # an equal message, built anew
        edit(edited)
        assert edited != taken
        edit(message)  # the very message the snapshot was taken of: no dict or list shared
        assert message != taken
        message = copy.deepcopy(taken)
        taken = snapshot(message)


def test_the_process_wide_check_sees_edits_in_place_even_of_a_repaired_copy() -> None:
    conversation = repairing_conversation()
    check_once(conversation, CACHE)
    checked, _, _ = check_once(conversation, CACHE)  # remembered from the first sighting on
    conversation[9]["content"].append("another bare string")  # an input edited in place
    checked, repairs, reused = check_once(conversation, CACHE)
    assert reused == 0
    assert (checked, repairs) == validate_messages(conversation)
    # Message 1 was repaired (a lone surrogate): the check hands out a copy. Someone editing
    # that copy in place must not get the edit back from the next check.
    checked, _, reused = check_once(conversation, CACHE)  # the edited conversation, remembered
    assert reused == len(conversation)
    checked[1]["content"] = "edited by a caller"
    checked, repairs, reused = check_once(conversation, CACHE)
    assert reused == 0
    assert (checked, repairs) == validate_messages(conversation)
    assert checked[1]["content"] != "edited by a caller"


def test_compactors_on_the_same_messages_give_what_fresh_checks_give() -> None:
    conversation = repairing_conversation() * 3  # long enough that several compactions differ
    config = CompactionConfig(context_length=2_000, counter="rough")
    first = Compactor(config).compress(conversation, force=True)
    again = Compactor(config.replace(tail_token_ratio=0.1)).compress(conversation, force=True)
    fresh = Compactor(config.replace(tail_token_ratio=0.1))
    fresh_checked, fresh_repairs = validate_messages(conversation)
    assert again.repairs == fresh_repairs == first.repairs
    assert [m.get("role") for m in fresh_checked] == [m.get("role") for m in conversation]
    assert fresh.compress(conversation, force=True).messages == again.messages


def test_the_process_wide_counts_are_each_messages_tokens_and_follow_edits() -> None:
    counter = RoughCounter()
    conversation = repairing_conversation()
    checked, _, counts = check_and_count_once(conversation, counter, CACHE)
    assert list(counts) == [counter.count_message(message) for message in checked]
    assert check_and_count_once(list(conversation), counter, CACHE)[2] is counts  # reused
    conversation[0]["content"] = "You are a coding agent. " * 50  # an edit in place
    checked, _, counts = check_and_count_once(conversation, counter, CACHE)
    assert list(counts) == [counter.count_message(message) for message in checked]
    longer = [*conversation, {"role": "user", "content": "and one more thing " * 30}]
    checked, _, counts = check_and_count_once(longer, counter, CACHE)
    assert list(counts) == [counter.count_message(message) for message in checked]
    other = RoughCounter()  # another counter never gets the first one's counts
    theirs = check_and_count_once(longer, other, CACHE)[2]
    assert theirs is not counts and list(theirs) == list(counts)


# -- a property: whatever happens to the messages between calls, the answer is a fresh one ------

_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["again", "copy list", "append", "edit text", "edit call", "replace"]),
        st.integers(min_value=0, max_value=30),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(edits=_EDITS)
def test_the_process_wide_check_and_counts_always_equal_a_fresh_check(
    edits: list[tuple[str, int]],
) -> None:
    """Re-runs reuse the last conversation's check and counts; edits in place, appends and
    replaced messages between the calls must never show through as a stale answer."""
    counter = RoughCounter()
    conversation: list[dict[str, Any]] = repairing_conversation()
    for action, position in edits:
        at = position % len(conversation)
        if action == "copy list":
            conversation = list(conversation)
        elif action == "append":
            conversation.append({"role": "user", "content": f"step {position} " * position})
        elif action == "edit text":
            message = conversation[at]
            if isinstance(message.get("content"), str):
                message["content"] += " (edited)"
        elif action == "edit call":
            for call_ in conversation[at].get("tool_calls") or []:
                call_["function"]["arguments"] = '{"path": "edited.py"}'
        elif action == "replace":
            conversation[at] = {**conversation[at], "content": f"replaced {position}"}
        checked, repairs, counts = check_and_count_once(conversation, counter, CACHE)
        assert (checked, repairs) == validate_messages(conversation)
        assert list(counts) == [counter.count_message(message) for message in checked]


# -- after a compaction the agent goes on from the result: checked once, not again --------------

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def test_the_next_call_after_a_compaction_checks_only_what_was_appended() -> None:
    conversation = repairing_conversation() * 4
    compactor = Compactor(CompactionConfig(context_length=2_000), counter=RoughCounter())
    result = compactor.compress(conversation, force=True)
    assert not result.skipped
    context = [*result.messages, {"role": "user", "content": "and now the docs"}]
    checked, repairs, reused = compactor._conversation.check(context)
    assert reused == len(result.messages)  # the compacted context was adopted, not re-checked
    assert (checked, repairs) == validate_messages(context)
    assert list(compactor._checked_and_counted(context)[2]) == [
        compactor.counter.count_message(message) for message in checked
    ]
    # An adopted message edited in place is checked and counted again.
    context[-2]["content"] = "an edit in place " * 40
    assert compactor.should_compress(context) == (
        compactor.count_tokens(validate_messages(context)[0]) >= compactor.config.threshold_tokens
    )
    assert all(  # what it remembers counted is each message's count, the edited one's too
        count is None or count == compactor.counter.count_message(message)
        for count, message in zip(compactor._counts, context, strict=True)
    )
    assert compactor._conversation.check(context)[2] == len(context)


def _compressed_outputs() -> list[tuple[str, list[dict[str, Any]]]]:
    from compaction.formats import load_conversations

    outputs = []
    samples = [("repairing", repairing_conversation() * 4)]
    if CORPUS.is_dir():
        for path in all_corpus_files((".json", ".jsonl")):
            for conversation in load_conversations(path):
                samples.append((path.name, conversation.messages))
    for name, messages in samples:
        for window in (2_000, 32_000):
            config = CompactionConfig(context_length=window, counter="rough")
            result = Compactor(config).compress(messages, force=True)
            if not result.skipped:
                outputs.append((f"{name} at {window:,}", result.messages))
    return outputs


def test_a_compactions_output_adopted_is_what_a_check_of_it_gives() -> None:
    """What `GrowingConversation.adopt` relies on: validate_messages changes nothing in
    compress's output (no repair, no copy, only its notes on arguments a provider rejects), on
    every corpus session and on one that needs every repair."""
    outputs = _compressed_outputs()
    assert len(outputs) >= 2
    noted = 0
    for name, messages in outputs:
        checked, repairs = validate_messages(messages)
        assert all(map(operator.is_, checked, messages)), name
        growing = GrowingConversation()
        assert growing.adopt(messages), name
        assert growing.check(messages) == (checked, repairs, len(messages)), name
        later = [*messages, {"role": "user", "content": "go on"}]
        assert growing.check(later) == (*validate_messages(later), len(messages)), name
        noted += bool(repairs)
    assert noted  # the NaN arguments of the repairing conversation are still said aloud


def test_an_importers_output_remembered_as_checked_is_what_a_check_of_it_gives() -> None:
    """What the command line relies on when it tells the process-wide check that the
    importer's messages are checked (`remember_checked`): validating them again changes
    nothing, and the compress that follows gives what it gives when it checks them itself."""
    from compaction.formats import load_conversations

    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    loaded = 0
    for path in all_corpus_files((".json", ".jsonl")):
        for conversation in load_conversations(path):
            messages = conversation.messages
            checked, repairs = validate_messages(messages)
            assert all(map(operator.is_, checked, messages)), path.name
            config = CompactionConfig(context_length=32_000, counter="rough")
            check_once([{"role": "user", "content": "another conversation"}], CACHE)  # forget it
            itself = without_timings(Compactor(config).compress(messages, force=True).to_dict())
            assert remember_checked(messages, CACHE), path.name
            assert check_once(messages, CACHE) == (checked, repairs, len(messages)), path.name
            assert remember_checked(messages, CACHE), path.name
            told = without_timings(Compactor(config).compress(messages, force=True).to_dict())
            assert told == itself, path.name
            loaded += 1
    assert loaded >= 18


def test_remembered_messages_that_need_a_repair_are_not_remembered() -> None:
    messages = repairing_conversation()
    checked, _ = validate_messages(messages)
    assert not remember_checked([*checked[:3], {"role": "tool", "content": "orphan"}], CACHE)
    assert check_once(messages, CACHE)[2] == 0  # nothing was remembered: checked in full
