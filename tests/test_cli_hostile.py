"""Every command against hostile files: no traceback, an exit status of 0, 1 or 2, no raw ESC.

The pass issue 20 asks to re-run: each file below (written into a temporary folder, so nothing
large is committed) goes to `compress`, `inspect`, `convert`, `validate` (plain and --json),
`simulate`, `eval`, `sweep` and `audit` (plain and --json -). The totals (files × commands, how
many ended with each exit status) are printed at the end; run `pytest -s` on this file to see
them.
"""

from __future__ import annotations

import json
import traceback
from collections import Counter
from pathlib import Path

from cli_sessions import session
from click.testing import CliRunner

from compaction.cli import main

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
DEPTH = 100_000


def _messages_with(**changes: str) -> str:
    messages = session(3)
    for key, value in changes.items():
        position = int(key.removeprefix("m"))
        messages[position]["content"] = value
    return json.dumps(messages)


def hostile_files() -> dict[str, bytes]:
    """Name → content of every hostile input."""
    good = json.dumps(session(3))
    lines = [json.dumps(message) for message in session(3)]
    return {
        "empty.json": b"",
        "whitespace.json": b"  \n\t\n",
        "binary.bin": bytes(range(256)) * 64,
        "nul-bytes.json": good.encode()[:200] + b"\x00\x00\x00" + good.encode()[200:],
        "nul-escape.json": _messages_with(m1="a \x00 b").encode(),  # written as \u0000
        "truncated.json": good.encode()[: len(good) // 2],
        "truncated-line.jsonl": "\n".join([*lines[:5], lines[5][:20], *lines[6:]]).encode(),
        "deep-array.json": b"[" * DEPTH + b"]" * DEPTH,
        "deep-content.json": (
            b'[{"role": "user", "content": ' + b"[" * DEPTH + b"]" * DEPTH + b"}]"
        ),
        "deep-arguments.json": json.dumps(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "t", "arguments": "[" * DEPTH + "]" * DEPTH},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": "ok"},
            ]
        ).encode(),
        "big-integer.json": (b'[{"role": "user", "content": "hi", "n": ' + b"9" * 5_000 + b"}]"),
        "big-integer-content.json": b'[{"role": "user", "content": ' + b"7" * 5_000 + b"}]",
        "lone-surrogate.json": _messages_with(m1="a \ud800 b", m4="\udfff").encode(),
        "escapes.json": _messages_with(
            m1=f"hi {OSC52}", m3="\x9b2J\x1b[2J\x1b]0;title\x07"
        ).encode(),
        "escape-role.json": json.dumps([{"role": f"user{OSC52}", "content": "x"}]).encode(),
        "huge-line.json": _messages_with(m6="lorem ipsum dolor " * 120_000).encode(),
        "huge-object-line.jsonl": (
            json.dumps({"role": "user", "content": "lorem ipsum dolor " * 120_000}) + "\n"
        ).encode(),
        "top-number.json": b"42",
        "top-string.json": b'"a conversation"',
        "top-null.json": b"null",
        "top-object.json": b'{"foo": [1, 2, 3], "bar": "baz"}',
        "messages-not-list.json": b'{"messages": "nope"}',
        "list-of-numbers.json": b"[1, 2, 3]",
        "wrong-field-types.json": b'[{"role": 5, "content": {"x": 1}}]',
        "unknown-format.txt": b"hello world\nthis is not a session\n",
        "yaml.yaml": b"- role: user\n  content: hi\n",
        "bom.json": b"\xef\xbb\xbf" + good.encode(),
        "latin1.json": '[{"role": "user", "content": "café"}]'.encode("latin-1"),
        "nan-arguments.json": good.replace(
            '"{\\"command\\": \\"pytest\\"}"', '"{\\"x\\": NaN}"'
        ).encode(),
    }


#: A name for the totals → the command and its options (the input path goes after the command).
COMMANDS: dict[str, list[str]] = {
    "compress": ["--counter", "rough", "--context-length", "2000"],
    "inspect": ["--counter", "rough"],
    "convert": ["--to", "anthropic"],
    "validate": [],
    "validate --json": ["--json", "--provider", "anthropic"],
    "simulate": ["--context-length", "2000"],
    "eval": ["--strategies", "head-tail,prune-only,compaction"],
    "sweep": ["--param", "summary_ratio=0.1,0.2", "--context-length", "2000"],
    "audit": [],
    "audit --json -": ["--json", "-"],
}


def test_every_command_survives_every_hostile_file(tmp_path: Path) -> None:
    runner = CliRunner()
    codes: Counter[int] = Counter()
    per_command: dict[str, Counter[int]] = {name: Counter() for name in COMMANDS}
    failures: list[str] = []
    files = hostile_files()
    for name, content in files.items():
        path = tmp_path / name
        path.write_bytes(content)
        for command, options in COMMANDS.items():
            result = runner.invoke(main, [command.split()[0], str(path), *options])
            where = f"{command} {name}"
            codes[result.exit_code] += 1
            per_command[command][result.exit_code] += 1
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                trace = (
                    "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else ""
                )
                failures.append(f"{where}: {type(result.exception).__name__}\n{trace[-1500:]}")
            elif result.exit_code not in (0, 1, 2):
                failures.append(f"{where}: exit status {result.exit_code}")
            elif "Traceback" in result.output:
                failures.append(f"{where}: a traceback in the output\n{result.output[-1500:]}")
            elif "\x1b" in result.output or "\x9b" in result.output:
                failures.append(f"{where}: a raw escape character reached the terminal")
    runs = len(files) * len(COMMANDS)
    print(
        f"\nhostile pass: {len(files)} files x {len(COMMANDS)} commands = {runs} runs; "
        f"exit statuses {dict(sorted(codes.items()))}; {len(failures)} failure(s)"
    )
    for command, counts in per_command.items():
        print(f"  {command:<15} {dict(sorted(counts.items()))}")
    assert not failures, "\n\n".join(failures)
