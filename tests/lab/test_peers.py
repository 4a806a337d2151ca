"""The peers' policies on hand-made conversations where the published rule decides the outcome,
asserting exactly what each keeps; their parameters and triggers; every peer over the corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_files as all_corpus_files

from compaction.errors import CompactionError, ConfigError
from compaction.formats import load_conversations
from compaction.lab.peers import (
    PEER_NAMES,
    PEERS,
    PLACEHOLDER,
    TRUNCATED,
    Codex,
    GeminiCli,
    Hermes,
    ObservationMasking,
    OpenHands,
    PeerState,
    make_peer,
    run_at_target,
)
from compaction.lab.peers.codex import HANDOFF_PREAMBLE, TRUNCATION_MARK
from compaction.lab.peers.gemini_cli import ACKNOWLEDGEMENT
from compaction.lab.peers.openhands import filter_unmatched_tool_calls
from compaction.messages import content_text, tool_calls
from compaction.provider_rules import errors, validate
from compaction.result import Fate
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import make_counter

COUNTER = make_counter("rough")
SUMMARIZER = ExtractiveSummarizer()
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

Message = dict[str, Any]


def call(call_id: str, command: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
    }


def round_(number: int, output: str) -> list[Message]:
    """One tool round: an assistant message that only calls a tool, and the tool's result."""
    return [
        {"role": "assistant", "content": None, "tool_calls": [call(f"c{number}", f"ls {number}")]},
        {"role": "tool", "tool_call_id": f"c{number}", "content": output},
    ]


# -- hermes ---------------------------------------------------------------------------------------


def agentic_run(rounds: int = 40, output_chars: int = 5_000) -> list[Message]:
    """Head, a second request answered with text at index 4, then a long run of tool calls with
    no assistant text at all: hermes' last-assistant rule keeps everything from index 4."""
    messages: list[Message] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the login bug in src/auth/login.py."},
        {"role": "assistant", "content": "Looking at the login handler first."},
        {"role": "user", "content": "Also keep the public API unchanged."},
        {"role": "assistant", "content": "Understood: I will run the checks one by one."},
    ]
    for number in range(rounds):
        messages += round_(number, f"out {number}\n" + "x" * output_chars)
    return messages


def test_hermes_last_assistant_rule_keeps_the_whole_run_after_its_last_text() -> None:
    messages = agentic_run()
    n = len(messages)
    run = Hermes().compact(messages, 40_000, COUNTER, SUMMARIZER)
    # The budget (20% of a 30,000 threshold) ends within the protected last 20 messages, but the
    # last assistant message with text is message 4: everything from it on stays.
    assert run.details["budget_tail_start"] == n - 20
    assert run.details["last_assistant_text"] == 4
    assert run.details["tail_start"] == 4
    assert run.fates[3] == Fate.FOLDED_INTO_SUMMARY
    assert [run.fates[i] for i in range(3)] == [Fate.KEPT] * 3
    kept = [origin for origin in run.origins if origin is not None]
    assert kept == [0, 1, 2, *range(4, n)]
    # Tool outputs before the protected tail became placeholders; the last 20 messages did not.
    placeholders = sorted(i for i, fate in run.fates.items() if fate == PLACEHOLDER)
    assert placeholders == [i for i in range(6, n - 20) if messages[i]["role"] == "tool"]
    assert all(run.fates[i] == Fate.KEPT for i in range(n - 20, n))
    assert any("last assistant message with text is message 4" in note for note in run.notes)


def test_hermes_tail_ends_at_its_budget_when_the_last_text_is_recent() -> None:
    messages = agentic_run()
    messages.append({"role": "assistant", "content": "All rounds done; summarising results."})
    n = len(messages)
    run = Hermes().compact(messages, 40_000, COUNTER, SUMMARIZER)
    assert run.details["tail_start"] == run.details["budget_tail_start"] == n - 21
    # The summary sits between head and tail, as a user turn after the head's assistant.
    summary_position = run.origins.index(None)
    assert run.messages[summary_position]["role"] == "user"
    assert run.origins[summary_position + 1] == n - 21


