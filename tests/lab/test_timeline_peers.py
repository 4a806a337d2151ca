"""Timeline replays with a peer's trigger and policy: when hermes, OpenHands, Codex and Gemini
would have compacted, and observation masking's context at every step."""

from __future__ import annotations

import json
from typing import Any

from timeline_sessions import coding_session

from compaction.config import CompactionConfig
from compaction.lab.peers import PEERS, ObservationMasking, make_peer
from compaction.lab.timeline import may_compact_after, simulate_peer
from compaction.tokens import TokenCounter, make_counter

CONFIG = CompactionConfig(context_length=8_000, counter="rough")
ROUGH = make_counter("rough")


def first_crossing(
    messages: list[dict[str, Any]], threshold: int, counter: TokenCounter = ROUGH
) -> int:
    """The first model call at which the running count reaches `threshold`."""
    total = 0
    for index, message in enumerate(messages):
        total += counter.count_message(message)
        if total >= threshold and may_compact_after(messages, index):
            return index
    raise AssertionError("the threshold is never reached")


def test_hermes_compacts_where_its_own_estimate_reaches_075_of_the_window() -> None:
    messages = coding_session(16)
    timeline = simulate_peer(messages, PEERS["hermes"], CONFIG)
    assert timeline.policy == "hermes" and timeline.threshold == 6_000  # 0.75 under 512K
    assert timeline.events, "the session crosses the threshold"
    assert timeline.events[0].step == first_crossing(messages, 6_000)
    first = timeline.events[0]
    assert not first.skipped and first.tokens_after < first.tokens_before
    # The step after an event starts from what hermes left, not from the whole transcript.
    step = timeline.steps[first.step]
    assert step.tokens == first.tokens_after and step.context_messages == first.messages_after
    assert json.loads(json.dumps(timeline.to_dict()))["policy"] == "hermes"


def test_openhands_compacts_when_the_event_count_passes_max_size() -> None:
    messages = coding_session(16)
    openhands = make_peer("openhands", {"max_size": 30, "keep_first": 4})
    timeline = simulate_peer(messages, openhands, CompactionConfig(context_length=10**6))
    assert timeline.trigger == "events" and timeline.threshold == 30
    expected = next(
        i for i in range(len(messages)) if i + 1 > 30 and may_compact_after(messages, i)
    )
    assert timeline.events[0].step == expected
    # Condensed to max_size // 2 = 15 events (less the call or result of a tool group cut at
    # either edge, which V0's prompt builder filters out); the token window played no part.
    assert 13 <= timeline.events[0].messages_after <= 15
    later = [event.messages_before for event in timeline.events[1:]]
    assert all(count > 30 for count in later)


def test_codex_and_gemini_compact_at_their_share_of_the_window() -> None:
    messages = coding_session(16)
    config = CompactionConfig(context_length=8_000)
    counter = make_counter(config.counter, config.model)
    codex = simulate_peer(messages, PEERS["codex"], config)
    assert codex.threshold == 7_200
    assert codex.events[0].step == first_crossing(messages, 7_200, counter)
    gemini = simulate_peer(messages, PEERS["gemini-cli"], config)
    assert gemini.threshold == 4_000
    assert gemini.events[0].step == first_crossing(messages, 4_000, counter)
    assert gemini.events[0].step < codex.events[0].step


def test_observation_masking_has_no_events_and_masks_at_every_step() -> None:
    messages = coding_session(16)
    masking = ObservationMasking(window_turns=3)
    timeline = simulate_peer(messages, masking, CONFIG)
    assert timeline.events == [] and timeline.trigger == "none"
    counter = make_counter("rough")
    whole = masking.compact(messages, 8_000, counter, None)  # type: ignore[arg-type]
    assert timeline.steps[-1].tokens == whole.tokens_after
    halfway = len(messages) // 2
    part = masking.compact(messages[: halfway + 1], 8_000, counter, None)  # type: ignore[arg-type]
    assert timeline.steps[halfway].tokens == part.tokens_after
