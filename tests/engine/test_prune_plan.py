"""Phase 1's plan (phases/prune.py `_Plan`): what a run decided about each message, kept in the
conversation's memo and applied again by a re-run with other budgets. A run that applies a
kept plan must give exactly what a run that reads every message gives — the same messages, the
same fates in the same order, the same report — whatever budgets, pins and settings the runs
before it had, and a plan must never outlive the messages it was made of."""

from __future__ import annotations

import copy
import random
from typing import Any

from benchmark_scripts import load_benchmark
from engine_helpers import assistant, big, call, calls, system, tool, user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import CompactionConfig, Compactor
from compaction.cache import CompactionCache
from compaction.phases.prune import prune
from compaction.result import Fate, PhaseResult
from compaction.tokens import RoughCounter

COUNTER = RoughCounter()


generate_session = load_benchmark("session_gen").generate_session


def with_duplicates_and_reused_ids(messages: list[dict[str, Any]], seed: int) -> list[Any]:
    """`messages` (copied) where some tool outputs repeat an earlier one word for word, and
    some calls reuse an earlier call's id, as real agents' records do."""
    rng = random.Random(seed)
    messages = copy.deepcopy(messages)
    tools = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    for _ in range(len(tools) // 6):
        earlier, later = sorted(rng.sample(tools, 2))
        messages[later]["content"] = messages[earlier]["content"]
    answered: list[str] = []
    for message in messages:
        if message.get("role") != "tool":
            continue
        reused = answered and rng.random() < 0.15
        for one in [] if not reused else _calls_answered_by(messages, message):
            one["id"] = message["tool_call_id"] = rng.choice(answered)
        answered.append(message["tool_call_id"])
    return messages


def _calls_answered_by(messages: list[dict[str, Any]], result: dict[str, Any]) -> list[Any]:
    return [
        one
        for message in messages
        for one in message.get("tool_calls") or []
        if one.get("id") == result["tool_call_id"]
    ][:1]


def report(result: PhaseResult) -> dict[str, Any]:
    """Everything a reader of the phase sees, lazily made rows included, in their order."""
    return {
        "messages": result.messages,
        "fates": list(result.fates.items()),
        "details": {key: result.details[key] for key in result.details},
        "tokens_after": result.tokens_after,
    }


configs = st.builds(
    lambda first, window, tail, min_chars, keep: CompactionConfig(
        context_length=window,
        protect_first_n=first,
        tail_token_ratio=tail,
        counter="rough",
        prune_min_chars=min_chars,
        args_keep_chars=keep,
    ),
    first=st.integers(1, 8),
    window=st.sampled_from([4_000, 16_000, 64_000]),
    tail=st.sampled_from([0.05, 0.1, 0.2, 0.35, 0.5]),
    min_chars=st.sampled_from([200, 200, 200, 1_000]),  # mostly one plan, sometimes another
    keep=st.sampled_from([200, 200, 50]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(20, 400),
    seed=st.integers(0, 10_000),
    runs=st.lists(configs, min_size=2, max_size=6),
    pins=st.lists(st.integers(0, 399), max_size=4),
)
def test_a_rerun_applying_the_kept_plan_gives_what_reading_every_message_gives(
    size: int, seed: int, runs: list[CompactionConfig], pins: list[int]
) -> None:
    messages = with_duplicates_and_reused_ids(generate_session(size, seed), seed)
    tokens = [COUNTER.count_message(message) for message in messages]
    pinned = {pin for pin in pins if pin < size}
    memo: dict[Any, Any] = {}
    for config in runs:
        kept = prune(messages, config, COUNTER, tokens, pinned=pinned, memo=memo)
        fresh = prune(messages, config, COUNTER, tokens, pinned=pinned)
        assert report(kept) == report(fresh)


def test_a_plan_is_made_once_per_settings_and_walks_on_where_a_later_tail_starts() -> None:
    messages = generate_session(300, 3)
    tokens = [COUNTER.count_message(message) for message in messages]
    memo: dict[Any, Any] = {}
    long_tail = CompactionConfig(context_length=16_000, tail_token_ratio=0.5, counter="rough")
    short_tail = long_tail.replace(tail_token_ratio=0.05)
    first = prune(messages, long_tail, COUNTER, tokens, memo=memo)
    (plan,) = memo.values()
    walked = plan._walked
    assert walked == first.details["protected_tail_start"]
    second = prune(messages, short_tail, COUNTER, tokens, memo=memo)
    assert list(memo.values()) == [plan]  # the same plan, walked further
    assert plan._walked == second.details["protected_tail_start"] > walked
    assert report(prune(messages, long_tail, COUNTER, tokens, memo=memo)) == report(first)

    other = prune(messages, long_tail.replace(prune_min_chars=5_000), COUNTER, tokens, memo=memo)
    assert len(memo) == 2  # other settings: a plan of their own
    assert report(other) == report(
        prune(messages, long_tail.replace(prune_min_chars=5_000), COUNTER, tokens)
    )


def test_a_plan_is_not_applied_to_other_messages() -> None:
    """A memo handed messages the plan was not made of (a message replaced, one appended)
    makes a new plan: a kept decision about a message that is not there would be false."""
    messages = [
        system(),
        user("Fix the parser."),
        calls(call("c1", "read_file", {"path": "parser.py"})),
        tool("c1", big("parser.py v1", 3_000)),
        calls(call("c2", "read_file", {"path": "parser.py"})),
        tool("c2", big("parser.py v1", 3_000)),  # a duplicate of c1's output
        assistant("Read it twice."),
        user("Now the lexer."),
        calls(call("c3", "read_file", {"path": "lexer.py"})),
        tool("c3", big("lexer.py", 3_000)),
        assistant("Done."),
        user("Thanks."),
    ]
    config = CompactionConfig(context_length=2_000, protect_first_n=2, counter="rough")
    memo: dict[Any, Any] = {}
    tokens = [COUNTER.count_message(message) for message in messages]
    assert 3 in prune(messages, config, COUNTER, tokens, memo=memo).fates

    changed = list(messages)
    changed[5] = tool("c2", big("parser.py v2", 3_000))  # no longer a duplicate
    tokens = [COUNTER.count_message(message) for message in changed]
    kept = prune(changed, config, COUNTER, tokens, memo=memo)
    assert report(kept) == report(prune(changed, config, COUNTER, tokens))
    assert kept.details["deduplicated_count"] == 0


def test_each_run_hands_out_messages_of_its_own() -> None:
    """A caller may edit a result's messages in place: that must not reach the next run's."""
    messages = generate_session(200, 5)
    config = CompactionConfig(
        context_length=8_000, counter="rough", args_max_chars=100, args_keep_chars=50
    )
    tokens = [COUNTER.count_message(message) for message in messages]
    memo: dict[Any, Any] = {}
    first = prune(messages, config, COUNTER, tokens, memo=memo)
    expected = copy.deepcopy(report(prune(messages, config, COUNTER, tokens)))
    assert first.fates
    for index in first.fates:
        message = first.messages[index]
        message["content"] = "edited"
        for one in message.get("tool_calls") or []:
            one["function"]["arguments"] = "edited"
    assert report(prune(messages, config, COUNTER, tokens, memo=memo)) == expected


def test_compress_reruns_share_the_plan_and_see_an_edit_in_place() -> None:
    """Through Compactor: re-runs with other budgets (a new Compactor each, one cache) apply
    the first run's plan; an output edited in place between runs is read again."""
    messages = generate_session(400, 9)
    cache = CompactionCache()
    config = CompactionConfig(context_length=16_000)
    Compactor(config, cache=cache).compress(messages, force=True)
    memo = cache.conversation.memo  # type: ignore[attr-defined]
    (plan,) = memo.values()
    rerun = config.replace(tail_token_ratio=0.1, protect_first_n=4)
    result = Compactor(rerun, cache=cache).compress(messages, force=True)
    assert list(cache.conversation.memo.values()) == [plan]  # type: ignore[attr-defined]
    assert result.messages == Compactor(rerun).compress(messages, force=True).messages

    cut = next(i for i, fate in result.phases[0].fates.items() if fate == Fate.CUT_TO_ONE_LINE)
    messages[cut]["content"] = "short now"  # edited in place: the check sees it
    again = Compactor(rerun, cache=cache).compress(messages, force=True)
    assert cut not in again.phases[0].fates
    assert again.messages == Compactor(rerun).compress(messages, force=True).messages
    assert plan not in cache.conversation.memo.values()  # type: ignore[attr-defined]


def test_threads_sharing_one_memo_each_get_what_a_fresh_run_gives() -> None:
    """The app's sessions share one cache: runs with other budgets may apply one plan at once,
    one of them walking it further while another reads it."""
    import sys
    import threading

    messages = generate_session(400, 21)
    tokens = [COUNTER.count_message(message) for message in messages]
    configs = [
        CompactionConfig(context_length=16_000, tail_token_ratio=ratio, counter="rough")
        for ratio in (0.5, 0.3, 0.1, 0.05)
    ]
    expected = [report(prune(messages, config, COUNTER, tokens)) for config in configs]
    failures: list[str] = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        for _ in range(15):
            memo: dict[Any, Any] = {}

            def run(position: int, memo: dict[Any, Any] = memo) -> None:
                try:
                    got = prune(messages, configs[position], COUNTER, tokens, memo=memo)
                    if report(got) != expected[position]:
                        failures.append(f"config {position}: another output")
                except Exception as exc:
                    failures.append(f"config {position}: {exc!r}")

            threads = [threading.Thread(target=run, args=(i % 4,)) for i in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert failures == []