def test_hermes_trigger_threshold_and_anti_thrash() -> None:
    hermes = Hermes()
    assert hermes.threshold(200_000) == 150_000  # under 512K: raised to 0.75
    assert hermes.threshold(1_000_000) == 256_000  # 0.5 would be 500K: capped
    assert hermes.threshold(hermes.window_for(30_000)) == 30_000
    assert Hermes.estimate == "rough"  # hermes decides on characters / 4
    assert hermes.should_compact(150_000, [], 200_000, PeerState())
    assert not hermes.should_compact(149_999, [], 200_000, PeerState())
    assert not hermes.should_compact(150_000, [], 200_000, PeerState(ineffective=2))


# -- codex ----------------------------------------------------------------------------------------


def test_codex_keeps_user_messages_newest_first_within_20000_tokens_and_truncates_the_oldest() -> (
    None
):
    def user(label: str, tokens: int) -> Message:
        return {"role": "user", "content": f"{label} " + "w" * (tokens * 4 - len(label) - 1)}

    messages: list[Message] = [{"role": "system", "content": "You are Codex."}]
    sizes = [("first", 3_000), ("second", 8_000), ("third", 8_000), ("fourth", 8_000)]
    for number, (label, tokens) in enumerate(sizes):
        messages.append(user(label, tokens))
        messages.append({"role": "assistant", "content": f"Working on {label}."})
        messages += round_(number, f"result {number}: src/module_{number}.py failed")
    messages.append(user("fifth", 2_000))
    run = Codex().compact(messages, 200_000, COUNTER, SUMMARIZER)
    first, second, third, fourth, fifth = (1, 5, 9, 13, 17)
    # Newest first: fifth (2,000), fourth and third (8,000 each) fit; second overflows the
    # 20,000 and is truncated; first is not kept at all.
    assert run.origins == [0, second, third, fourth, fifth, None]
    assert run.fates[second] == TRUNCATED
    assert run.fates[first] == Fate.FOLDED_INTO_SUMMARY
    assert all(run.fates[i] == Fate.KEPT for i in (0, third, fourth, fifth))
    cut = content_text(run.messages[1])
    assert cut.startswith("second ") and cut.endswith(TRUNCATION_MARK)
    kept_users = run.messages[1:5]
    assert COUNTER.count_messages(kept_users) <= 20_000
    assert COUNTER.count_messages(kept_users) > 19_000  # the truncation used what was left
    # Every assistant message and tool item is dropped; the summary closes as a user message.
    assert all(m["role"] in ("system", "user") for m in run.messages)
    assert not any(tool_calls(m) for m in run.messages)
    assert content_text(run.messages[-1]).startswith(HANDOFF_PREAMBLE)
    assert all(
        run.fates[i] == Fate.FOLDED_INTO_SUMMARY
        for i, m in enumerate(messages)
        if m["role"] != "user" and i
    )


# -- openhands ------------------------------------------------------------------------------------


def chat(events: int) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": "You are OpenHands."}]
    while len(messages) < events:
        role = "user" if len(messages) % 2 else "assistant"
        messages.append({"role": role, "content": f"event {len(messages)}"})
    return messages


def test_openhands_triggers_on_the_event_count_and_condenses_to_half() -> None:
    openhands = OpenHands()
    assert not openhands.should_compact(10**9, chat(120), 1_000, PeerState())  # tokens ignored
    assert openhands.should_compact(0, chat(121), 10**9, PeerState())
    messages = chat(121)
    run = openhands.compact(messages, 128_000, COUNTER, SUMMARIZER)
    # max_size // 2 = 60 events: the first 4, the summary, the last 55.
    assert len(run.messages) == 60
    assert run.origins == [0, 1, 2, 3, None, *range(66, 121)]
    assert all(run.fates[i] == Fate.FOLDED_INTO_SUMMARY for i in range(4, 66))
    small = make_peer("openhands", {"max_size": 20, "keep_first": 2})
    assert small.compact(chat(21), 128_000, COUNTER, SUMMARIZER).origins == [
        0,
        1,
        None,
        *range(14, 21),
    ]


