"""Decisions made from token bounds are the decisions exact counts make (issue 34).

A Compactor decides from a TokenTally (tokens/tally.py): bounds for most messages, exact counts
only where a bound cannot decide. The reference is the same Compactor given the same counts
through a counter the tally knows no bounds for, so that every decision is made from exact
counts. On generated sessions (a seeded generator: a few hundred here, thousands with `-m slow`)
and on every corpus file, both give the same result: the same boundaries, fates, output bytes,
figures and report, and the same `should_compress` answers along a growing conversation.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest
from corpus_paths import corpus_files

from compaction import CompactionConfig, Compactor, make_counter
from compaction.cache import CompactionCache
from compaction.formats import load_conversations
from compaction.messages import Message
from compaction.result import CompactionResult, without_timings
from compaction.tokens import TokenCounter
from compaction.tokens.tally import text_bounds_for


class ExactOnly:
    """A counter's counts through a counter the tally knows no bounds for (the reference)."""

    name = "exact-reference"

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner

    def count_message(self, message: Message) -> int:
        return self.inner.count_message(message)

    def count_text(self, text: str) -> int:  # the extractive summariser fits lines with it
        return int(self.inner.count_text(text))  # type: ignore[attr-defined]

    def count_messages(self, messages: Sequence[Message]) -> int:
        return self.inner.count_messages(messages)


def _report(result: CompactionResult) -> str:
    """Everything the result says, every deferred figure read (timings aside)."""
    return json.dumps(without_timings(result.to_dict()), sort_keys=True, default=repr)


def _same(config: CompactionConfig, messages: list[Message], force: bool = True) -> None:
    counter = make_counter(config.counter, config.model)
    assert text_bounds_for(counter) is not None  # the tally really decides from bounds
    certified = Compactor(config, counter=counter).compress(messages, force=force)
    reference = Compactor(config, counter=ExactOnly(counter)).compress(messages, force=force)  # type: ignore[arg-type]
    assert certified.messages == reference.messages
    assert json.dumps(certified.messages) == json.dumps(reference.messages)  # the same bytes
    assert certified.fates == reference.fates
    assert [p.fates for p in certified.phases] == [p.fates for p in reference.phases]
    assert certified.skip_reason == reference.skip_reason
    assert certified.ineffective_count == reference.ineffective_count
    assert _report(certified) == _report(reference)


# -- a generator of sessions whose bounds are loose and whose totals sit near the limits --------

_TEXTS = [
    "ran the tests, two failed in test_auth.py: AssertionError: assert 401 == 200",
    " " * 900,  # one token per 128 bytes: the loosest lower bound
    "a1" * 400,  # one token per byte: the upper bound
    "压缩上下文窗口的算法" * 40,
    "😀🎉🔥👍🏽" * 60,
    "-" * 700,
    "def handler(request):\n    return response\n" * 30,
    'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: bad\n' * 8,
]


def generated_session(rng: random.Random) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    for turn in range(rng.randrange(2, 14)):
        messages.append({"role": "user", "content": f"step {turn}: " + rng.choice(_TEXTS)[:300]})
        for call in range(rng.randrange(0, 6)):
            call_id = f"c{turn}_{call}"
            arguments = json.dumps({"command": rng.choice(_TEXTS)[: rng.randrange(5, 900)]})
            messages.append(
                {
                    "role": "assistant",
                    "content": rng.choice(["", "Let me look.", None]),
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "terminal", "arguments": arguments},
                        }
                    ],
                }
            )
            output = rng.choice(_TEXTS) * rng.randrange(1, 12)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        messages.append({"role": "assistant", "content": rng.choice(_TEXTS)[:500]})
    return messages


