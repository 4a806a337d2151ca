"""`compaction compress` and `compaction inspect` through click's CliRunner and one real
subprocess: output to stdout and -o, the report, --auto, --set, --to, --summarizer, and exit
status 2 with one stderr line and no partial file on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_sessions import session
from click.testing import CliRunner

from compaction.cli import main
from compaction.summary import SUMMARY_PREFIX, static_marker

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session()), encoding="utf-8")
    return path


SMALL = ["--context-length", "2000", "--counter", "rough"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_compress_to_stdout(conversation: Path) -> None:
    result = invoke("compress", str(conversation), *SMALL)
    assert result.exit_code == 0
    messages = json.loads(result.stdout)
    assert len(messages) < len(session())
    assert any(str(m.get("content")).startswith(SUMMARY_PREFIX) for m in messages)
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"session.json: {len(session())} → {len(messages)} messages, ")
    assert line.endswith("% saved)")


def test_compress_to_file_with_report(conversation: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    result = invoke("compress", str(conversation), *SMALL, "-o", str(out), "--report", str(report))
    assert result.exit_code == 0
    assert result.stdout == ""
    messages = json.loads(out.read_text(encoding="utf-8"))
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["messages"] == messages
    assert data["messages_before"] == len(session())
    assert [p["name"] for p in data["phases"]] == [
        "prune",
        "boundaries",
        "summarize",
        "assemble",
        "cleanup",
        "fit",
    ]
    assert data["fit"]["window"] == 2000 and data["fit"]["fits"] is True
    assert data["fit"]["tokens_after"] == data["tokens_after"] <= 2000
    assert data["config"]["context_length"] == 2000
    assert data["summarizer"] == "extractive"
    assert data["tokens_after"] < data["tokens_before"]


def test_auto_skips_below_the_threshold(conversation: Path) -> None:
    result = invoke("compress", str(conversation), "--auto")
    assert result.exit_code == 0
    assert "skipped: below the threshold: " in result.stderr
    assert json.loads(result.stdout) == session()


def test_set_and_static_summarizer(conversation: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = invoke(
        "compress",
        str(conversation),
        *SMALL,
        "--set",
        "protect_first_n=2",
        "--set",
        "orphan_strategy=strip",
        "--summarizer",
        "static",
        "--report",
        str(report),
    )
    assert result.exit_code == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["config"]["protect_first_n"] == 2
    assert data["config"]["orphan_strategy"] == "strip"
    turns = data["phases"][2]["details"]["turns"]
    messages = json.loads(result.stdout)
    assert any(str(m.get("content")).startswith(static_marker(turns)) for m in messages)


def test_to_anthropic(conversation: Path) -> None:
    result = invoke("compress", str(conversation), *SMALL, "--to", "anthropic")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert isinstance(payload, dict)
    assert {m["role"] for m in payload["messages"]} <= {"user", "assistant"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "file not found"),
        ('[{"role": "user", "content": "hi"},\n {"role": "x"', "line 2: invalid JSON"),
        (
            '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": {"x": 1}}]',
            "message 1: content must be a string",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_file(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    source = tmp_path / "in.json"
    if content is not None:
        source.write_text(content, encoding="utf-8")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["compress", str(source), "-o", str(out)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert "in.json" in lines[0]
    assert expected in lines[0]
    assert "Traceback" not in result.output
    assert not out.exists()


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    source = tmp_path / "bad.json"
    source.write_text('[{"role": "user", "content": "hi"},\n {"role": "x"', encoding="utf-8")
    result = CliRunner().invoke(main, ["compress", str(source)])
    assert result.exit_code == 2
    assert "line 2" in result.stderr and "column" in result.stderr


def test_bad_set_exits_2(conversation: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    for setting, expected in (
        ("threshold_ratio=1.5", "threshold_ratio must be between 0.05 and 1.0, got 1.5"),
        ("nonsense=1", "expected FIELD=VALUE"),
    ):
        result = CliRunner().invoke(
            main, ["compress", str(conversation), "--set", setting, "-o", str(out)]
        )
        assert result.exit_code == 2
        assert len(result.stderr.strip().splitlines()) == 1
        assert expected in result.stderr
        assert not out.exists()


def test_inspect_table_and_budgets(conversation: Path) -> None:
    result = invoke("inspect", str(conversation), *SMALL)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "role", "tokens", "pruned", "region", "preview"]
    rows = lines[1 : 1 + len(session())]
    assert rows[0].split()[:2] == ["0", "system"]
    assert [row.split()[4] for row in rows[:3]] == ["head", "head", "head"]
    assert "middle" in {row.split()[4] for row in rows}
    assert rows[-1].split()[4] == "tail"
    text = result.stdout
    assert "context window    2,000" in text
    assert "threshold         1,000 (50%) — over: compaction would run" in text
    assert "tail budget       200 (soft ceiling 300)" in text
    assert "summary budget    2,000" in text


def test_real_subprocess_run(conversation: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    executable = ROOT / ".venv" / "bin" / "compaction"
    command = [str(executable)] if executable.exists() else [sys.executable, "-m", "compaction"]
    completed = subprocess.run(
        [*command, "compress", str(conversation), *SMALL, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(out.read_text(encoding="utf-8"))
    assert "messages" in completed.stderr and "saved" in completed.stderr


def test_pin_keeps_a_message_verbatim_and_the_report_says_why(
    conversation: Path, tmp_path: Path
) -> None:
    """Issue 33: `--pin` is the config's pins from the command line (the app's link uses the
    same texts): message #9 (a tool result: its call #8 comes with it) survives as given."""
    given = json.loads(conversation.read_text(encoding="utf-8"))
    report = tmp_path / "report.json"
    result = invoke(
        "compress", str(conversation), *SMALL, "--pin", "9", "--pin", "user",
        "--pin", "400", "--report", str(report),
    )  # fmt: skip
    assert result.exit_code == 0
    messages = json.loads(result.stdout)
    assert given[8] in messages and given[9] in messages
    pinned = json.loads(report.read_text(encoding="utf-8"))["pinned"]
    assert pinned["pinned"]["9"] == "pinned #9"
    assert pinned["pinned"]["7"] == "the user's message"
    assert "pins kept" in result.stderr
    assert "warning: a pin kept nothing: #400: the conversation has 35 messages" in result.stderr


def test_a_bad_pin_is_one_line_and_exit_2(conversation: Path) -> None:
    result = invoke("compress", str(conversation), "--pin", "tool:")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: invalid --pin: pin 'tool:': expected a message number, role:ROLE, tool:NAME, "
        "text:REGEX, user or instructions"
    ]