def test_openhands_filters_unmatched_calls_and_results_as_its_conversation_memory_does() -> None:
    # PEERS.md, "OpenHands condensers": V0's ConversationMemory ends with
    # _filter_unmatched_tool_calls, so a cut tool group loses its call or result and no orphan
    # reaches the provider.
    messages: list[Message] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for number in range(40):
        messages += round_(number, f"output {number}")
    run = make_peer("openhands", {"max_size": 20}).compact(messages, 128_000, COUNTER, SUMMARIZER)
    # max_size // 2 = 10: the first 4, the summary, the last 5 events, which start with a tool
    # result whose call was forgotten: the filter removes it.
    assert run.origins == [0, 1, 2, 3, None, *range(78, 82)]
    assert run.fates[77] == Fate.ORPHAN_REMOVED and run.details["filtered_unmatched"] == 1
    assert not errors(validate(run.messages, "openai"))
    assert not errors(validate(run.messages, "anthropic"))
    # A head that ends on a call whose result was condensed away loses that call's message.
    cut_head = make_peer("openhands", {"max_size": 20, "keep_first": 3})
    run = cut_head.compact(messages, 128_000, COUNTER, SUMMARIZER)
    assert run.fates[2] == Fate.ORPHAN_REMOVED and 2 not in run.origins
    assert not errors(validate(run.messages, "openai"))


def test_the_openhands_filter_keeps_the_matched_calls_of_a_message() -> None:
    both = {
        "role": "assistant",
        "content": "two at once",
        "tool_calls": [call("a", "ls"), call("b", "pwd")],
    }
    view: list[Message] = [
        {"role": "user", "content": "go"},
        both,
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
        {"role": "assistant", "content": "plain text is untouched"},
    ]
    kept, origins, fates = filter_unmatched_tool_calls(view, [10, 11, 12, 13, None])
    assert [c["id"] for c in tool_calls(kept[1])] == ["a"]
    assert origins == [10, 11, 12, None]
    assert fates == {11: Fate.CALL_STRIPPED, 13: Fate.ORPHAN_REMOVED}
    assert view[1]["tool_calls"][1]["id"] == "b"  # the input is not changed


# -- gemini-cli -----------------------------------------------------------------------------------


def gemini_chat() -> list[Message]:
    text = "y" * 999
    messages: list[Message] = [{"role": "system", "content": "You are Gemini."}]
    for label in "ABCD":
        messages.append({"role": "user", "content": f"{label}{text}"})
        messages.append({"role": "assistant", "content": f"a{label}" + "z" * 998})
    return messages


def test_gemini_splits_at_the_first_user_message_past_70_percent_of_the_characters() -> None:
    gemini = GeminiCli()
    messages = gemini_chat()
    # 8,000 characters of history: user D (index 7) is the first user message with 6,000 >= 5,600
    # characters before it.
    assert gemini.split_point(messages, 1) == 7
    messages.append({"role": "user", "content": "one more thing " + "q" * 5_000})
    messages.append({"role": "assistant", "content": "done"})
    run = gemini.compact(messages, 20_000, COUNTER, SUMMARIZER)
    # Now the history is 13,019 characters: 70% is 9,113; user D has 6,000 before it, the new
    # user message (index 9) 8,000, so no user message qualifies and the history ends with a model
    # turn that calls no tool: everything is summarised.
    assert run.details["split"] == len(messages)
    assert run.messages[0] == messages[0]
    assert content_text(run.messages[1]).startswith("<state_snapshot>")
    assert run.messages[2] == {"role": "assistant", "content": ACKNOWLEDGEMENT}
    assert len(run.messages) == 3


def test_gemini_never_splits_at_a_function_response() -> None:
    messages: list[Message] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u" * 1_000},
        *round_(0, "r" * 5_000),  # the 70% mark falls inside this tool result
        {"role": "assistant", "content": "a" * 100},
        {"role": "user", "content": "next " + "v" * 500},
        *round_(1, "s" * 500),
    ]
    assert GeminiCli().split_point(messages, 1) == 5  # the next real user message


def test_gemini_truncates_old_function_responses_and_rejects_a_larger_result() -> None:
    gemini = make_peer("gemini-cli", {"response_budget_tokens": 1_000, "truncated_lines": 2})
    assert isinstance(gemini, GeminiCli)
    lines = "\n".join(f"line {i}" for i in range(1_000))  # ~2,000 tokens
    messages: list[Message] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for number in range(2):
        messages += round_(number, lines)
    truncated, fates = gemini.truncate_responses(messages, COUNTER)
    # Counted newest first, each response (about 2,000 tokens) already passes the 1,000-token
    # reverse budget: both are cut to their last 2 lines (neither is 3 tool turns old).
    assert set(fates) == {3, 5}
    assert content_text(truncated[3]).endswith("line 998\nline 999")
    # A tiny conversation: the snapshot would outweigh it, so the compression is rejected.
    tiny = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    tiny += [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]
    run = GeminiCli(preserve_fraction=0.1).compact(tiny, 10_000, COUNTER, SUMMARIZER)
    assert run.rejected is not None and "larger than the input" in run.rejected
    assert run.messages == tiny and not run.compacted


