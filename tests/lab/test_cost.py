"""lab/cost: the recorded calls priced against a hand computation from the raw files (litellm's
bundled map read directly), the calibration, the window, each compaction's price, and the notes
for what cannot be priced."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import usage_by_hand as by_hand
from corpus_paths import corpus_path

from compaction.errors import ConfigError
from compaction.formats import load_conversation, load_conversations
from compaction.formats.conversation import Conversation, ModelCall
from compaction.lab.cost.calibration import calibrate, effective_window
from compaction.lab.cost.ledger import session_cost
from compaction.lab.cost.pricing import UNKNOWN_PRICE, PriceBook, parse_price

SPOTTER = "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SHIP = "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl"
FILES: list[tuple[str, Callable[[Path], list[by_hand.Hand]]]] = [
    (SPOTTER, by_hand.claude_code),
    ("claudecode-claudereliability-py2rust__transcript.jsonl", by_hand.claude_code),
    ("claudecode-yatra__claude-session.jsonl", by_hand.claude_code),
    (
        "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d__subagents__agent-a881341.jsonl",
        by_hand.claude_code,
    ),
    (SHIP, lambda path: by_hand.codex(path)[0]),
    ("codex-empireofbits__codex-session.jsonl", lambda path: by_hand.codex(path)[0]),
    ("gemini-vibecodingtracker__test_conversation_gemini.json", by_hand.gemini_json),
    ("gemini-vibecodingtracker__test_conversation_gemini.jsonl", by_hand.gemini_jsonl),
    (
        "opencode-dark-factory__session__curious-sailor__ses_39b7f9e89ffe7J0WzLzYrUt4eW.json",
        by_hand.opencode,
    ),
    (
        "opencode-dark-factory__session__nimble-pixel__ses_39b4c1891ffezxPVc5OPmcqF33.json",
        by_hand.opencode,
    ),
]


def _path(name: str) -> Path:
    path = corpus_path(name)
    if path is None:
        pytest.skip(f"corpus file {name} is absent (a fresh clone has no ../shared/corpus*)")
    return path


def _cost_map() -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    cost_map: dict[str, Any] = litellm.model_cost
    return cost_map


@pytest.mark.parametrize(("name", "read"), FILES, ids=[name[:40] for name, _ in FILES])
def test_every_call_is_priced_as_by_hand_from_the_raw_file(
    name: str, read: Callable[[Path], list[by_hand.Hand]]
) -> None:
    path = _path(name)
    expected = [by_hand.dollars(hand, _cost_map()[hand.model]) for hand in read(path)]
    cost = session_cost(load_conversations(path)[0])
    assert [c.usd for c in cost.calls] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert cost.total() == pytest.approx(sum(expected), rel=1e-9)
    assert cost.unpriced == 0


def test_spotter_costs_what_its_calls_add_up_to_and_reads_most_of_it_from_the_cache() -> None:
    path = _path(SPOTTER)
    cost = session_cost(load_conversation(path))
    hands = by_hand.claude_code(path)
    assert cost.tokens("read") == sum(h.read for h in hands)
    assert cost.tokens("write") == sum(h.write for h in hands)
    assert cost.hit_ratio == pytest.approx(
        sum(h.read for h in hands) / sum(h.prompt for h in hands)
    )
    # Per turn and cumulative: the turns add up to the session, the last cumulative is it.
    turns = cost.turns()
    assert sum(t["calls"] for t in turns) == len(cost.calls) == 152
    assert turns[-1]["cumulative_usd"] == pytest.approx(cost.total())
    assert cost.cumulative()[-1] == pytest.approx(cost.total())


def test_the_compaction_is_priced_by_what_the_next_call_wrote_instead_of_read() -> None:
    path = _path(SPOTTER)
    conversation = load_conversation(path)
    (item,) = session_cost(conversation).compactions
    hands = by_hand.claude_code(path)
    after = next(c for c in conversation.calls if c.position > item.position)
    hand = next(h for h in hands if h.call_id == after.call_id)
    entry = _cost_map()["claude-opus-4-6"]
    uncached = hand.prompt - hand.read
    assert item.uncached_after == uncached == 12_500
    billed = by_hand.dollars(hand, entry) - hand.read * entry["cache_read_input_token_cost"]
    billed -= hand.output * entry["output_cost_per_token"]
    assert item.invalidated_usd == pytest.approx(
        billed - uncached * entry["cache_read_input_token_cost"]
    )
    assert item.tokens_before_recorded == 167_094
    assert "acompact" in item.note  # its summary call is not in this file


def test_an_unknown_model_is_an_unknown_price_never_zero_and_an_override_prices_it() -> None:
    path = _path("claudecode-agenticwallet__claude-session.jsonl")
    conversation = load_conversation(path)
    cost = session_cost(conversation)
    assert cost.total() is None and cost.unpriced == 2
    assert all(c.usd is None for c in cost.calls)
    assert UNKNOWN_PRICE in cost.total_line() and "--price" in cost.notes[0]
    model = conversation.calls[0].model
    assert model is not None
    priced = session_cost(conversation, PriceBook.from_specs([f"{model}=1,2,1.25,0.1"]))
    hands = by_hand.claude_code(path)
    assert priced.total() == pytest.approx(sum(h.prompt * 1e-6 + h.output * 2e-6 for h in hands))


def test_price_overrides_are_checked_with_messages_a_user_can_act_on() -> None:
    price = parse_price("my-model=3,15,3.75,0.3,6")
    assert price.per_million() == {
        "input": 3.0,
        "output": 15.0,
        "cache_write": 3.75,
        "cache_read": 0.3,
        "cache_write_1h": 6.0,
    }
    for bad in ("my-model", "my-model=1,2", "=1,2,3,4", "m=a,b,c,d", "m=1,2,3,-4"):
        with pytest.raises(ConfigError, match="--price"):
            parse_price(bad)


def test_missing_usage_backwards_clocks_and_unplaced_usage_are_notes_not_crashes() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": "two"},
    ]
    calls = [
        ModelCall(
            1, 2_000, 0, 2_000, 10, model="claude-sonnet-4-6", timestamp="2026-01-01T00:10:00Z"
        ),
        ModelCall(3, None, model="claude-sonnet-4-6", timestamp="2026-01-01T00:05:00Z"),
        ModelCall(3, 2_100, 2_000, 100, 5, model=None),
    ]
    conversation = Conversation(messages=messages, format="claude-code", calls=calls)
    cost = session_cost(conversation)
    notes = " ".join(cost.notes)
    assert "backwards" in notes and "no prompt tokens" in notes and "name no model" in notes
    assert cost.calls[1].usd is None and cost.calls[2].usd is None
    assert cost.total() == pytest.approx(2_000 * 3.75e-6 + 10 * 15e-6)
    # A file without usage: said, and nothing priced.
    empty = session_cost(Conversation(messages=messages, format="openai"))
    assert empty.total() is None and "no provider usage" in " ".join(empty.notes)


# -- calibration and the window ----------------------------------------------------------------


def test_the_hidden_prompt_is_seen_at_the_first_call_and_the_drift_is_measured() -> None:
    conversation = load_conversation(_path(SPOTTER))
    calibration = calibrate(conversation)
    first = calibration.rows[0]
    assert first.recorded == conversation.calls[0].input_tokens == 25_882
    assert calibration.hidden == pytest.approx(
        first.recorded - calibration.ratio * first.counted, abs=1
    )
    assert 1.1 < calibration.ratio < 1.5  # tiktoken counts fewer tokens than Claude's tokenizer
    assert calibration.error() is not None and calibration.error() < 0.05
    assert "does not show" in calibration.hidden_line()


def test_the_window_is_inferred_from_where_the_agent_compacted_or_taken_as_recorded() -> None:
    spotter = effective_window(load_conversation(_path(SPOTTER)))
    assert spotter.window == 200_000 and spotter.litellm_window == 1_000_000
    assert spotter.trigger_share == pytest.approx(167_094 / 200_000)
    assert "17%" in spotter.line() and "inferred" in spotter.source
    ship = effective_window(load_conversation(_path(SHIP)))
    assert ship.window == 258_400 and ship.source == "recorded by the agent"
    assert ship.triggers == (227_252,)


def test_a_session_without_usage_gives_a_report_that_says_so() -> None:
    from compaction.lab.cost.report import cost_report

    data = Path(__file__).resolve().parents[1] / "formats" / "data" / "hermes_session.json"
    report = cost_report(load_conversation(data))
    assert report.scenarios == [] and report.check is None
    assert any("no call records a prompt" in note for note in report.notes)
    json.dumps(report.to_dict())  # serialisable as it is