def generated_config(rng: random.Random, messages: list[Message]) -> CompactionConfig:
    kind, model = rng.choice([("tiktoken", "gpt-4o"), ("tiktoken", "gpt-4"), ("rough", "gpt-4o")])
    total = make_counter(kind, model).count_messages(messages)
    # Windows around the session's own total, so the threshold, window, discard and budget
    # decisions fall on either side of it (where bounds straddle and counting decides).
    window = int(total * rng.choice([0.3, 0.6, 0.95, 1.0, 1.05, 1.5, 2.2]))
    window = max(1_000, window + rng.randrange(-3, 4))
    low = rng.randrange(50, 1_500)
    return CompactionConfig(
        context_length=window,
        counter=kind,
        model=model,
        threshold_ratio=rng.choice([0.5, 0.75, 0.9, 1.0]),
        tail_token_ratio=rng.choice([0.05, 0.2, 0.4]),
        protect_first_n=rng.randrange(0, 5),
        summary_ratio=rng.choice([0.05, 0.2, 0.5]),
        summary_min_tokens=low,
        summary_max_tokens=low + rng.randrange(0, 4_000),
        ineffective_savings_pct=rng.choice([0.0, 10.0, 50.0, 95.0]),
    )


def _case(seed: int) -> None:
    rng = random.Random(seed)
    messages = generated_session(rng)
    config = generated_config(rng, messages)
    _same(config, messages, force=rng.random() < 0.7)


@pytest.mark.parametrize("seed", range(300))
def test_generated_sessions_decide_as_exact_counts_do(seed: int) -> None:
    _case(seed)


@pytest.mark.slow
def test_thousands_of_generated_sessions_decide_as_exact_counts_do() -> None:
    for seed in range(300, 3_300):
        _case(seed)


def test_an_agent_loop_decides_as_exact_counts_do() -> None:
    rng = random.Random(11)
    messages = [m for _ in range(6) for m in generated_session(rng)]
    config = CompactionConfig(context_length=6_000, summary_min_tokens=200)
    counter = make_counter("tiktoken", "gpt-4o")
    certified = Compactor(config, counter=counter)
    reference = Compactor(config, counter=ExactOnly(counter))  # type: ignore[arg-type]
    contexts: list[list[Message]] = [[], []]
    compactions = 0
    for message in messages:
        answers = []
        for position, compactor in enumerate((certified, reference)):
            contexts[position].append(message)
            answers.append(compactor.should_compress(contexts[position]))
        assert answers[0] == answers[1]
        if answers[0]:
            results = [c.compress(contexts[i]) for i, c in enumerate((certified, reference))]
            assert results[0].messages == results[1].messages
            assert results[0].fates == results[1].fates
            contexts = [list(r.messages) for r in results]
            compactions += 1
    assert compactions >= 3  # the loop did compact, again and again


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_file_decides_as_exact_counts_do(path: Any) -> None:
    for conversation in load_conversations(path)[:2]:
        messages = conversation.messages
        for window in (128_000, 16_000):
            _same(CompactionConfig(context_length=window), messages)
    if not corpus_files():
        pytest.skip("no corpus beside the project")


# -- the tally's own decision: at_least against the exact sum ------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_at_least_answers_as_the_exact_sum_does_at_every_value(seed: int) -> None:
    from compaction.tokens.tally import TokenTally

    rng = random.Random(seed)
    messages = generated_session(rng)
    counter = make_counter("tiktoken", "gpt-4o")
    exact = [counter.count_message(message) for message in messages]
    positions = sorted(rng.sample(range(len(messages)), rng.randrange(1, len(messages) + 1)))
    total = sum(exact[i] for i in positions)
    for value in {0, 1, total - 1, total, total + 1, rng.randrange(0, 2 * total + 2)}:
        fresh = make_counter("tiktoken", "gpt-4o", CompactionCache())
        tally = TokenTally(messages, fresh)
        assert tally.at_least(value, positions) == (total >= value)
        assert tally.at_least(value, positions) == (total >= value)  # again, from what it knows


def test_a_straddling_decision_counts_about_what_settles_it() -> None:
    # 400 messages of one size: bounds say 4+4..4+500 each, counts ~4+125. Reaching a value
    # 60 messages' worth of counts above the lower bounds takes ~60 counts; doubling batches
    # (16, 32, 64) counted 112. (Words joined by commas: no whitespace, so their pieces raise
    # no lower bound, and counting must settle it.)
    from compaction.tokens.tally import FIRST_BATCH, TokenTally

    text = ",".join(f"word{i % 97}" for i in range(80))[:500]
    messages: list[Message] = [{"role": "user", "content": text} for _ in range(400)]
    counter = make_counter("tiktoken", "gpt-4o", CompactionCache())
    count = counter.count_message(messages[0])
    low, _ = TokenTally(messages, counter).bounds(0)
    value = 400 * low + 60 * (count - low)
    tally = TokenTally(messages, make_counter("tiktoken", "gpt-4o", CompactionCache()))
    assert tally.at_least(value)
    counted = sum(known is not None for known in tally.known())
    assert 60 <= counted <= 60 * 1.25 + FIRST_BATCH


