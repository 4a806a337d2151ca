"""Google Antigravity trajectory exports: the real corpus session and hand-written minimal ones.

Expected numbers are read from the raw steps with plain json, not from the importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_helpers import DATA, annotated, assert_paired, corpus_file, roles

import compaction
from compaction.formats import antigravity, detect_format, load_conversation
from compaction.formats.source import parse_text
from compaction.messages import INJECTED_KEY, content_text, is_injected, tool_calls
from compaction.provider_rules import errors, validate

CORPUS_NAME = "antigravity-applysense__transcript.jsonl"
RESULT_TYPES = {
    "CODE_ACTION",
    "SEARCH_WEB",
    "LIST_DIRECTORY",
    "GENERIC",
    "VIEW_FILE",
    "RUN_COMMAND",
    "GREP_SEARCH",
    "READ_URL_CONTENT",
    "BROWSER_SUBAGENT",
}


def _step(index: int, source: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "step_index": index,
        "source": source,
        "type": kind,
        "status": fields.pop("status", "DONE"),
        "created_at": f"2026-06-01T10:00:{index:02d}Z",
        **fields,
    }


def _jsonl(steps: list[Any], tail: str = "") -> str:
    return "\n".join(json.dumps(s) for s in steps) + "\n" + tail


def test_corpus_session() -> None:
    path = corpus_file(CORPUS_NAME)
    lines = path.read_text().splitlines()
    steps = [json.loads(line) for line in lines]
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "antigravity"

    planners = [s for s in steps if s["type"] == "PLANNER_RESPONSE"]
    raw_calls = [c for s in planners for c in s.get("tool_calls") or []]
    results = [s for s in steps if s["type"] in RESULT_TYPES]
    prompts = [s for s in steps if s["type"] == "USER_INPUT"]
    assert (len(planners), len(raw_calls), len(results), len(prompts)) == (83, 81, 81, 2)

    calls = [c for m in annotated(conversation) for c in tool_calls(m)]
    assert [c["function"]["name"] for c in calls] == [c["name"] for c in raw_calls]
    # Every JSON-encoded arg value is decoded into a proper arguments object. The export cut
    # 26 long values (2,048 characters, then "\n<truncated N bytes>"): no longer valid JSON,
    # they are decoded up to the cut and keep the marker.
    truncated = 0
    for call, raw in zip(calls, raw_calls, strict=True):
        decoded = json.loads(call["function"]["arguments"])
        assert set(decoded) == set(raw["args"])
        for key, value in raw["args"].items():
            try:
                assert decoded[key] == json.loads(value)
            except json.JSONDecodeError:
                truncated += 1
                marker = value[value.rindex("\n<truncated ") :]
                assert isinstance(decoded[key], str) and decoded[key].endswith(marker)
                assert not decoded[key].startswith('"') and len(decoded[key]) > 1000
    assert truncated == 26
    assert any("truncated 26 tool-call argument(s)" in w for w in conversation.warnings)
    assert conversation.metadata["model"] == "Gemini 3.5 Flash (High)"  # from a settings note
    tool_rows = [m for m in annotated(conversation) if m["role"] == "tool"]
    assert [m["content"] for m in tool_rows] == [s["content"] for s in results]
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered and len(defined) == len(raw_calls)

    assert roles(conversation).count("assistant") == len(planners)
    # Each prompt is the user's `<USER_REQUEST>` and, split off and marked, the IDE's metadata.
    own = [m for m in annotated(conversation) if m["role"] == "user" and not is_injected(m)]
    metadata = [m for m in annotated(conversation) if m.get(INJECTED_KEY) == "context"]
    assert len(own) == len(metadata) == len(prompts)
    assert set(roles(conversation)) <= {"system", "user", "assistant", "tool"}
    assert len(annotated(conversation)) == len(planners) + 2 * len(prompts) + len(results)
    assert own[-1]["content"].startswith("<USER_REQUEST>")
    assert own[-1]["content"].endswith("</USER_REQUEST>")
    assert "\n".join([own[-1]["content"], metadata[-1]["content"]]) == prompts[-1]["content"]
    assert annotated(conversation)[-1]["content"] == steps[-1]["content"]
    assert conversation.title is not None and conversation.title.startswith("Repository Reference")

    thinking = [s["thinking"] for s in planners if s.get("thinking")]
    assert len(thinking) == 7
    assert [m["reasoning"] for m in annotated(conversation) if m.get("reasoning")] == thinking
    assert not any(t[:40] in content_text(m) for t in thinking for m in annotated(conversation))

    report = conversation.report
    assert report is not None
    assert report.records == len(lines) == 167
    assert report.imported + report.skipped_total == report.records
    # The one CONVERSATION_HISTORY step has no content: a marker, reported by its type.
    assert next(s for s in steps if s["type"] == "CONVERSATION_HISTORY").get("content") is None
    assert report.skipped["CONVERSATION_HISTORY"].lines == [2]
    assert report.skipped_total == 1
    # step_index 4 is missing from the export; that is said, not hidden.
    indices = [s["step_index"] for s in steps]
    assert sorted(set(range(indices[-1] + 1)) - set(indices)) == [4]
    assert any("step_index 4" in w for w in conversation.warnings)

    result = compaction.compress(
        annotated(conversation), compaction.CompactionConfig(context_length=32000)
    )
    assert result.tokens_after < result.tokens_before
    for provider in ("openai", "anthropic"):
        assert errors(validate(result.messages, provider)) == []


def _handmade() -> str:
    steps: list[Any] = [
        _step(
            0,
            "USER_EXPLICIT",
            "USER_INPUT",
            content="<USER_REQUEST>\nRename foo to bar\n</USER_REQUEST>\n"
            "<ADDITIONAL_METADATA>\nlocal time\n</ADDITIONAL_METADATA>",
        ),
        _step(1, "SYSTEM", "CONVERSATION_HISTORY"),
        _step(
            2,
            "MODEL",
            "PLANNER_RESPONSE",
            content="I will look at the file and run the tests.",
            thinking="**Plan**\nRead, then test.",
            tool_calls=[
                {"name": "view_file", "args": {"AbsolutePath": '"/repo/foo.py"'}},
                {"name": "run_command", "args": {"CommandLine": '"pytest -q"', "Blocking": "true"}},
            ],
        ),
        # The command's step comes first: tied to run_command by its type, not by position.
        _step(
            3,
            "MODEL",
            "RUN_COMMAND",
            status="ERROR",
            content="Created At: x\nCompleted At: y\n1 failed",
            error="exit status 1",
        ),
        _step(4, "MODEL", "VIEW_FILE", content="Created At: x\nCompleted At: y\ndef foo(): ..."),
        _step(5, "SYSTEM", "EPHEMERAL_MESSAGE", content="<EPHEMERAL_MESSAGE>remember</>"),
        _step(6, "MODEL", "TELEPORT_STEP", content="something new"),
        {"step_index": 7, "type": 5},
        _step(8, "MODEL", "PLANNER_RESPONSE", content="Renamed foo to bar."),
    ]
    return _jsonl(steps, tail='{"step_index": 9, "sou')


def test_handmade_session() -> None:
    text = _handmade()
    conversation = load_conversation(text)
    assert conversation.format == "antigravity"
    assert roles(conversation) == [
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "assistant",
    ]
    assert (
        annotated(conversation)[0]["content"]
        == "<USER_REQUEST>\nRename foo to bar\n</USER_REQUEST>"
    )
    assert annotated(conversation)[1][INJECTED_KEY] == "context"  # the IDE's metadata
    assert conversation.title == "Rename foo to bar"
    turn = annotated(conversation)[2]
    assert turn["reasoning"] == "**Plan**\nRead, then test."
    assert "Plan" not in turn["content"]
    view, run = tool_calls(turn)
    assert json.loads(view["function"]["arguments"]) == {"AbsolutePath": "/repo/foo.py"}
    assert json.loads(run["function"]["arguments"]) == {
        "CommandLine": "pytest -q",
        "Blocking": True,
    }
    assert [m["tool_call_id"] for m in annotated(conversation)[3:5]] == [view["id"], run["id"]]
    assert annotated(conversation)[3]["content"].endswith("def foo(): ...")
    failed = annotated(conversation)[4]["content"]
    assert "1 failed" in failed and "Error: exit status 1" in failed
    defined, answered = assert_paired(annotated(conversation))
    assert defined == answered == {view["id"], run["id"]}
    assert annotated(conversation)[5]["content"] == "something new"  # unknown type, kept
    assert annotated(conversation)[-1]["content"] == "Renamed foo to bar."

    report = conversation.report
    assert report is not None
    assert report.records == len(text.splitlines()) == 10
    assert report.imported + report.skipped_total == report.records
    assert report.skipped["CONVERSATION_HISTORY"].lines == [2]
    assert report.skipped["EPHEMERAL_MESSAGE"].lines == [6]
    assert report.skipped["malformed"].lines == [8]
    assert report.skipped["unreadable line"].lines == [10]
    warnings = "\n".join(conversation.warnings)
    assert "line 8" in warnings and "malformed" in warnings
    assert "line 7" in warnings and "TELEPORT_STEP" in warnings
    assert "line 4" in warnings and "failed" in warnings
    assert "line 10" in warnings


def test_user_actions_orphans_checkpoints_and_cut_off_calls() -> None:
    steps = [
        _step(0, "USER_EXPLICIT", "USER_INPUT", content="<USER_REQUEST>\nGo\n</USER_REQUEST>"),
        _step(1, "MODEL", "VIEW_FILE", content="a result whose call is not in the export"),
        _step(2, "USER_EXPLICIT", "RUN_COMMAND", content="$ make\nok"),
        _step(3, "SYSTEM", "CHECKPOINT", content="Summary of the work so far."),
        _step(
            4,
            "MODEL",
            "PLANNER_RESPONSE",
            content="",
            tool_calls=[{"name": "grep_search", "args": {"Query": '"foo"'}}],
        ),
    ]
    conversation = load_conversation(_jsonl(steps))
    assert roles(conversation) == ["user", "assistant", "tool", "user", "user", "assistant"]
    assert tool_calls(annotated(conversation)[1])[0]["function"]["name"] == "view_file"
    assert annotated(conversation)[3]["content"] == "$ make\nok"
    (checkpoint,) = conversation.compactions
    assert checkpoint.position == 4 and checkpoint.summary == "Summary of the work so far."
    assert annotated(conversation)[-1]["content"] is None
    warnings = "\n".join(conversation.warnings)
    assert "line 2" in warnings and "no PLANNER_RESPONSE call" in warnings
    assert "line 3" in warnings and "the user ran" in warnings
    assert "no result step" in warnings
    report = conversation.report
    assert report is not None and report.imported == report.records == 5


def test_sniff_is_content_based_and_leaves_other_formats_alone() -> None:
    assert antigravity.sniff(parse_text(_handmade()))[0]
    for path in sorted(Path(DATA).glob("*")):
        if path.name.startswith("antigravity-"):
            continue
        if path.suffix in (".json", ".jsonl"):
            assert not antigravity.sniff(parse_text(path.read_text()))[0], path.name
    matched, reason = antigravity.sniff(parse_text('{"step": 1, "type": "USER_INPUT"}\n'))
    assert not matched and reason


def test_user_sourced_steps_answer_only_a_call_they_fit() -> None:
    steps = [
        _step(0, "USER_EXPLICIT", "USER_INPUT", content="<USER_REQUEST>\nTest it\n</USER_REQUEST>"),
        _step(
            1,
            "MODEL",
            "PLANNER_RESPONSE",
            content="Running the tests.",
            tool_calls=[
                {"name": "view_file", "args": {"AbsolutePath": '"/a.py"'}},
                {"name": "run_command", "args": {"CommandLine": '"pytest"'}},
            ],
        ),
        # The user opened a file of their own (no view_file fits a RUN_COMMAND)...
        _step(2, "USER_EXPLICIT", "GREP_SEARCH", content="user's own search"),
        # ...and approved the model's command, whose step is then marked as the user's.
        _step(3, "USER_EXPLICIT", "RUN_COMMAND", content="2 passed"),
        _step(4, "MODEL", "VIEW_FILE", content="print('a')"),
    ]
    conversation = load_conversation(_jsonl(steps))
    assert roles(conversation) == ["user", "assistant", "tool", "tool", "user"]
    view, run = tool_calls(annotated(conversation)[1])
    assert annotated(conversation)[2] == {
        "role": "tool",
        "tool_call_id": view["id"],
        "content": "print('a')",
    }
    assert annotated(conversation)[3]["tool_call_id"] == run["id"]
    assert annotated(conversation)[3]["content"] == "2 passed"
    assert annotated(conversation)[4]["content"] == "user's own search"
    assert_paired(annotated(conversation))
