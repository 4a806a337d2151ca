"""Every repro of issue 21 ("Fits the window, always"), each as its own test.

They failed before the change: the latest request lost on a later pass, Anthropic's alternation
broken by a stray result, an empty success for a conversation of orphans, a merged summary
swallowing the user's own text, the system prompt summarised away at head 0, the prefix twice,
a huge tool output outliving every compaction, and `counter="rough"` loading tiktoken.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from engine_helpers import assistant, big, call, calls, system, tool, user

from compaction import CompactionConfig, Compactor, compress, validate
from compaction.cli import main
from compaction.errors import InvalidConversationError
from compaction.messages import Message, content_text
from compaction.summarizers.base import OnToken, SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary import (
    CLAUDE_CODE_SUMMARY_OPENING,
    MERGE_SEPARATOR,
    SUMMARY_PREFIX,
    summary_parts,
)


def words(label: str, count: int = 200) -> str:
    return " ".join(f"{label}{n}" for n in range(count))


def errors_for(messages: list[Message], provider: str) -> list[Any]:
    return [p for p in validate(messages, provider) if p.severity == "error"]


def user_turns(messages: list[Message]) -> list[str]:
    """Each user message's own text (a merged summary's message without its summary)."""
    texts = []
    for message in messages:
        if message.get("role") != "user":
            continue
        text = content_text(message)
        parts = summary_parts(text)
        texts.append(text if parts is None else (parts.own_text or ""))
    return texts


class Recording(ExtractiveSummarizer):
    """The extractive summariser, remembering every request it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        self.requests.append(request)
        return super().summarize(request, on_token)


# -- the latest request is lost on a later pass ------------------------------------------------


def _merge_session() -> list[Message]:
    messages: list[Message] = [system()]
    for turn in range(6):
        messages += [user(words(f"ask{turn}_", 120)), assistant(words(f"answer{turn}_", 120))]
    messages += [
        user("LATEST: rename the config loader and keep its tests green"),
        calls(call("c1", "terminal", {"command": "pytest -q"})),
        tool("c1", "3 passed"),
        assistant("Renamed; the tests pass."),
    ]
    return messages


def test_the_latest_request_survives_a_second_cli_pass(tmp_path: Path) -> None:
    # compaction compress S.json --context-length 1000 --head 1 --set tail_token_ratio=0
    #   --counter rough --orphans strip --set summary_min_tokens=200 -o o1.json; then on o1.json.
    session = _merge_session()
    latest = "LATEST: rename the config loader and keep its tests green"
    source, first, second = tmp_path / "S.json", tmp_path / "o1.json", tmp_path / "o2.json"
    source.write_text(json.dumps(session), encoding="utf-8")
    options = [
        "--context-length", "1000", "--head", "1", "--set", "tail_token_ratio=0",
        "--counter", "rough", "--orphans", "strip", "--set", "summary_min_tokens=200",
    ]  # fmt: skip
    runner = CliRunner()
    for given, written in ((source, first), (first, second)):
        result = runner.invoke(main, ["compress", str(given), *options, "-o", str(written)])
        assert result.exit_code == 0, result.output
    once = json.loads(first.read_text(encoding="utf-8"))
    twice = json.loads(second.read_text(encoding="utf-8"))
    assert latest in user_turns(once)
    assert latest in user_turns(twice)
    # A third pass with more work after the request: still the latest request, kept verbatim.
    grown = [*twice, calls(call("c2", "terminal", {"command": "ruff ."})), tool("c2", "ok")]
    grown.append(assistant(words("more", 150)))
    config = CompactionConfig(
        context_length=1000,
        protect_first_n=1,
        tail_token_ratio=0.0,
        counter="rough",
        orphan_strategy="strip",
        summary_min_tokens=200,
    )
    third = compress(grown, config)
    assert latest in user_turns(third.messages)


def test_a_merged_summary_is_split_at_the_merge_on_the_next_pass() -> None:
    config = CompactionConfig(
        context_length=1000,
        protect_first_n=1,
        tail_token_ratio=0.0,
        counter="rough",
        summary_min_tokens=200,
    )
    once = compress(_merge_session(), config)
    merged = [m for m in once.messages if MERGE_SEPARATOR in content_text(m)]
    assert len(merged) == 1 and merged[0]["role"] == "user"
    recording = Recording()
    grown = [*once.messages, user(words("extra", 150)), assistant("ok"), user("FINAL ask")]
    Compactor(config, recording).compress(grown, force=True)
    request = recording.requests[-1]
    assert request.previous_summary is not None
    # Only the part before the merge is the previous summary (its Active Task quotes the
    # request, as every summary does); the rest is the user's turn again.
    assert MERGE_SEPARATOR not in request.previous_summary
    assert not request.previous_summary.rstrip().endswith("keep its tests green")
    assert any(content_text(turn).startswith("LATEST: rename") for turn in request.turns)


