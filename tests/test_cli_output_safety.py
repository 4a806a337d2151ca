"""What every command that writes a file promises: the input file is never modified (an output
path naming an input, even through a link, exits 2), a failed write is one `error: PATH: reason`
line with exit 2 (no traceback), output files get the permissions a plain open() would give, and
what is written is always valid JSON (no bare NaN)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_sessions import session
from click.testing import CliRunner, Result
from history_factory import conversation, make_result

from compaction.cli import main
from compaction.commands.common import dump_json, write_output
from compaction.commands.history import save_run

ROOT = Path(__file__).resolve().parents[1]


SMALL = ["--context-length", "2000", "--counter", "rough"]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "session.json"
    path.parent.mkdir()
    path.write_text(json.dumps(session()), encoding="utf-8")
    return path


@pytest.fixture
def normal_umask() -> Iterator[int]:
    """A known umask for the permission tests, restored afterwards."""
    previous = os.umask(0o022)
    try:
        yield 0o022
    finally:
        os.umask(previous)


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    # An exception escaping the command is a bug, never an answer: show it, not just "exit 1".
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_one_error_line(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.output


# -- 1. the input file is never overwritten ------------------------------------------------------


def _command_writing_over(source: Path) -> dict[str, list[str]]:
    grid = ["--param", "summary_ratio=0.1,0.2", "--context-length", "2000"]
    return {
        "compress -o": ["compress", str(source), *SMALL, "-o", str(source)],
        "compress --report": ["compress", str(source), *SMALL, "--report", str(source)],
        "convert -o": ["convert", str(source), "--to", "openai", "-o", str(source)],
        "simulate --json": ["simulate", str(source), "--json", str(source)],
        "eval --json": ["eval", str(source), "--json", str(source)],
        "eval --csv": ["eval", str(source), "--csv", str(source)],
        "eval folder --json": ["eval", str(source.parent), "--json", str(source)],
        "sweep --json": ["sweep", str(source), *grid, "--json", str(source)],
        "sweep --csv": ["sweep", str(source), *grid, "--csv", str(source)],
    }


@pytest.mark.parametrize(
    "case",
    [
        "compress -o",
        "compress --report",
        "convert -o",
        "simulate --json",
        "eval --json",
        "eval --csv",
        "eval folder --json",
        "sweep --json",
        "sweep --csv",
    ],
)
def test_no_command_writes_over_its_input(source: Path, case: str) -> None:
    before = digest(source)
    result = invoke(*_command_writing_over(source)[case])
    assert_one_error_line(result, str(source), "would overwrite the input file")
    assert digest(source) == before


@pytest.mark.parametrize("link", ["symlink", "hardlink", "dotted"])
def test_another_name_for_the_input_is_still_the_input(
    source: Path, tmp_path: Path, link: str
) -> None:
    if link == "symlink":
        alias = tmp_path / "alias.json"
        alias.symlink_to(source)
    elif link == "hardlink":
        alias = tmp_path / "alias.json"
        os.link(source, alias)
    else:
        alias = source.parent / ".." / "in" / source.name
    before = digest(source)
    result = invoke("compress", str(source), *SMALL, "-o", str(alias))
    assert_one_error_line(result, "would overwrite the input file")
    assert digest(source) == before


def test_history_export_refuses_to_write_over_the_history_file(_history_db: Path) -> None:
    messages = conversation()
    run_id = save_run(messages, make_result(messages))
    before = digest(_history_db)
    result = invoke("history", "export", str(run_id), "-o", str(_history_db))
    assert_one_error_line(result, "would overwrite the input file")
    assert digest(_history_db) == before


def test_two_outputs_on_one_path_are_refused(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = invoke("compress", str(source), *SMALL, "-o", str(out), "--report", str(out))
    assert_one_error_line(result, str(out), "another output")
    assert not out.exists()


# -- permissions of written files ----------------------------------------------------------------


def test_a_new_output_file_gets_the_umask_permissions(
    source: Path, tmp_path: Path, normal_umask: int
) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    result = invoke("compress", str(source), *SMALL, "-o", str(out), "--report", str(report))
    assert result.exit_code == 0, result.output
    for path in (out, report):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~normal_umask


def test_an_overwritten_output_file_keeps_its_permissions(
    source: Path, tmp_path: Path, normal_umask: int
) -> None:
    out = tmp_path / "out.json"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    result = invoke("convert", str(source), "--to", "openai", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert json.loads(out.read_text(encoding="utf-8"))["messages"]


# -- 2. a failed write is one line and exit 2 ----------------------------------------------------


@pytest.mark.parametrize(
    "option", ["compress -o", "compress --report", "convert", "simulate", "eval", "sweep"]
)
def test_writing_into_a_missing_folder_is_one_line(
    source: Path, tmp_path: Path, option: str
) -> None:
    target = tmp_path / "nodir" / "out.json"
    args = {
        "compress -o": ["compress", str(source), *SMALL, "-o", str(target)],
        "compress --report": ["compress", str(source), *SMALL, "--report", str(target)],
        "convert": ["convert", str(source), "--to", "anthropic", "-o", str(target)],
        "simulate": ["simulate", str(source), "--json", str(target)],
        "eval": ["eval", str(source), "--csv", str(target)],
        "sweep": ["sweep", str(source), "--param", "summary_ratio=0.1", "--json", str(target)],
    }[option]
    result = invoke(*args)
    assert_one_error_line(result, f"{target}: cannot write: No such file or directory")


def test_history_export_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    messages = conversation()
    run_id = save_run(messages, make_result(messages))
    target = tmp_path / "nodir" / "bundle.json"
    result = invoke("history", "export", str(run_id), "-o", str(target))
    assert_one_error_line(result, f"{target}: cannot write:")


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux /proc")
def test_writing_where_no_file_can_be_created_is_one_line(source: Path) -> None:
    result = invoke("compress", str(source), *SMALL, "-o", "/proc/version")
    assert_one_error_line(result, "/proc/version: cannot write: ")


def _compaction_command() -> list[str]:
    executable = ROOT / ".venv" / "bin" / "compaction"
    return [str(executable)] if executable.exists() else [sys.executable, "-m", "compaction"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [["compress", *SMALL], ["convert", "--to", "anthropic"]],
    ids=["compress", "convert"],
)
def test_a_full_standard_output_is_one_line(source: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        completed = subprocess.run(
            [*_compaction_command(), args[0], str(source), *args[1:]],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: <stdout>: cannot write: No space left on device"]
    assert "Exception ignored" not in completed.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--threshold", "nan"],
        ["--tail-ratio", "nan"],
        ["--set", "summary_ratio=NaN"],
        ["--set", "threshold_ratio=Infinity"],
    ],
)
def test_non_finite_settings_are_one_line(source: Path, tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out.json"
    result = invoke("compress", str(source), *SMALL, *args, "-o", str(out))
    assert_one_error_line(result, "must be a finite number")
    assert not out.exists()


def test_sweep_rejects_a_non_finite_base_setting(source: Path) -> None:
    result = invoke(
        "sweep", str(source), "--param", "tail_token_ratio=0.1,0.2", "--set", "summary_ratio=NaN"
    )
    assert_one_error_line(result, "summary_ratio must be a finite number")


# -- 4. a result still over the window says so ---------------------------------------------------


def test_a_result_over_the_window_warns_but_succeeds(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    messages = [
        *session(2),
        # The latest request alone is over the window: Fit never cuts it (issue 21).
        {"role": "user", "content": "What is wrong here?\n" + "log line\n" * 5_000},
        {"role": "assistant", "content": "Reading it."},
    ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    out = tmp_path / "out.json"
    result = invoke("compress", str(path), *SMALL, "-o", str(out))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "exceeds" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith("warning: the result (")
    assert "still exceeds the model's window (2,000)" in warnings[0]
    assert "the latest user request alone take" in warnings[0]
    assert json.loads(out.read_text(encoding="utf-8"))


def test_a_result_inside_the_window_does_not_warn(source: Path) -> None:
    result = invoke("compress", str(source), "--context-length", "128000", "--counter", "rough")
    assert result.exit_code == 0
    assert "exceeds" not in result.stderr


# -- 5. output is always valid JSON --------------------------------------------------------------


def _strict_json(text: str) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(f"bare {name} in the output")

    return json.loads(text, parse_constant=reject)


@pytest.mark.parametrize(
    "args",
    [
        ["compress", *SMALL],
        ["compress", *SMALL, "--to", "anthropic"],
        ["convert", "--to", "openai"],
        ["convert", "--to", "anthropic"],
    ],
    ids=["compress", "compress-anthropic", "convert-openai", "convert-anthropic"],
)
def test_nan_in_tool_arguments_never_reaches_the_output_bare(
    tmp_path: Path, args: list[str]
) -> None:
    path = tmp_path / "nan.json"
    path.write_text(
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": null, '
        '"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", '
        '"arguments": {"x": NaN}}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}]',
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    result = invoke(args[0], str(path), *args[1:], "-o", str(out))
    assert "Traceback" not in result.output
    assert "message 1: tool_calls[0] arguments hold NaN or Infinity" in result.stderr
    if result.exit_code == 0:
        _strict_json(out.read_text(encoding="utf-8"))
    else:
        # Refused rather than written invalid: one line, and no file.
        assert result.exit_code == 2
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "NaN or Infinity" in errors[0]
        assert not out.exists()


def test_the_shared_writer_refuses_an_input_and_bare_nan(tmp_path: Path) -> None:
    # Commands check their outputs up front; the writer checks again, so a new command that
    # forgets the early check still cannot replace its input or write invalid JSON.
    source = tmp_path / "in.json"
    source.write_text("[]", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        write_output(tmp_path / "." / "in.json", "{}", inputs=[source])
    assert info.value.code == 2
    assert source.read_text(encoding="utf-8") == "[]"
    with pytest.raises(SystemExit) as info:
        dump_json({"x": float("nan")}, source)
    assert info.value.code == 2
    assert dump_json({"x": 1.5}, source, indent=None) == '{"x": 1.5}'
