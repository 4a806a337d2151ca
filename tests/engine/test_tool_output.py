"""decode_tool_output and friends: JSON-wrapped tool outputs decoded for people and summaries."""

from __future__ import annotations

import json

import pytest

from compaction.text.one_liners import summarize_tool_output
from compaction.text.tool_output import (
    decode_tool_output,
    format_tool_output,
    may_be_wrapped,
    parse_tool_output,
)

HERMES = json.dumps({"output": "test\tRun 3\nok\n", "exit_code": 1, "error": None})
CODEX = json.dumps(
    {
        "output": "Success. Updated the following files:\nM web/src/Dash.tsx\n",
        "metadata": {"exit_code": 0, "duration_seconds": 0.4},
    }
)


def test_hermes_wrapper_decodes_to_real_newlines_and_tabs() -> None:
    assert "\\n" in HERMES and "\\t" in HERMES  # as stored: escapes, one line
    assert decode_tool_output(HERMES) == "test\tRun 3\nok\n"
    parsed = parse_tool_output(HERMES)
    assert parsed.wrapped and parsed.exit_code == 1 and parsed.error is None


def test_codex_wrapper_reads_the_exit_code_and_metadata() -> None:
    parsed = parse_tool_output(CODEX)
    assert parsed.text.splitlines() == [
        "Success. Updated the following files:",
        "M web/src/Dash.tsx",
    ]
    assert parsed.exit_code == 0
    assert parsed.metadata == {"duration_seconds": "0.4"}


def test_stdout_stderr_wrapper_keeps_the_error_text() -> None:
    raw = json.dumps(
        {"stdout": "collected 3 items\n", "stderr": "E   KeyError: 'id'", "returncode": 2}
    )
    parsed = parse_tool_output(raw)
    assert parsed.text == "collected 3 items\nE   KeyError: 'id'"
    assert parsed.exit_code == 2 and parsed.error == "E   KeyError: 'id'"


def test_error_field_is_appended_to_the_text() -> None:
    raw = json.dumps({"output": "", "exit_code": 127, "error": "bash: foo: command not found"})
    assert decode_tool_output(raw) == "bash: foo: command not found"


def test_json_string_literal_and_content_blocks_decode() -> None:
    assert decode_tool_output(json.dumps("a\nb")) == "a\nb"
    blocks = json.dumps([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}])
    assert decode_tool_output(blocks) == "one\ntwo"


def test_other_json_is_kept_for_summaries_and_pretty_printed_for_reading() -> None:
    raw = '{"users": [{"id": 1, "name": "Zoë"}], "total_count": 1}'
    assert decode_tool_output(raw) == raw
    assert format_tool_output(raw) == json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    assert "Zoë" in format_tool_output(raw)


def test_json_with_multi_line_fields_reads_field_by_field() -> None:
    raw = json.dumps({"success": True, "diff": "--- a/x.py\n+++ b/x.py\n-old\n+new\n"})
    assert format_tool_output(raw) == "success: true\ndiff:\n--- a/x.py\n+++ b/x.py\n-old\n+new"
    assert decode_tool_output(raw) == raw  # summaries still read the document itself


@pytest.mark.parametrize(
    "text",
    [
        "plain text output\nwith lines",
        "",
        "   ",
        "{not json at all}",
        '{"output": "unterminated',
        '{"output": 42}',
        "[1, 2, 3",
        "{" * 5 + "}" * 4,
        "\x00\x01{}",
    ],
)
def test_anything_else_comes_back_unchanged(text: str) -> None:
    parsed = parse_tool_output(text)
    assert parsed.text == text if not parsed.is_json else parsed.raw == text
    assert decode_tool_output(text) == text


def test_may_be_wrapped_rules_out_other_documents_without_parsing() -> None:
    assert may_be_wrapped(HERMES) and may_be_wrapped(CODEX)
    assert may_be_wrapped(json.dumps("a\nb")) and may_be_wrapped("[1]")
    assert not may_be_wrapped('{"users": [1, 2], "total_count": 2}')
    assert not may_be_wrapped('plain text with "output" in it')


def test_deep_nesting_does_not_raise() -> None:
    deep = "[" * 200_000 + "]" * 200_000  # past the JSON parser's recursion limit
    assert decode_tool_output(deep) == deep
    assert format_tool_output(deep) == deep


def test_huge_wrapped_output_decodes_whole() -> None:
    body = "line of test output\t42\n" * 100_000  # 2.3 MB
    raw = json.dumps({"output": body, "exit_code": 0})
    assert decode_tool_output(raw) == body


def test_non_string_input_is_survived() -> None:
    assert decode_tool_output(123) == "123"  # type: ignore[arg-type]


def test_one_line_summary_reads_inside_the_wrapper() -> None:
    line = summarize_tool_output("terminal", {"command": "pytest -x"}, HERMES)
    assert line.startswith("[terminal] ran `pytest -x` -> exit 1, 3 lines output")
    codex_line = summarize_tool_output("exec_command", {"cmd": "apply_patch"}, CODEX)
    assert "-> exit 0, 3 lines output" in codex_line  # the exit code inside "metadata"
    failing = json.dumps({"output": "", "exit_code": 2, "error": "ValueError: bad id"})
    assert summarize_tool_output("bash", {"command": "make"}, failing).endswith(
        "— ValueError: bad id"
    )