def test_a_decision_its_pieces_settle_counts_nothing_and_one_they_cannot_still_counts() -> None:
    """Before counting, a straddling decision raises the lower bounds by the messages' pieces
    (bounds.pieces_at_least): words between spaces settle what bytes / 128 left open."""
    from compaction.tokens.tally import TokenTally

    text = " ".join(f"word{i % 97}" for i in range(80))[:500]
    messages: list[Message] = [{"role": "user", "content": text} for _ in range(400)]
    counter = make_counter("tiktoken", "gpt-4o", CompactionCache())
    count = counter.count_message(messages[0])
    low, _ = TokenTally(messages, counter).bounds(0)
    assert count - low > 50  # bytes / 128 leaves it wide open
    reached = 400 * low + 60 * (count - low)
    tally = TokenTally(messages, make_counter("tiktoken", "gpt-4o", CompactionCache()))
    assert tally.at_least(reached)
    assert sum(known is not None for known in tally.known()) == 0
    raised = [i for i in range(400) if tally.bounds(i)[0] > low]
    assert 0 < len(raised) < 400  # raised until it was settled, and no further
    assert all(tally.bounds(i)[0] <= count for i in range(400))  # each still a lower bound
    # Above the total: only counting can bring the upper bound down; the answer is exact.
    above = TokenTally(messages, make_counter("tiktoken", "gpt-4o", CompactionCache()))
    assert not above.at_least(400 * count + 1)
    assert above.at_least(400 * count)


def _short_and_long(long_text: str) -> list[Message]:
    short = [{"role": "tool", "tool_call_id": f"c{i}", "content": "ok " * 20} for i in range(2_000)]
    long: list[Message] = [{"role": "user", "content": long_text} for _ in range(10)]
    return short[:1_000] + long + short[1_000:]


def test_a_decision_its_long_messages_settle_bounds_no_other_message() -> None:
    """Many short messages and a few long ones: read in order, the long ones' pieces reach the
    value (TokenTally._long_messages_reach); only they are raised, the messages after them are
    never read, and nothing is counted."""
    from compaction.tokens.bounds import MESSAGE_OVERHEAD
    from compaction.tokens.tally import TokenTally

    messages = _short_and_long(" ".join(f"word{i}" for i in range(2_000)))
    counter = make_counter("tiktoken", "gpt-4o", CompactionCache())
    value = MESSAGE_OVERHEAD * len(messages) + 5_000  # about 3 long messages' pieces
    tally = TokenTally(messages, counter)
    assert tally.at_least(value)
    assert all(known is None for known in tally.known())
    bounded = [i for i, found in enumerate(tally._bounds) if found is not None]
    assert tally._raised and tally._raised < set(range(1_000, 1_010))
    assert bounded == list(range(max(tally._raised) + 1))  # read in order, stopped when reached
    exact = [counter.count_message(message) for message in messages]
    assert sum(exact) >= value
    assert all(tally.bounds(i)[0] <= exact[i] <= tally.bounds(i)[1] for i in bounded)


@pytest.mark.parametrize("spaced", [True, False], ids=["words", "no-whitespace"])
def test_a_decision_the_long_messages_leave_open_is_still_exact(spaced: bool) -> None:
    """Where the long messages' pieces cannot reach the value (text without whitespace has few
    pieces; a value above the total), the try gives up and the decision is the exact sum's."""
    from compaction.tokens.tally import TokenTally

    joiner = " " if spaced else ","
    messages = _short_and_long(joiner.join(f"word{i}" for i in range(2_000)))
    counter = make_counter("tiktoken", "gpt-4o", CompactionCache())
    total = sum(counter.count_message(message) for message in messages)
    for value in (total // 2, total - 1, total, total + 1):
        tally = TokenTally(messages, make_counter("tiktoken", "gpt-4o", CompactionCache()))
        assert tally.at_least(value) == (total >= value), value
        assert tally.at_least(value) == (total >= value), value  # again, from what it knows
