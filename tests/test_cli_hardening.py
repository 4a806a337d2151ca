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


def test_output_through_a_dangling_symlink_creates_its_target(
    source: Path, tmp_path: Path
) -> None:
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
