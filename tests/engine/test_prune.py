"""Phase 1 on hand-built conversations: dedupe (newest kept, with its table), one-liners only
between the head and the protected tail, idempotence, and argument shrinking."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from engine_helpers import assistant, big, call, calls, coding_session, system, tool, user

from compaction.config import CompactionConfig
from compaction.deferred import Deferred, detail, stored
from compaction.phases.prune import TRUNCATION_SUFFIX, prune, shrink_arguments
from compaction.result import Fate
from compaction.text.one_liners import DUPLICATE_MARKER, STUB_RESULT
from compaction.tokens import RoughCounter

#: A small window so a few hand-written messages already exceed the tail budget (ceiling 150).
SMALL = CompactionConfig(context_length=1_000, counter="rough")
COUNTER = RoughCounter()


def run(messages: list[dict[str, Any]], config: CompactionConfig = SMALL) -> Any:
    before = copy.deepcopy(messages)
    result = prune(messages, config, COUNTER)
    assert messages == before, "prune mutated its input"
    return result


def test_one_liners_only_between_head_and_protected_tail() -> None:
    messages = coding_session(turns=6, output_chars=1_500)
    result = run(messages)
    head_end = result.details["protected_head_end"]
    tail_start = result.details["protected_tail_start"]
    assert head_end == 3
    # The raw walk (no alignment here) holds exactly min_tail_messages: call, result, reply.
    assert tail_start == 24
    summarised = sorted(i for i, fate in result.fates.items() if fate == Fate.CUT_TO_ONE_LINE)
    assert summarised == [5, 9, 13, 17, 21]
    for index in summarised:
        assert messages[index]["content"].count("\n") + 1 == 21
        turn = (index - 5) // 4
        assert result.messages[index]["content"] == (
            f"[terminal] ran `pytest tests/m{turn}` -> exit ?, 21 lines output"
        )
        assert result.messages[index]["tool_call_id"] == f"call_{turn}"
    assert result.messages[25] == messages[25]
    assert result.details["summarised_count"] == 5
    row = result.details["summaries"][0]
    assert row == {
        "index": 5,
        "tool": "terminal",
        "line": result.messages[5]["content"],
        "chars": 1_500,
    }
    assert result.tokens_after < result.tokens_before
    assert result.tokens_before == COUNTER.count_messages(messages)
    assert result.tokens_after == COUNTER.count_messages(result.messages)
    assert result.origins == list(range(len(messages)))


def test_head_outputs_are_never_summarised() -> None:
    messages = [
        user("look at the repo"),
        calls(call("h1", "read_file", {"path": "a.py"})),
        tool("h1", big("head read", 2_000)),
        *coding_session(turns=4)[3:],
    ]
    result = run(messages)
    assert result.details["protected_head_end"] == 3
    assert result.messages[2] == messages[2]
    assert 2 not in result.fates


def test_short_outputs_are_left_alone() -> None:
    messages = coding_session(turns=5, output_chars=200)
    result = run(messages)
    assert Fate.CUT_TO_ONE_LINE not in result.fates.values()
    assert result.messages == messages


def test_dedupe_keeps_the_newest_copy_and_records_the_table() -> None:
    same = big("identical listing", 800)
    messages = [
        system(),
        user("go"),
        assistant("ok"),
        calls(call("a", "terminal", {"command": "ls -R"})),
        tool("a", same),
        calls(call("b", "terminal", {"command": "ls -R"})),
        tool("b", same),
        assistant("again"),
        calls(call("c", "terminal", {"command": "ls -R"})),
        tool("c", same),
        user("thanks"),
    ]
    result = run(messages, SMALL.replace(tail_token_ratio=1.0))
    assert result.messages[4]["content"] == DUPLICATE_MARKER
    assert result.messages[6]["content"] == DUPLICATE_MARKER
    assert result.messages[9]["content"] == same
    assert result.fates[4] == Fate.DEDUPLICATED and result.fates[6] == Fate.DEDUPLICATED
    table = result.details["dedupe"]
    assert [(row["index"], row["kept_index"]) for row in table] == [(4, 9), (6, 9)]
    assert [(row["tool_call_id"], row["kept_tool_call_id"]) for row in table] == [
        ("a", "c"),
        ("b", "c"),
    ]
    assert table[0]["chars"] == 800
    assert len(table[0]["hash"]) == 32
    assert result.details["deduplicated_count"] == 2


def test_dedupe_digests_wait_for_a_reader_of_the_report() -> None:
    same = big("identical listing", 800)
    messages = [
        system(),
        user("go"),
        assistant("ok"),
        calls(call("a", "terminal", {"command": "ls -R"})),
        tool("a", same),
        calls(call("b", "terminal", {"command": "ls -R"})),
        tool("b", same),
        user("thanks"),
    ]
    result = prune(messages, SMALL.replace(tail_token_ratio=1.0), COUNTER)
    stored_details = stored(result, "details")
    # The counts and the output are there at once; the MD5 rows are computed on first read.
    assert detail(result, "deduplicated_count") == 1
    assert isinstance(stored_details, Deferred) and not stored_details.resolved
    assert result.messages[4]["content"] == DUPLICATE_MARKER
    row = result.details["dedupe"][0]
    assert row["hash"] == hashlib.md5(same.encode("utf-8")).hexdigest()
    assert (row["index"], row["kept_index"], row["chars"]) == (4, 6, 800)
    assert list(result.details) == [
        "protected_head_end",
        "protected_tail_start",
        "dedupe",
        "summaries",
        "args_truncated",
        "deduplicated_count",
        "summarised_count",
        "args_truncated_count",
    ]


def test_dedupe_reaches_into_the_tail_but_leaves_the_head_alone() -> None:
    same = big("repeated", 500)
    messages = [
        user("go"),
        calls(call("a", "read_file", {"path": "x"})),
        tool("a", same),  # in the head: protected, never modified
        user("now again"),
        calls(call("b", "read_file", {"path": "x"})),
        tool("b", same),  # in the protected tail: deduplicated (lossless, newest copy kept)
        user("and once more"),
        calls(call("c", "read_file", {"path": "x"})),
        tool("c", same),
    ]
    result = run(messages)
    assert result.messages[2]["content"] == same
    assert result.messages[5]["content"] == DUPLICATE_MARKER
    assert result.messages[8]["content"] == same


def test_output_at_prune_min_chars_is_not_deduped() -> None:
    same = "y" * 200
    messages = [
        user("go"),
        calls(call("a", "t")),
        tool("a", same),
        calls(call("b", "t")),
        tool("b", same),
    ]
    result = run(messages)
    assert result.fates == {}


def test_idempotent_on_already_pruned_content() -> None:
    messages = coding_session(turns=6, output_chars=1_500)
    once = run(messages)
    twice = run(once.messages)
    assert twice.messages == once.messages
    assert twice.fates == {}
    stubbed = [*messages[:5], tool("call_0", STUB_RESULT), *messages[6:]]
    assert run(stubbed).messages[5]["content"] == STUB_RESULT


def test_summary_uses_the_matching_call_and_unknown_for_a_lost_call() -> None:
    messages = [
        system(),
        user("go"),
        assistant("ok"),
        calls(call("r1", "Read", {"file_path": "src/app.py"})),
        tool("r1", big("file", 3_000)),
        tool("ghost", big("orphan output", 700)),
        *coding_session(turns=2)[3:],
    ]
    result = run(messages)
    assert result.messages[4]["content"] == "[Read] read src/app.py from line 1 (3,000 chars)"
    assert result.messages[5]["content"] == "[unknown] (700 chars result)"


def test_long_arguments_are_shrunk_recursively_as_json() -> None:
    long_text = "é" * 300
    arguments = {
        "path": "notes.md",
        "content": long_text,
        "nested": {"items": ["short", "x" * 250], "n": 3},
    }
    raw = json.dumps(arguments)
    assert len(raw) > 500
    messages = [
        system(),
        user("write it"),
        assistant("ok"),
        calls(call("w1", "write_file", arguments)),
        tool("w1", "written"),
        *coding_session(turns=2)[3:],
    ]
    result = run(messages)
    assert result.fates[3] == Fate.ARGUMENTS_SHORTENED
    shrunk = result.messages[3]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(shrunk) == {
        "path": "notes.md",
        "content": "é" * 200 + "...[truncated]",
        "nested": {"items": ["short", "x" * 200 + "...[truncated]"], "n": 3},
    }
    assert "é" in shrunk  # non-ASCII kept, not \\u-escaped
    assert result.details["args_truncated"] == [
        {
            "index": 3,
            "tool_call_id": "w1",
            "tool": "write_file",
            "chars_before": len(raw),
            "chars_after": len(shrunk),
        }
    ]
    # The original call dict is untouched.
    assert messages[3]["tool_calls"][0]["function"]["arguments"] == raw


def test_invalid_json_arguments_are_left_alone() -> None:
    broken = '{"content": "' + "z" * 600  # not closed: slicing would not make it valid
    messages = [
        system(),
        user("go"),
        assistant("ok"),
        calls(call("w1", "write_file", broken)),
        tool("w1", "ok"),
        *coding_session(turns=2)[3:],
    ]
    result = run(messages)
    assert 3 not in result.fates
    assert result.messages[3]["tool_calls"][0]["function"]["arguments"] == broken
    assert shrink_arguments(broken, 200) is None


def test_short_arguments_and_protected_calls_are_kept() -> None:
    long_call = calls(call("t1", "write_file", {"content": "q" * 700}))
    messages = [
        system(),
        user("go"),
        assistant("ok"),
        calls(call("s1", "terminal", {"command": "ls"})),
        tool("s1", "a"),
        user("write"),
        long_call,
        tool("t1", "done"),
    ]
    result = run(messages)
    # The long call sits in the protected tail.
    assert result.details["protected_tail_start"] <= 6
    assert result.messages[6] == long_call
    assert result.fates == {}


def test_shrink_arguments_suffix() -> None:
    assert TRUNCATION_SUFFIX == "...[truncated]"
    assert shrink_arguments('{"a": "' + "b" * 10 + '"}', 4) == '{"a": "bbbb...[truncated]"}'
    assert shrink_arguments("[1, 2]", 4) == "[1, 2]"


def test_a_reused_call_id_names_the_call_each_result_answers() -> None:
    # tau-bench answers two different calls with one id: each result's one-liner must name its
    # own call, not the last call that carried the id.
    messages = [
        system(),
        user("Upgrade my booking."),
        assistant("Upgrading."),
        calls(call("dup", "update_reservation", {"reservation_id": "M20IZO"})),
        tool("dup", "Error: payment method not found\n" + big("detail", 800)),
        calls(call("dup", "get_user_details", {"user_id": "aarav"})),
        tool("dup", big("user record", 800)),
        user("Thanks."),
        assistant("Done."),
        user("Bye."),
        assistant("Bye."),
    ]
    result = run(
        messages, CompactionConfig(context_length=1_000, counter="rough", protect_first_n=2)
    )
    assert result.fates[4] == Fate.CUT_TO_ONE_LINE and result.fates[6] == Fate.CUT_TO_ONE_LINE
    assert result.messages[4]["content"].startswith("[update_reservation]")
    assert result.messages[6]["content"].startswith("[get_user_details]")
