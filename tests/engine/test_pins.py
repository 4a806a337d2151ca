"""Pins (issue 33): what the user pins is never summarised, cut or dropped, in every phase.

The rules (message numbers, roles, tools, text patterns, the user's messages, instruction files)
are checked and resolved at the door (compaction/phases/pins.py); Prune leaves a pinned output
alone, Boundaries keeps a pinned middle message verbatim after the summary, Fit never cuts one and
says so, and a tool call stays with its results. Over generated conversations and every corpus
session, pinned messages come out verbatim and the provider rules still hold.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_checks import pinned_problems, tool_structure_problems
from corpus_paths import corpus_files, corpus_path
from engine_helpers import assistant, big, call, calls, coding_session, system, tool, user
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_properties import _valid_once_repaired, conversations, only_orphans

from compaction import CompactionConfig, ConfigError, Fate, compress, load_conversation, validate
from compaction.formats import Conversation, load_conversations
from compaction.messages import Message, content_text, tool_calls
from compaction.phases.pins import Pins, instruction_file, resolve_pins
from compaction.phases.regions import plan_regions

ROUGH = CompactionConfig(counter="rough")


def _session() -> list[Message]:
    """A coding session long enough to have a middle: 12 rounds of ask, call, result, reply."""
    return coding_session(turns=12, output_chars=3_000)


def _small(**changes: Any) -> CompactionConfig:
    budgets: dict[str, Any] = {
        "context_length": 6_000,
        "summary_min_tokens": 200,
        "protect_first_n": 3,
    }
    return ROUGH.replace(**{**budgets, **changes})


def _errors(messages: list[Message], provider: str) -> set[str]:
    return {problem.rule for problem in validate(messages, provider) if problem.severity == "error"}


# -- the rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({"messages": [-1]}, r"pins\.messages holds -1: a message number is a whole number"),
        ({"messages": ["3"]}, r"pins\.messages holds '3'"),
        ({"messages": [True]}, r"pins\.messages holds True"),
        ({"messages": 3}, r"pins\.messages must be a list of message numbers"),
        ({"roles": ["boss"]}, r"pins\.roles holds 'boss': the roles are system, developer"),
        ({"tools": [""]}, r"pins\.tools holds '': a name is non-empty text"),
        ({"patterns": ["(unclosed"]}, r"pins\.patterns holds '\(unclosed', which is no regular"),
        ({"user_messages": "yes"}, r"pins\.user_messages must be true or false"),
        ({"message": [1]}, r"unknown pin rule\(s\): message \(the rules are messages, roles"),
        (["#1"], r"pins must be a mapping such as"),
    ],
)
def test_a_bad_pin_is_a_config_error_naming_the_rule(pins: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CompactionConfig(pins=pins)


def test_pins_travel_in_the_configs_dict_and_an_empty_set_leaves_it_as_it_was() -> None:
    config = CompactionConfig(
        pins={"messages": [9, 2, 2], "tools": "Bash", "patterns": ["(?i)decided"]},
    )
    assert config.pins == Pins(messages=(2, 9), tools=("Bash",), patterns=("(?i)decided",))
    data = config.to_dict()
    assert data["pins"] == {"messages": [2, 9], "tools": ["Bash"], "patterns": ["(?i)decided"]}
    assert CompactionConfig.from_dict(json.loads(json.dumps(data))) == config
    assert "pins" not in CompactionConfig().to_dict()  # reports without pins read as before
    assert "pins" not in CompactionConfig.field_names()  # no sweep axis, no --set flag
    assert config.replace(pins=None).pins == Pins()


def test_numbers_roles_tools_and_patterns_pick_their_messages() -> None:
    messages = [
        system(),
        user("Fix the login bug."),
        calls(call("c1", "Bash", {"command": "pytest"}), call("c2", "Read", {"path": "a.py"})),
        tool("c1", "2 failed"),
        tool("c2", "def login(): ..."),
        assistant("We decided to keep the session cookie."),
        calls(call("c3", "Read", {"path": "b.py"})),
        tool("c3", "def logout(): ..."),
    ]
    assert resolve_pins(messages, Pins(messages=(1,))).reasons == {1: "pinned #1"}
    assert set(resolve_pins(messages, Pins(roles=("assistant",))).indexes) == {2, 3, 4, 5, 6, 7}
    by_tool = resolve_pins(messages, Pins(tools=("Bash",)))
    # The Bash call's message also made a Read call: its results stay with it.
    assert by_tool.reasons[2] == "tool Bash"
    assert set(by_tool.indexes) == {2, 3, 4}
    assert "a call and its results stay together" in by_tool.reasons[4]
    by_text = resolve_pins(messages, Pins(patterns=("(?i)DECIDED", "b\\.py")))
    assert set(by_text.indexes) == {5, 6, 7}  # the pattern reads call arguments too
    assert by_text.reasons[5] == "text matching /(?i)DECIDED/"


def test_a_pinned_result_keeps_its_call_and_a_pinned_call_its_results() -> None:
    messages = [
        user("go"),
        calls(call("c1", "Bash"), call("c2", "Bash")),
        tool("c1", "one"),
        tool("c2", "two"),
        assistant("done"),
    ]
    assert set(resolve_pins(messages, Pins(messages=(3,))).indexes) == {1, 2, 3}
    assert set(resolve_pins(messages, Pins(messages=(1,))).indexes) == {1, 2, 3}


def test_the_users_messages_are_theirs_not_the_harness_text_in_a_user_turn() -> None:
    messages = [
        user("<system-reminder>the date is today</system-reminder>"),
        user("Please keep the API stable."),
        assistant("ok"),
        user("/review"),
        user("Stop hook feedback: tests failed"),
    ]
    marks = {0: "system-reminder", 3: "slash-command", 4: "stop-hook"}
    pinned = resolve_pins(messages, Pins(user_messages=True), marks)
    # A slash command the user invoked is their request; hook text and reminders are not.
    assert pinned.reasons == {1: "the user's message", 3: "the user's message"}


CODEX_AGENTS = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun make test.\n"
CLAUDE_MEMORY = (
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
    "Contents of /home/me/proj/CLAUDE.md (project instructions, checked into the codebase):\n\n"
    "Never push to main.\n</system-reminder>"
)


def test_instruction_files_are_recognised_by_how_the_harness_frames_them() -> None:
    assert instruction_file(user(CODEX_AGENTS), "context") == "AGENTS.md"
    # Codex's prefix is harness text even when nothing marked it (a plain message list).
    assert instruction_file(user(CODEX_AGENTS), None) == "AGENTS.md"
    assert instruction_file(user(CLAUDE_MEMORY), "system-reminder") == "/home/me/proj/CLAUDE.md"
    assert instruction_file(system("Contents of CLAUDE.md (project rules)"), None) == "CLAUDE.md"
    # The user quoting their own file is speaking: their message is theirs, not a harness's.
    assert instruction_file(user("My CLAUDE.md says: " + CLAUDE_MEMORY), None) is None
    assert instruction_file(user("Please update AGENTS.md"), "context") is None
    messages = [system(), user(CODEX_AGENTS), user("fix it"), assistant("fixed")]
    pinned = resolve_pins(messages, Pins(instruction_files=True), {1: "context"})
    assert pinned.reasons == {1: "instruction file AGENTS.md"}


def test_the_codex_corpus_sessions_agents_md_is_an_instruction_file() -> None:
    path = corpus_path(
        "codex-ship__rollout-2026-03-12T17-09-38-019ce419-22a5-7321-baa1-5d0152ca561e.jsonl"
    )
    if path is None:
        pytest.skip("the shared corpus is absent")
    conversation = load_conversation(path)
    pinned = resolve_pins(conversation.messages, Pins(instruction_files=True), conversation.marks)
    assert list(pinned.reasons.values()) == ["instruction file AGENTS.md"]
    (index,) = pinned.indexes
    assert content_text(conversation.messages[index]).startswith("# AGENTS.md instructions")


def test_a_pin_that_keeps_nothing_says_why() -> None:
    messages = [
        user("go"),
        tool("ghost", "a result whose call never was"),
        assistant("done"),
    ]
    pinned = resolve_pins(messages, Pins(messages=(1, 40)))
    assert pinned.indexes == frozenset()
    assert pinned.unresolved == [
        "#40: the conversation has 3 messages",
        "#1: a tool result whose call is not before it in the conversation (a provider rejects "
        "it, so Phase 5 removes it)",
    ]


# -- the phases ---------------------------------------------------------------------------------


def test_a_pinned_middle_message_is_kept_verbatim_after_the_summary() -> None:
    messages = _session()
    # #7 a user's request and #13 a tool result (whose call #12 comes with it), both mid-way.
    assert messages[7]["role"] == "user" and messages[13]["role"] == "tool"
    plain = compress(messages, _small())
    assert plain.fates[7] == plain.fates[13] == Fate.FOLDED_INTO_SUMMARY  # the failing case
    result = compress(messages, _small(pins={"messages": [7, 13]}))
    assert result.pinned_indexes == [7, 12, 13]
    assert pinned_problems(messages, result) == []
    # The summary cannot sit beside the user's #7 as a user turn, nor as an assistant after the
    # head's assistant turn: it is merged in front of #7, whose own words stay as they were.
    assert result.fates[7] == Fate.SUMMARY_MERGED_IN
    assert [result.fates[i] for i in (12, 13)] == [Fate.PINNED] * 2
    origins = result.phases[-1].origins
    first = origins.index(7)
    assert origins[first : first + 3] == [7, 12, 13]  # in order, where the middle was
    assert content_text(result.messages[first]).startswith("[CONTEXT COMPACTION")
    assert tool_structure_problems(result.messages) == []
    assert _errors(result.messages, "openai") == _errors(result.messages, "anthropic") == set()
    boundaries = result.phase("boundaries").details
    assert boundaries["kept_pinned"] == [7, 12, 13]
    assert boundaries["middle_tokens"] < plain.phase("boundaries").details["middle_tokens"]
    summarised = result.phase("summarize").details
    assert "[#7]" not in summarised["prompt"] and "[#13]" not in summarised["prompt"]
    assert result.to_dict()["pinned"]["pinned"]["12"].startswith("with #13, pinned #13")


def test_prune_leaves_a_pinned_output_alone() -> None:
    messages = _session()
    plain = compress(messages, _small())
    assert plain.phase("prune").fates.get(9) == Fate.CUT_TO_ONE_LINE  # the failing case
    result = compress(messages, _small(pins={"messages": [9]}))
    assert 9 not in result.phase("prune").fates
    assert result.phase("prune").messages[9] == messages[9]
    assert pinned_problems(messages, result) == []


def test_an_older_pinned_copy_of_an_output_is_not_deduplicated() -> None:
    messages = _session()
    repeated = big("the same log", 2_000)
    messages[9] = tool("call_1", repeated)
    messages[-2] = tool("call_11", repeated)
    assert compress(messages, _small()).phase("prune").fates.get(9) == Fate.DEDUPLICATED
    result = compress(messages, _small(pins={"messages": [9]}))
    assert 9 not in result.phase("prune").fates
    assert pinned_problems(messages, result) == []


def _tail_heavy() -> list[Message]:
    """Two huge tool outputs in the tail: Fit must cut one of them to fit a small window."""
    return [
        system(),
        user("Look at both logs."),
        calls(call("a", "Bash", {"command": "cat a.log"})),
        tool("a", big("log a", 20_000)),
        calls(call("b", "Bash", {"command": "cat b.log"})),
        tool("b", big("log b", 20_000)),
        assistant("Both logs read."),
    ]


def test_fit_never_cuts_a_pinned_message_and_says_what_it_held_back() -> None:
    messages = _tail_heavy()
    config = _small(context_length=9_000, pins={"messages": [3]})
    plain = compress(messages, config.replace(pins=None))
    assert {cut.input_index for cut in plain.fit.cuts} >= {3}  # the failing case
    result = compress(messages, config)
    assert result.fit is not None and result.fit.fits
    assert {cut.input_index for cut in result.fit.cuts} == {5}
    assert [held["input_index"] for held in result.fit.held_by_pins] == [3]
    assert result.fit.to_dict()["pinned_tokens"] == result.fit.pinned_tokens > 4_000
    assert pinned_problems(messages, result) == []


def test_pins_alone_over_the_window_cannot_fit_and_the_report_names_them() -> None:
    messages = _tail_heavy()
    result = compress(messages, _small(context_length=9_000, pins={"messages": [3, 5]}))
    assert result.fit is not None and not result.fit.fits
    assert not result.fit.request_exceeds_window  # the request alone would fit
    assert "4 pinned message(s)" in (result.fit.cannot_fit or "")  # the results and calls
    assert "unpin some" in (result.fit.cannot_fit or "")
    assert pinned_problems(messages, result) == []


def test_the_region_plan_counts_pinned_middle_messages_as_kept() -> None:
    messages = _session()
    plain = plan_regions(messages, _small())
    assert plain.regions()[7] == "middle"
    plan = plan_regions(messages, _small(pins={"messages": [7]}))
    assert plan.regions()[7] == "tail"
    assert plan.boundaries.kept == (7,)
    assert plan.pinned.reasons == {7: "pinned #7"}
    assert plan.region_counts()["middle"] == plain.region_counts()["middle"] - 1


# -- every conversation ---------------------------------------------------------------------------

SMALL = CompactionConfig(context_length=4_000, protect_first_n=2, summary_min_tokens=100)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.data())
def test_pinned_messages_come_out_verbatim_in_generated_conversations(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    assume(not only_orphans(messages))
    numbers = data.draw(st.lists(st.integers(0, len(messages) - 1), max_size=6))
    rules = data.draw(
        st.fixed_dictionaries(
            {
                "messages": st.just(numbers),
                "tools": st.lists(st.sampled_from(["terminal", "read_file"]), max_size=1),
                "user_messages": st.booleans(),
            }
        )
    )
    result = compress(messages, SMALL.replace(pins=rules))
    assert pinned_problems(messages, result) == []
    assert tool_structure_problems(result.messages) == []
    for provider in ("openai", "anthropic"):
        if _valid_once_repaired(messages, provider, "stub"):
            assert _errors(result.messages, provider) == set(), provider


def _corpus_conversations() -> list[tuple[str, Conversation]]:
    found = []
    for path in corpus_files():
        for number, conversation in enumerate(load_conversations(path)[:2]):
            if len(conversation.messages) >= 8:
                found.append((f"{path.name}#{number}", conversation))
    return found


def _most_called_tool(messages: list[Message]) -> list[str]:
    names: dict[str, int] = {}
    for message in messages:
        for one in tool_calls(message):
            name = one.get("function", {}).get("name", "")
            names[name] = names.get(name, 0) + 1
    return [max(names, key=lambda name: names[name])] if names else []


def test_pinned_messages_come_out_verbatim_in_every_corpus_session() -> None:
    sessions = _corpus_conversations()
    if not sessions:
        pytest.skip("the shared corpus is absent")
    for name, conversation in sessions:
        messages = conversation.messages
        total = compress(conversation, ROUGH).tokens_before
        config = ROUGH.replace(
            context_length=max(4_000, total // 2),
            summary_min_tokens=200,
            pins={
                "messages": [len(messages) // 3, len(messages) // 2],
                "tools": _most_called_tool(messages),
                "user_messages": True,
                "instruction_files": True,
            },
        )
        plain = compress(conversation, config.replace(pins=None))
        result = compress(conversation, config)
        assert result.pinned_indexes, name
        assert pinned_problems(messages, result) == [], name
        assert tool_structure_problems(result.messages) == [], name
        for provider in ("openai", "anthropic"):
            # Pins add no error a provider would reject that the same compaction has without.
            assert _errors(result.messages, provider) <= _errors(plain.messages, provider), name


def test_pins_read_and_write_their_short_texts() -> None:
    pins = Pins(
        messages=(3, 12),
        roles=("system",),
        tools=("Bash",),
        patterns=("a:b",),
        user_messages=True,
        instruction_files=True,
    )
    texts = pins.specs()
    assert texts == ["3", "12", "role:system", "tool:Bash", "text:a:b", "user", "instructions"]
    assert Pins.from_specs(texts) == pins
    assert Pins.from_specs(["#7"]).messages == (7,)
    with pytest.raises(ConfigError, match=r"pin 'tool:': expected a message number"):
        Pins.from_specs(["tool:"])
    with pytest.raises(ConfigError, match=r"pins\.roles holds 'boss'"):
        Pins.from_specs(["role:boss"])