# -- compaction breaks Anthropic's alternation ---------------------------------------------------


def test_a_stray_result_at_the_tail_start_does_not_choose_the_summary_role() -> None:
    messages: list[Message] = [system()]
    for turn in range(6):
        messages += [user(words(f"u{turn}_")), assistant(words(f"a{turn}_"))]
    messages += [{"role": "tool", "tool_call_id": "ghost", "content": "stray"}, user("latest")]
    config = CompactionConfig(
        context_length=4000,
        protect_first_n=1,
        tail_token_ratio=0.0,
        min_tail_messages=2,
        counter="rough",
    )
    result = compress(messages, config)
    roles = [m["role"] for m in result.messages]
    assert roles != ["system", "user", "user"]
    assert errors_for(result.messages, "anthropic") == []
    assert errors_for(result.messages, "openai") == []
    assert "latest" in user_turns(result.messages)


# -- a conversation of nothing but orphan results ----------------------------------------------


def test_a_conversation_of_only_orphan_results_is_an_error_not_an_empty_success(
    tmp_path: Path,
) -> None:
    orphans = [tool("ghost1", "output one"), tool("ghost2", "output two")]
    with pytest.raises(InvalidConversationError, match="nothing of the conversation survives"):
        compress(orphans, CompactionConfig(counter="rough"))
    path = tmp_path / "orphans.json"
    path.write_text(json.dumps(orphans), encoding="utf-8")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["compress", str(path), "--counter", "rough", "-o", str(out)])
    assert result.exit_code == 2
    assert "nothing of the conversation survives" in result.output
    assert not out.exists()


# -- a merged summary swallows the user's own text (hermes' suite) ------------------------------


def test_a_merged_summary_keeps_the_users_own_text_a_user_turn() -> None:
    filler = "word " * 300
    messages = [
        system("You are helpful."),
        user("USER OWN TEXT 1"),
        assistant("reply 2"),
        user("USER BIG 3 " + filler),
        assistant("ASSISTANT BIG 4 " + filler),
        user("USER OWN TEXT 6"),
        assistant("reply 7"),
        user("USER LAST 8"),
    ]
    config = CompactionConfig(context_length=1000, protect_first_n=3, min_tail_messages=3)
    once = compress(messages, config)
    merged = [m for m in once.messages if MERGE_SEPARATOR in content_text(m)]
    assert [summary_parts(content_text(m)).own_text for m in merged] == [  # type: ignore[union-attr]
        "USER OWN TEXT 6"
    ]
    grown = [
        *once.messages,
        assistant("more 9 " + filler),
        user("USER 10 " + filler),
        assistant("reply 11"),
        user("USER LAST 12"),
    ]
    recording = Recording()
    Compactor(config, recording).compress(grown, force=True)
    request = recording.requests[-1]
    assert "USER OWN TEXT 6" not in (request.previous_summary or "")
    own = [turn for turn in request.turns if content_text(turn) == "USER OWN TEXT 6"]
    assert own and own[0]["role"] == "user"


# -- head 0 and the system prompt; the prefix twice ----------------------------------------------


def test_head_zero_keeps_the_system_message_and_adds_the_note() -> None:
    messages: list[Message] = [system("SYSTEM PROMPT")]
    for turn in range(8):
        messages += [user(words(f"u{turn}_", 100)), assistant(words(f"a{turn}_", 100))]
    messages.append(user("latest"))
    config = CompactionConfig(context_length=2000, protect_first_n=0, counter="rough")
    result = compress(messages, config)
    assert result.messages[0]["role"] == "system"
    assert content_text(result.messages[0]).startswith("SYSTEM PROMPT")
    assert result.phase("assemble").details["system_note_added"] is True
    assert errors_for(result.messages, "anthropic") == []


class Echoing(ExtractiveSummarizer):
    """A model that echoes the prefix before its summary, as models often do."""

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        return f"{SUMMARY_PREFIX}\n{super().summarize(request, on_token)}"


def test_a_summary_that_starts_with_the_prefix_does_not_get_it_twice() -> None:
    messages: list[Message] = [system()]
    for turn in range(8):
        messages += [user(words(f"u{turn}_", 100)), assistant(words(f"a{turn}_", 100))]
    messages.append(user("latest"))
    config = CompactionConfig(context_length=2000, counter="rough")
    result = Compactor(config, Echoing()).compress(messages, force=True)
    text = "\n".join(content_text(m) for m in result.messages)
    assert text.count(SUMMARY_PREFIX) == 1


