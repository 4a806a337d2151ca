"""Issue 20, the command line's share: what an adversarial pass found, each reproduced here.

Output over special files and symlinks (1), lone surrogates (2), `eval` when every session
fails and derived budgets beyond the config's range (5), terminal escapes in untrusted text (6),
the same import warnings from every command (9), tool arguments that are not JSON (10).
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_sessions import session
from click.testing import CliRunner, Result

from compaction.cli import main

SMALL = ["--context-length", "2000", "--counter", "rough"]


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args], catch_exceptions=False)


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_json(tmp_path / "session.json", session())


# -- 1. output over FIFOs, devices and symlinks ------------------------------------------------


def test_output_to_dev_null_leaves_it_a_character_device(source: Path) -> None:
    result = run("compress", source, "-o", "/dev/null", *SMALL)
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    result = run("convert", source, "--to", "anthropic", "-o", "/dev/null")
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_output_and_report_both_to_dev_null_is_allowed(source: Path) -> None:
    result = run("compress", source, "-o", "/dev/null", "--report", "/dev/null", *SMALL)
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_output_to_dev_full_is_one_error_line_and_stays_a_device(source: Path) -> None:
    result = run("compress", source, "-o", "/dev/full", *SMALL)
    assert result.exit_code == 2
    assert "/dev/full: cannot write:" in result.output
    assert "Traceback" not in result.output
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_output_to_a_fifo_is_written_through_to_its_reader(source: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:
            received.append(stream.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    result = run("compress", source, "-o", fifo, *SMALL)
    reader.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO, not a regular file
    messages = json.loads(received[0])
    assert isinstance(messages, list) and messages
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_output_through_a_symlink_writes_its_target_and_keeps_the_link(
    source: Path, tmp_path: Path
) -> None:
    target = tmp_path / "real.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = run("compress", source, "-o", link, *SMALL)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert isinstance(json.loads(target.read_text(encoding="utf-8")), list)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the target's mode is kept


def test_output_through_a_dangling_symlink_creates_its_target(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = run("convert", source, "--to", "openai", "-o", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert json.loads(target.read_text(encoding="utf-8"))["messages"]


def test_output_to_a_socket_is_refused_with_one_line(source: Path, tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        result = run("compress", source, "-o", path, *SMALL)
    finally:
        server.close()
    assert result.exit_code == 2
    assert "a socket" in result.output and "Traceback" not in result.output
    assert stat.S_ISSOCK(os.stat(path).st_mode)


# -- 2. lone surrogates ------------------------------------------------------------------------


def with_lone_surrogate(tmp_path: Path) -> Path:
    messages = session()
    messages[1]["content"] = "Fix a \ud800 the tests"  # json.dumps writes it as "\ud800"
    return write_json(tmp_path / "surrogate.json", messages)


SURROGATE_WARNING = "message 1: 1 lone surrogate(s) (text that is not valid Unicode) replaced"


@pytest.mark.parametrize(
    "command",
    [
        ["compress", *SMALL],
        ["inspect", "--counter", "rough"],
        ["convert", "--to", "anthropic"],
        ["sweep", "--param", "summary_ratio=0.1,0.2", "--context-length", "2000"],
    ],
)
def test_a_lone_surrogate_is_replaced_and_reported(tmp_path: Path, command: list[str]) -> None:
    path = with_lone_surrogate(tmp_path)
    result = run(command[0], path, *command[1:])
    assert result.exit_code == 0, result.output
    assert SURROGATE_WARNING in result.output
    assert "\ud800" not in result.output


def test_a_lone_surrogate_is_replaced_in_the_written_output(tmp_path: Path) -> None:
    path = with_lone_surrogate(tmp_path)
    output = tmp_path / "out.json"
    result = run("compress", path, "-o", output, *SMALL)
    assert result.exit_code == 0, result.output
    text = output.read_text(encoding="utf-8")
    assert "Fix a \ufffd the tests" in text


def test_validate_messages_replaces_lone_surrogates_without_touching_the_input() -> None:
    from compaction.input.checks import validate_messages

    messages = [
        {"role": "user", "content": "a \ud800"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": "\udfff"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "ok"}]},
    ]
    checked, repairs = validate_messages(messages)
    assert checked[0]["content"] == "a \ufffd"
    assert checked[1]["tool_calls"][0]["function"]["arguments"] == "\ufffd"
    assert checked[2] is messages[2]  # nothing to replace: not copied
    assert messages[0]["content"] == "a \ud800"  # the caller's list is never modified
    assert [r.split(":")[0] for r in repairs if "surrogate" in r] == ["message 0", "message 1"]
    json.dumps(checked, ensure_ascii=False).encode("utf-8")  # writable at last


def test_compactor_compress_accepts_a_lone_surrogate() -> None:
    from compaction import CompactionConfig, Compactor

    messages = session()
    messages[4]["content"] = "run \udc80 module"
    result = Compactor(CompactionConfig(context_length=2000, counter="rough")).compress(
        messages, force=True
    )
    json.dumps(result.messages, ensure_ascii=False).encode("utf-8")


# -- 6. terminal escapes in untrusted text -----------------------------------------------------

OSC52 = "\x1b]52;c;aGVsbG8=\x07"  # writes "hello" to the clipboard
OSC0 = "\x1b]0;pwned\x07"  # sets the window title
RAW = ("\x1b", "\x07", "\x9b")


def assert_no_raw_escapes(result: Result) -> None:
    # Click's `output` holds stdout and stderr interleaved: both reach the terminal.
    for character in RAW:
        assert character not in result.output, (character, result.output[-2000:])


def escape_session(tmp_path: Path) -> Path:
    """A Claude Code session: escapes in the user's text (the title), the agent's answer, and
    the type of a record the importer skips (shown in the import report)."""
    from claude_records import record

    records = [
        record("user", "a", None, f"start {OSC0} the task {OSC52}"),
        {"type": f"noise{OSC52}", "uuid": "z", "sessionId": "live"},
        record("assistant", "b", "a", f"working {OSC52} \x9b31m on it"),
    ]
    path = tmp_path / "escapes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["inspect"],
        ["compress", *SMALL],
        ["convert", "--to", "anthropic"],
        ["validate"],
        ["validate", "--json"],
        ["simulate", "--context-length", "2000"],
        ["eval", "--strategies", "head-tail,compaction"],
        ["sweep", "--param", "summary_ratio=0.1", "--context-length", "2000"],
    ],
)
def test_escapes_in_content_titles_and_record_types_never_reach_the_terminal_raw(
    tmp_path: Path, command: list[str]
) -> None:
    result = run(command[0], escape_session(tmp_path), *command[1:])
    assert result.exit_code in (0, 1), result.output
    assert_no_raw_escapes(result)


def test_inspect_shows_escapes_in_previews_and_the_import_report(tmp_path: Path) -> None:
    result = run("inspect", escape_session(tmp_path))
    assert result.exit_code == 0, result.output
    assert "start \\x1b]0;pwned\\x07 the task" in result.output  # the preview, escaped
    assert "skipped         noise\\x1b]52;c;aGVsbG8=\\x07 ×1" in result.output  # a record kind
    assert_no_raw_escapes(result)


def test_compress_on_stdout_writes_c1_controls_as_json_escapes(tmp_path: Path) -> None:
    messages = session()
    messages[1]["content"] = "Fix \x9b31m the \x7f tests"  # U+009B is a one-character CSI
    path = write_json(tmp_path / "c1.json", messages)
    result = run("compress", path, *SMALL)
    assert result.exit_code == 0, result.output
    assert_no_raw_escapes(result)
    assert "\\u009b31m" in result.stdout
    assert json.loads(result.stdout)[1]["content"] == "Fix \x9b31m the \x7f tests"  # same JSON


def test_a_warning_quoting_file_content_is_escaped(tmp_path: Path) -> None:
    lines = [json.dumps(m) for m in session()]
    lines.insert(5, '{"role": "user", "content": "' + OSC52.replace("\x1b", "\\u001b") + "\x1b[2J")
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("compress", path, *SMALL)
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output
    assert_no_raw_escapes(result)


def test_validate_problems_quoting_a_tool_name_are_escaped(tmp_path: Path) -> None:
    messages = session()
    function = messages[4]["tool_calls"][0]["function"]
    function["name"] = f"terminal{OSC52}"  # quoted in the problem's message
    function["arguments"] = "{not json"
    path = write_json(tmp_path / "name.json", messages)
    result = run("validate", path)
    assert result.exit_code == 1, result.output  # a provider rejects those arguments
    assert "\\x1b]52" in result.output
    assert_no_raw_escapes(result)


def test_sessions_escapes_project_title_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claude_records import record

    from compaction.formats.local_sessions import ROOTS

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for root in ROOTS:
        (tmp_path / root.agent).mkdir()
        monkeypatch.setenv(root.variable, str(tmp_path / root.agent))
    folder = tmp_path / "claude-code" / f"proj{OSC0}"
    folder.mkdir()
    records = [
        record("user", "a", None, f"title {OSC52}", cwd=f"/home/me/{OSC0}"),
        record("assistant", "b", "a", "ok", cwd=f"/home/me/{OSC0}"),
    ]
    (folder / f"s{OSC52}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for extra in ([], ["--json"], ["--no-count"]):
        result = run("sessions", *extra)
        assert result.exit_code == 0, result.output
        assert "claude-code" in result.output
        assert_no_raw_escapes(result)
    as_json = json.loads(run("sessions", "--json").stdout.splitlines()[0])
    assert as_json["title"] == f"title {OSC52}"  # the JSON value itself is intact


# -- 9. the same import warnings from every command --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["compress", *SMALL],
        ["inspect"],
        ["convert", "--to", "openai"],
        ["simulate", "--context-length", "2000"],
        ["eval", "--strategies", "head-tail"],
        ["sweep", "--param", "summary_ratio=0.1", "--context-length", "2000"],
    ],
)
def test_every_command_warns_about_a_broken_line_in_the_middle(
    tmp_path: Path, command: list[str]
) -> None:
    lines = [json.dumps(m) for m in session()]
    lines.insert(10, '{"role": "user", "cont')
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run(command[0], path, *command[1:])
    assert result.exit_code in (0, 1), result.output
    assert f"warning: {path}: line 11: skipped a line that is not valid JSON" in result.stderr


def test_validate_json_lists_the_import_warnings(tmp_path: Path) -> None:
    lines = [json.dumps(m) for m in session()]
    lines.insert(10, '{"role": "user", "cont')
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("validate", path, "--json")
    report = json.loads(result.stdout)
    assert report["messages"] == 35
    assert any(w.startswith("line 11: skipped") for w in report["warnings"])


# -- 10. tool-call arguments that are not a JSON object ----------------------------------------


def with_bad_arguments(tmp_path: Path) -> Path:
    messages = session()
    calls = [m for m in messages if m.get("tool_calls")]
    calls[-1]["tool_calls"][0]["function"]["arguments"] = '{"command": "pyt'  # truncated
    calls[-2]["tool_calls"][0]["function"]["arguments"] = "42"  # a bare number
    return write_json(tmp_path / "arguments.json", messages)


def test_validate_messages_warns_about_arguments_that_are_not_a_json_object() -> None:
    from compaction.input.checks import validate_messages

    def call(arguments: str, call_id: str) -> dict[str, Any]:
        function = {"name": "t", "arguments": arguments}
        return {"id": call_id, "type": "function", "function": function}

    arguments = ['{"a": 1}', "{bad", "42", '"text"', "[1]", "null", '{"x": NaN}']
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for position, text in enumerate(arguments):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call(text, f"c{position}")]},
            {"role": "tool", "tool_call_id": f"c{position}", "content": "ok"},
        ]
    checked, repairs = validate_messages(messages)
    assert [c["tool_calls"][0]["function"]["arguments"] for c in checked[1::2]] == arguments
    assert repairs == [
        "message 3: tool_calls[0] arguments are not valid JSON; kept as written",
        "message 5: tool_calls[0] arguments are a JSON number, not an object; kept as written",
        "message 7: tool_calls[0] arguments are a JSON string, not an object; kept as written",
        "message 9: tool_calls[0] arguments are a JSON array, not an object; kept as written",
        "message 11: tool_calls[0] arguments are a JSON null, not an object; kept as written",
        "message 13: tool_calls[0] arguments hold NaN or Infinity, which is not valid JSON; "
        "kept as written",
    ]


def test_compress_warns_at_input_and_counts_them_in_its_summary_line(tmp_path: Path) -> None:
    path = with_bad_arguments(tmp_path)
    output = tmp_path / "out.json"
    result = run("compress", path, "-o", output, *SMALL)
    assert result.exit_code == 0, result.output
    assert "arguments are not valid JSON; kept as written" in result.stderr
    assert "arguments are a JSON number, not an object; kept as written" in result.stderr
    summary = next(line for line in result.stderr.splitlines() if "% saved" in line)
    # The truncated call is in the kept tail; validate rejects the output for it.
    assert "1 tool call(s) kept with arguments that are not a JSON object" in summary
    assert run("validate", output).exit_code == 1


def test_compress_summary_line_is_unchanged_when_every_argument_is_an_object(
    source: Path,
) -> None:
    result = run("compress", source, *SMALL)
    summary = next(line for line in result.stderr.splitlines() if "% saved" in line)
    assert summary.endswith("% saved)")


# -- 5. eval: derived budgets in range, and a plain message when every session fails ----------


def test_derived_budgets_of_a_huge_target_are_clamped_to_the_configs_range() -> None:
    from compaction.lab.strategies import config_for_target

    for target in (4_300_000, 13_000_000, 10**9):
        for fill in (True, False):
            config = config_for_target(target, fill_target=fill)  # validated: no ConfigError
            assert config.summary_min_tokens <= config.summary_max_tokens <= 1_000_000
            assert config.context_length <= 100_000_000


def test_evaluate_runs_on_a_session_whose_derived_summary_budget_exceeds_the_limit() -> None:
    from compaction import CompactionConfig
    from compaction.lab.evaluate import evaluate

    big = "word " * 1_100_000  # 5.5M characters: 1.375M rough tokens per message
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug in app.py"},
        {"role": "assistant", "content": big},
        {"role": "user", "content": "Now run pytest"},
        {"role": "assistant", "content": big},
        {"role": "user", "content": "Thanks, commit it"},
    ]
    # A target of 2.75M tokens: 40% of it (the summary budget) is over the 1M allowed.
    evaluation = evaluate(
        messages,
        ["prune-only", "compaction"],
        target_ratio=1.0,
        config=CompactionConfig(counter="rough"),
    )
    assert evaluation.target_tokens > 2_500_000
    assert set(evaluation.outcomes) == {"prune-only", "compaction"}


def test_eval_says_plainly_when_no_session_could_be_evaluated(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compaction.commands import evaluate as command
    from compaction.errors import ConfigError

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise ConfigError("summary_min_tokens must be between 50 and 1000000, got 1720000")

    monkeypatch.setattr(command, "evaluate", failing)
    report = tmp_path / "report.json"
    result = run("eval", source, source.parent, "--json", report)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "error: no session could be evaluated: the 2 sessions all failed" in result.stderr
    assert "summary_min_tokens must be between" in result.stderr
    assert json.loads(report.read_text())["table"] == []


def test_eval_table_lines_of_no_rows_is_only_the_header() -> None:
    from compaction.commands.evaluate import table_lines

    lines = table_lines([])
    assert len(lines) == 2 and lines[0].startswith("strategy")
