"""Provider validity: every rule fires on a request that breaks it and stays quiet on one that
does not, for each provider whose rules include it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from corpus_paths import corpus_files as all_corpus_files

from compaction.cli import main
from compaction.errors import InvalidConversationError
from compaction.provider_rules import RULES, Problem, errors, is_valid, validate
from compaction.summary import SUMMARY_PREFIX


def call(
    call_id: str, name: str = "terminal", arguments: str = '{"command": "ls"}'
) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def sys_(text: str = "You are helpful.") -> dict[str, Any]:
    return {"role": "system", "content": text}


def user(text: str = "hello") -> dict[str, Any]:
    return {"role": "user", "content": text}


def asst(text: str | None = "ok", calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls is not None:
        message["tool_calls"] = calls
    return message


def tool(call_id: str, text: str = "output") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def good() -> list[dict[str, Any]]:
    return [
        sys_(),
        user("list files"),
        asst(None, [call("a"), call("b")]),
        tool("a"),
        tool("b"),
        user("thanks, now run tests"),
        asst("done"),
    ]


def rules(problems: list[Problem]) -> list[tuple[int | None, str]]:
    return [(p.index, p.rule) for p in problems]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_well_formed_conversation_has_no_problems(provider: str) -> None:
    assert validate(good(), provider) == []


def test_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown provider 'gemini'"):
        validate(good(), "gemini")


def test_empty_conversation() -> None:
    assert rules(validate([], "openai")) == [(None, "empty-conversation")]


def test_invalid_message_entries_are_reported_not_raised() -> None:
    problems = validate([user(), "text", {"role": "robot", "content": "x"}], "openai")
    assert rules(problems) == [(1, "invalid-message"), (2, "invalid-message")]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_content_that_is_an_object_or_a_number_is_invalid(provider: str) -> None:
    messages = [
        user(),
        {"role": "assistant", "content": {"text": "ok"}},
        {"role": "user", "content": 5},
        {"role": "assistant", "content": ["bare text", {"type": "text", "text": "x"}]},
    ]
    problems = validate(messages, provider)
    assert rules(errors(problems)) == [
        (1, "invalid-content"),
        (2, "invalid-content"),
        (3, "invalid-content"),
    ]
    assert "dict" in problems[0].message
    assert "content[0] is a str" in problems[2].message


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tool_calls_that_are_not_a_list_are_invalid(provider: str) -> None:
    messages = [user(), {"role": "assistant", "content": None, "tool_calls": "terminal(ls)"}]
    problems = validate(messages, provider)
    assert rules(errors(problems)) == [(1, "tool-calls-not-list")]
    assert problems[0].message == "tool_calls is a str, not a list of calls"


def test_a_system_only_conversation_is_invalid_for_anthropic_only() -> None:
    # Anthropic takes the system messages as its system parameter: the messages list is empty.
    messages = [sys_(), sys_("Be brief.")]
    assert rules(errors(validate(messages, "anthropic"))) == [(None, "system-only")]
    assert errors(validate(messages, "openai")) == []


def test_a_request_object_is_validated_as_its_messages() -> None:
    assert validate({"messages": good()}, "openai") == []
    # Anthropic's shape: the system field first, tool_use / tool_result blocks read as calls.
    request = {
        "system": "You are helpful.",
        "messages": [
            {"role": "user", "content": "hello"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "ls", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
            {"role": "assistant", "content": "done"},
        ],
    }
    assert validate(request, "anthropic") == []
    assert rules(validate({"system": "s", "messages": []}, "anthropic")) == [(None, "system-only")]
    # An OpenAI request with a system field beside its messages: the field goes first.
    shifted = validate({"system": "s", "messages": [user(), sys_()]}, "openai")
    assert rules(shifted) == [(2, "system-not-first")]


@pytest.mark.parametrize(
    ("argument", "shown"),
    [
        ("abc", "got str"),
        (5, "got int"),
        (None, "got NoneType"),
        ({"conversation": []}, "got a dict without a 'messages' list"),
    ],
)
def test_an_argument_that_is_no_message_list_is_a_clear_error(argument: Any, shown: str) -> None:
    # A string would be checked character by character, a dict key by key: refuse instead.
    with pytest.raises(InvalidConversationError, match="expects a list of messages") as caught:
        validate(argument, "openai")
    assert shown in str(caught.value)


def test_system_not_first_is_a_warning_for_both_providers() -> None:
    # Anthropic gets a late system message as user text from our exporter: accepted, meaning
    # changed. OpenAI accepts it as is.
    messages = [sys_(), user(), asst(), sys_("late"), user("again")]
    anthropic = validate(messages, "anthropic")
    # ...and as user text it merges with the user turn after it.
    assert rules(anthropic) == [(3, "system-not-first"), (4, "consecutive-same-role")]
    assert {p.severity for p in anthropic} == {"warning"} and is_valid(anthropic)
    assert "exported to Anthropic as user text" in anthropic[0].message
    openai = validate(messages, "openai")
    assert rules(openai) == [(3, "system-not-first")]
    assert openai[0].severity == "warning" and is_valid(openai)
    # A developer message counts as a system message.
    assert rules(validate([user(), {"role": "developer", "content": "x"}], "openai")) == [
        (1, "system-not-first")
    ]


def test_summary_as_a_system_message_in_the_middle() -> None:
    summary = {"role": "system", "content": SUMMARY_PREFIX + "\n## Active Task\nx"}
    messages = [sys_(), user(), asst(), summary, user("next")]
    assert rules(validate(messages, "anthropic")) == [(3, "summary-as-system")]
    assert validate(messages, "anthropic")[0].severity == "error"
    assert validate(messages, "openai")[0].severity == "warning"
    # The summary as the very first (system) message is where a system prompt belongs.
    assert validate([summary, user()], "anthropic") == []


def test_first_turn_must_be_user_for_anthropic_only() -> None:
    messages = [sys_(), asst("I start"), user("fine")]
    assert rules(validate(messages, "anthropic")) == [(1, "first-not-user")]
    assert validate(messages, "openai") == []
    assert validate([sys_(), user(), asst()], "anthropic") == []


def test_consecutive_user_messages_are_a_warning_for_anthropic() -> None:
    messages = [user("one"), user("two"), asst(), asst("again")]
    problems = validate(messages, "anthropic")
    assert rules(problems) == [(1, "consecutive-same-role"), (3, "consecutive-same-role")]
    assert all(p.severity == "warning" for p in problems) and is_valid(problems)
    assert validate(messages, "openai") == []


def test_user_text_after_tool_results_is_the_normal_anthropic_shape() -> None:
    messages = [user(), asst(None, [call("a")]), tool("a"), user("more"), asst()]
    assert validate(messages, "anthropic") == []


def test_summary_breaking_alternation_is_an_error_for_anthropic() -> None:
    summary = asst(SUMMARY_PREFIX + "\n## Active Task\nx")
    messages = [sys_(), user(), asst("reply"), summary, user("next")]
    problems = validate(messages, "anthropic")
    assert rules(problems) == [(3, "summary-breaks-alternation")]
    assert problems[0].severity == "error"
    assert validate(messages, "openai") == []
    # Placed with the other role, it alternates and is fine.
    fine = [sys_(), user(), asst("reply"), user(SUMMARY_PREFIX + "\nx"), asst("ok"), user("go")]
    assert validate(fine, "anthropic") == []


def test_summary_after_tool_results_is_accepted_by_anthropic() -> None:
    messages = [user(), asst(None, [call("a")]), tool("a"), user(SUMMARY_PREFIX + "\nx"), asst()]
    assert validate(messages, "anthropic") == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_empty_assistant(provider: str) -> None:
    messages = [user(), asst(None), user("hm"), asst("   ")]
    assert rules(validate(messages, provider)) == [(1, "empty-assistant"), (3, "empty-assistant")]
    assert validate([user(), asst(None, [call("a")]), tool("a")], provider) == []


def test_empty_user_is_an_error_for_anthropic_a_warning_for_openai() -> None:
    messages = [user(""), asst()]
    assert rules(validate(messages, "anthropic")) == [(0, "empty-user")]
    assert validate(messages, "anthropic")[0].severity == "error"
    assert validate(messages, "openai")[0].severity == "warning"
    image_only = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
    assert validate([image_only, asst()], "anthropic") == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tool_call_shape(provider: str) -> None:
    nameless = {"id": "b", "type": "function", "function": {"arguments": "{}"}}
    idless = {"type": "function", "function": {"name": "x", "arguments": "{}"}}
    messages = [user(), asst(None, [nameless, idless]), tool("b")]
    assert rules(validate(messages, provider)) == [
        (1, "tool-call-missing-id"),
        (1, "tool-call-missing-name"),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tool_arguments_must_be_a_json_object(provider: str) -> None:
    messages = [
        user(),
        asst(None, [call("a", arguments='{"command": "ls"'), call("b", arguments="[1, 2]")]),
        tool("a"),
        tool("b"),
    ]
    problems = validate(messages, provider)
    assert rules(problems) == [(1, "tool-arguments-invalid-json"), (1, "tool-arguments-not-object")]
    assert "not valid JSON" in problems[0].message
    assert validate([user(), asst(None, [call("a", arguments="{}")]), tool("a")], provider) == []


def test_an_id_reused_in_a_later_turn_is_an_error_for_anthropic_only() -> None:
    messages = [user(), asst(None, [call("a")]), tool("a"), asst(None, [call("a")]), tool("a")]
    anthropic = validate(messages, "anthropic")
    assert rules(anthropic) == [(3, "duplicate-tool-call-id")]
    assert anthropic[0].severity == "error"
    openai = validate(messages, "openai")
    assert rules(openai) == [(3, "duplicate-tool-call-id")]
    assert openai[0].severity == "warning" and is_valid(openai)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_id_repeated_in_one_message_is_an_error(provider: str) -> None:
    messages = [user(), asst(None, [call("a"), call("a")]), tool("a"), tool("a")]
    problems = validate(messages, provider)
    # With one id for two calls, the second result cannot be told from the first.
    assert rules(problems) == [(1, "duplicate-tool-call-id"), (3, "duplicate-tool-result")]
    assert problems[0].severity == "error"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_unanswered_call(provider: str) -> None:
    messages = [user(), asst(None, [call("a"), call("b")]), tool("a"), user("next")]
    assert rules(validate(messages, provider)) == [(1, "tool-call-unanswered")]
    assert "'b'" in validate(messages, provider)[0].message


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_result_without_call_and_missing_id(provider: str) -> None:
    messages = [user(), asst(), {"role": "tool", "content": "x"}, tool("ghost"), user("q")]
    assert rules(validate(messages, provider)) == [
        (2, "tool-result-missing-id"),
        (3, "tool-result-without-call"),
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_result_before_call(provider: str) -> None:
    messages = [user(), tool("a"), asst(None, [call("a")]), user("q")]
    found = rules(validate(messages, provider))
    assert (1, "tool-result-before-call") in found
    assert (2, "tool-call-unanswered") not in found  # answered, only in the wrong place


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_result_not_adjacent_to_its_call(provider: str) -> None:
    messages = [user(), asst(None, [call("a")]), user("interrupt"), tool("a"), asst()]
    found = rules(validate(messages, provider))
    assert (3, "tool-result-not-adjacent") in found
    assert (1, "tool-call-unanswered") not in found


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_duplicate_result(provider: str) -> None:
    messages = [user(), asst(None, [call("a")]), tool("a"), tool("a"), asst()]
    assert rules(validate(messages, provider)) == [(3, "duplicate-tool-result")]


def test_head_tail_cut_through_a_tool_group_is_invalid() -> None:
    full = good()
    cut = full[:2] + full[4:]  # drops the assistant call message and one result
    found = rules(validate(cut, "openai"))
    assert (2, "tool-result-without-call") in found
    assert not is_valid(validate(cut, "openai"))


def test_every_rule_is_documented_and_problems_serialise() -> None:
    problems = validate([sys_(), asst(None), sys_(), tool("z")], "anthropic")
    assert all(p.rule in RULES for p in problems)
    assert errors(problems)
    data = problems[0].to_dict()
    assert set(data) == {"index", "rule", "message", "severity"}
    assert str(problems[0]).startswith("message ")


def test_input_is_not_mutated() -> None:
    messages = [user(), asst(None, [call("a", arguments="nope")])]
    before = json.dumps(messages, sort_keys=True)
    validate(messages, "anthropic")
    assert json.dumps(messages, sort_keys=True) == before


def test_validates_5000_messages_quickly() -> None:

    messages: list[dict[str, Any]] = [sys_()]
    for turn in range(1250):
        messages += [user(f"u{turn}"), asst(None, [call(f"c{turn}")]), tool(f"c{turn}")]
        messages.append(asst(f"a{turn}"))
    # Linear by construction; speed is measured in benchmarks, not asserted in tests.
    assert validate(messages, "anthropic") == []


# -- CLI -------------------------------------------------------------------------------------


def write(tmp_path: Path, data: Any, name: str = "conv.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_cli_valid_exits_zero(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["validate", write(tmp_path, {"messages": good()})])
    assert result.exit_code == 0, result.output
    assert "valid for openai" in result.output


def test_cli_problems_exit_one_with_json(tmp_path: Path) -> None:
    messages = [user(), asst(None, [call("a")]), user("x")]
    path = write(tmp_path, messages)
    result = CliRunner().invoke(main, ["validate", path, "--provider", "anthropic", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["valid"] is False and report["provider"] == "anthropic"
    assert [(p["index"], p["rule"]) for p in report["problems"]] == [(1, "tool-call-unanswered")]


def test_cli_imports_other_formats(tmp_path: Path) -> None:
    request = {
        "messages": [
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"a": 1}}],
            },
        ]
    }
    result = CliRunner().invoke(main, ["validate", write(tmp_path, request), "--json"])
    report = json.loads(result.output)
    assert report["read"] == "imported from anthropic"
    assert [(p["index"], p["rule"]) for p in report["problems"]] == [(1, "tool-call-unanswered")]
    assert result.exit_code == 1


def test_cli_warnings_pass_unless_strict(tmp_path: Path) -> None:
    path = write(tmp_path, [user("a"), user("b"), asst()])
    runner = CliRunner()
    lenient = runner.invoke(main, ["validate", path, "--provider", "anthropic"])
    assert lenient.exit_code == 0 and "consecutive-same-role" in lenient.output
    strict = runner.invoke(main, ["validate", path, "--provider", "anthropic", "--strict"])
    assert strict.exit_code == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON"),
        ('{"a": 1}', "not a conversation format"),
        (None, "cannot read"),
    ],
)
def test_cli_unreadable_input_exits_two(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert expected in result.output
    assert "Traceback" not in result.output


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is absent ({CORPUS})")
def test_cli_reads_every_corpus_transcript() -> None:
    runner = CliRunner()
    verdicts = {}
    for path in all_corpus_files():
        result = runner.invoke(main, ["validate", str(path), "--provider", "anthropic", "--json"])
        assert result.exit_code in (0, 1), result.output
        report = json.loads(result.output)
        errors = [p for p in report["problems"] if p["severity"] == "error"]
        last = report["messages"] - 1
        # A session file that ends while a tool runs holds that call without its result: the
        # next request would have carried it. Nothing else may be wrong.
        verdicts[path.name] = all(
            p["rule"] == "tool-call-unanswered" and p["index"] == last for p in errors
        )
    # The Claude Code transcripts came from the Anthropic API, so Anthropic accepted them.
    claude = [name for name in verdicts if name.startswith("claudecode")]
    assert claude and all(verdicts[name] for name in claude), verdicts


def test_arguments_holding_nan_are_invalid_json_for_the_provider() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "plot", "arguments": '{"x": NaN}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    problems = validate(messages, "openai")
    assert [(p.index, p.rule) for p in problems if p.rule == "tool-arguments-invalid-json"] == [
        (1, "tool-arguments-invalid-json")
    ]
    # Exported for Anthropic the arguments are kept as text under _raw: the file stays JSON.
    from compaction.formats import dump_conversation

    text = json.dumps(dump_conversation(messages, "anthropic"), allow_nan=False)
    assert '"_raw": "{\\"x\\": NaN}"' in text


def test_a_field_the_api_does_not_take_is_flagged_for_both_providers() -> None:
    """An importer's annotation reaching a request is a 400 (issue 30): `injected` is an error;
    a model's `reasoning`, which the exporters leave out, a warning."""
    messages = [
        {"role": "user", "content": "hi", "injected": "hook"},
        {"role": "assistant", "content": "hello", "reasoning": "thought"},
    ]
    for provider in ("openai", "anthropic"):
        found = [(p.index, p.rule, p.severity) for p in validate(messages, provider)]
        assert (0, "unknown-field", "error") in found
        assert (1, "unknown-field", "warning") in found