# -- recorded compactions: Claude Code's compact summary is a previous summary -----------------


def test_claude_codes_compact_summary_is_the_previous_summary() -> None:
    claude_summary = (
        f"{CLAUDE_CODE_SUMMARY_OPENING} The conversation is summarized below:\n"
        "Analysis: the user asked to port the parser; src/parser.rs was written."
    )
    messages: list[Message] = [
        user("Port the parser to Rust."),
        assistant("Starting."),
        user("go on"),
        user(claude_summary),
    ]
    for turn in range(6):
        messages += [user(words(f"u{turn}_", 100)), assistant(words(f"a{turn}_", 100))]
    messages.append(user("latest"))
    recording = Recording()
    config = CompactionConfig(context_length=2000, counter="rough")
    result = Compactor(config, recording).compress(messages, force=True)
    request = recording.requests[-1]
    assert request.previous_summary is not None
    assert "src/parser.rs was written" in request.previous_summary
    assert result.iterative
    assert not any(content_text(m).startswith(CLAUDE_CODE_SUMMARY_OPENING) for m in result.messages)


# -- a huge message inside the protected regions ------------------------------------------------


def test_a_huge_tool_output_in_the_tail_is_cut_to_fit_the_window() -> None:
    messages: list[Message] = [system(), user("Read the log and tell me what failed.")]
    for turn in range(10):
        messages += [calls(call(f"c{turn}", "terminal", {"command": f"step {turn}"}))]
        messages += [tool(f"c{turn}", big(f"out{turn}", 2_000))]
    messages += [calls(call("huge", "terminal", {"command": "cat app.log"}))]
    messages += [tool("huge", "head of the log\n" + "x" * 600_000 + "\nERROR at the end")]
    config = CompactionConfig(context_length=8_000, counter="rough")
    result = compress(messages, config)
    assert result.tokens_after <= config.context_length
    assert result.fit is not None and result.fit.cuts
    cut = result.fit.cuts[0]
    assert cut.kind == "tool_output" and cut.chars_before > 600_000 > cut.chars_after
    huge = result.messages[cut.message_index]["content"]
    assert huge.startswith("head of the log") and huge.endswith("ERROR at the end")
    assert "chars cut to fit the context window …]" in huge
    assert result.fates[len(messages) - 1] == "cut_to_fit"
    assert errors_for(result.messages, "anthropic") == []


def test_a_huge_argument_stays_valid_json_when_cut() -> None:
    content = "line of the file\n" * 40_000
    arguments = {"path": "big.txt", "content": content}
    messages: list[Message] = [
        system(),
        user("Write the file."),
        calls(call("w", "write_file", arguments)),
        tool("w", "wrote big.txt"),
        assistant("Done."),
    ]
    config = CompactionConfig(context_length=4_000, counter="rough")
    result = compress(messages, config)
    assert result.tokens_after <= config.context_length
    shrunk = json.loads(result.messages[2]["tool_calls"][0]["function"]["arguments"])
    assert shrunk["path"] == "big.txt"
    assert "chars cut to fit the context window" in shrunk["content"]
    assert shrunk["content"].startswith("line of the file")


def test_a_request_larger_than_the_window_is_never_cut_and_says_so() -> None:
    request = "Explain this log:\n" + "log line\n" * 6_000
    messages = [system(), user("hi"), assistant("hello"), user(words("x", 400)), assistant("ok")]
    messages += [user(request), assistant("Reading.")]
    config = CompactionConfig(context_length=2_000, counter="rough")
    result = compress(messages, config)
    assert request in user_turns(result.messages)
    assert result.fit is not None and result.fit.request_exceeds_window
    assert "latest user request alone" in (result.fit.cannot_fit or "")
    assert result.to_dict()["fit"]["request_exceeds_window"] is True


# -- the rough counter is honoured everywhere ----------------------------------------------------


def test_the_extractive_summariser_counts_with_the_compactors_counter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import compaction.summarizers.extractive as extractive
    from compaction.tokens import make_counter

    def no_tiktoken(kind: str = "tiktoken", model: str = "gpt-4o") -> object:
        if kind != "rough":
            raise AssertionError("counter='rough' must not build a tiktoken counter")
        return make_counter(kind, model)

    monkeypatch.setattr(extractive, "make_counter", no_tiktoken)
    messages: list[Message] = [system()]
    for turn in range(8):
        messages += [user(words(f"u{turn}_", 100)), assistant(words(f"a{turn}_", 100))]
    messages.append(user("latest"))
    config = CompactionConfig(context_length=2000, counter="rough")
    result = compress(messages, config)
    assert result.summary is not None and result.fallback_used is None
