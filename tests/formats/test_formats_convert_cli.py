"""`compaction convert` through click's CliRunner: output, warnings, and failures without files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from format_helpers import DATA, corpus_file

from compaction.cli import main


def test_convert_to_anthropic_on_stdout() -> None:
    result = CliRunner().invoke(
        main, ["convert", str(DATA / "gemini_chat.json"), "--to", "anthropic"]
    )
    assert result.exit_code == 0, result.output
    exported = json.loads(result.stdout)
    assert [t["role"] for t in exported["messages"]] == ["user", "assistant", "user", "assistant"]
    assert "gemini_chat.json: messages[2]: skipped" in result.stderr


def test_convert_to_file_with_index_and_from(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        main,
        [
            "convert",
            str(DATA / "sharegpt_hermes.jsonl"),
            "--to",
            "openai",
            "-o",
            str(out),
            "--from",
            "sharegpt",
            "--index",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    messages = json.loads(out.read_text())["messages"]
    assert messages[0] == {"role": "user", "content": "List files."}
    assert "sharegpt → openai: 4 messages written" in result.stderr
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind


def test_convert_bad_input_exits_2_with_one_line_and_no_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    out = tmp_path / "out.json"
    for arguments in (
        [str(bad), "--to", "openai", "-o", str(out)],
        [str(DATA / "sharegpt_hermes.jsonl"), "--to", "openai", "-o", str(out), "--index", "9"],
        [str(tmp_path / "missing.json"), "--to", "anthropic", "-o", str(out)],
    ):
        result = CliRunner().invoke(main, ["convert", *arguments])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ")
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.output
        assert not out.exists()


def test_convert_corpus_claude_code_to_openai(tmp_path: Path) -> None:
    path = corpus_file("claudecode-claudereliability-py2rust__transcript.jsonl")
    out = tmp_path / "openai.json"
    result = CliRunner().invoke(main, ["convert", str(path), "--to", "openai", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "claude-code → openai: 80 messages" in result.stderr
    assert len(json.loads(out.read_text())["messages"]) == 80