# -- observation masking --------------------------------------------------------------------------


def test_masking_keeps_every_action_and_only_the_last_m_turns_observations() -> None:
    messages: list[Message] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    for number in range(5):
        messages += round_(number, f"observation {number}\nsecond line")
    run = ObservationMasking(window_turns=2).compact(messages, 10_000, COUNTER, SUMMARIZER)
    # Turns 3 and 4 are the last two: the results of turns 0, 1 and 2 (indices 3, 5, 7) masked.
    assert sorted(i for i, f in run.fates.items() if f == PLACEHOLDER) == [3, 5, 7]
    assert [content_text(m) for m in run.messages[9:12:2]] == [
        "observation 3\nsecond line",
        "observation 4\nsecond line",
    ]
    assert content_text(run.messages[3]) == "[old observation omitted: 2 lines]"
    # Every action is kept as it was, and nothing is summarised.
    assert [m for m in run.messages if m["role"] == "assistant"] == [
        m for m in messages if m["role"] == "assistant"
    ]
    assert run.summary_text is None and len(run.messages) == len(messages)
    assert ObservationMasking().window_turns == 10


# -- parameters -----------------------------------------------------------------------------------


def test_peer_parameters_are_checked_by_name() -> None:
    assert make_peer("hermes", {"protect_last_n": 10}).protect_last_n == 10  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"unknown parameter hermes\.tail"):
        make_peer("hermes", {"tail": 1})
    with pytest.raises(ConfigError, match=r"codex\.user_budget_tokens must be at least 0"):
        make_peer("codex", {"user_budget_tokens": -1})
    with pytest.raises(ConfigError, match="unknown peer 'claude'"):
        make_peer("claude")
    assert PEER_NAMES == ("hermes", "codex", "openhands", "gemini-cli", "observation-masking")


# -- every peer over the corpus -------------------------------------------------------------------


def corpus_files() -> list[Path]:
    return [p for p in all_corpus_files() if p.suffix != ".md"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus folder {CORPUS} is absent")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name[:40])
def test_every_peer_runs_on_every_corpus_file(path: Path) -> None:
    try:
        conversations = load_conversations(path)
    except CompactionError as exc:  # pragma: no cover - the corpus is all importable today
        pytest.fail(f"{path.name}: {exc}")
    for conversation in conversations[:3]:
        messages = conversation.messages
        target = max(1, COUNTER.count_messages(messages) // 3)
        for name, peer in PEERS.items():
            run = run_at_target(peer, messages, target, COUNTER, SUMMARIZER)
            assert set(run.fates) == set(range(len(messages))), name
            assert len(run.origins) == len(run.messages), name
            assert all(isinstance(m, dict) and "role" in m for m in run.messages), name
            if name == "gemini-cli":
                assert run.tokens_after <= run.tokens_before  # a larger result is rejected


def test_a_peers_summary_takes_the_users_request_not_the_stop_hooks_feedback() -> None:
    # Issue 22's mark: a session ending on a stop hook's feedback (a user-role turn the harness
    # sent) still has the person's own request as the summary's Active Task, for a peer as for us.
    request = "Also keep the public API unchanged."  # agentic_run's latest request
    messages: list[Message] = [
        *agentic_run(rounds=12, output_chars=2_000),
        {
            "role": "user",
            "content": "Stop hook feedback: tests must pass before you stop.",
            "injected": "stop-hook",
        },
    ]
    run = make_peer("codex").compact(
        messages, 128_000, make_counter("tiktoken", "gpt-4o"), ExtractiveSummarizer()
    )
    summary = next(m for m, origin in zip(run.messages, run.origins, strict=True) if origin is None)
    active = content_text(summary).split("## Active Task", 1)[1].split("\n## ", 1)[0]
    assert request in active
    assert "Stop hook feedback" not in active
