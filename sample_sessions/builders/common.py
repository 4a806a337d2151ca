"""Shared helpers for the sample-session builders: deterministic ids, tool results, messages.

Everything here is deterministic (ids derive from a hash of the sample name and a counter, never
from the clock or an unseeded random), so re-running build_samples.py reproduces the files byte
for byte and a diff of the committed samples only shows deliberate story changes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

Message = dict[str, Any]

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def token(seed: str, length: int) -> str:
    """A deterministic base62 string derived from `seed`."""
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(length):
        number, rest = divmod(number, 62)
        chars.append(_ALPHABET[rest])
    return "".join(chars)


class IdMaker:
    """Call ids in the shapes real providers use (`call_…` for OpenAI, `toolu_01…` for Anthropic)."""

    def __init__(self, sample: str) -> None:
        self.sample = sample
        self.counter = 0

    def _next(self) -> str:
        self.counter += 1
        return f"{self.sample}:{self.counter}"

    def openai(self) -> str:
        return "call_" + token(self._next(), 24)

    def anthropic(self) -> str:
        return "toolu_01" + token(self._next(), 22)

    def uuid(self) -> str:
        hexed = hashlib.sha256(self._next().encode()).hexdigest()
        return f"{hexed[:8]}-{hexed[8:12]}-4{hexed[13:16]}-a{hexed[17:20]}-{hexed[20:32]}"


def thinking_block(thinking: str, seed: str) -> dict[str, str]:
    """An Anthropic thinking content block with a deterministic stand-in signature."""
    return {"type": "thinking", "thinking": thinking, "signature": "EqQB" + token(seed, 40)}


def terminal_output(output: str, exit_code: int) -> str:
    """A terminal tool result as the hermes-style agent returns it (JSON with the exit code)."""
    return json.dumps({"output": output, "exit_code": exit_code, "error": None}, ensure_ascii=False)


def numbered(text: str, start: int = 1) -> str:
    """File contents as a read_file tool shows them: right-aligned line numbers and a tab."""
    lines = text.split("\n")
    return "\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(lines))


def patch_result(path: str, old: str, new: str, hunk: str | None = None) -> str:
    """A patch tool result: the diff of replacing `old` by `new` (or the given `hunk` body)."""
    if hunk is None:
        minus = "\n".join(f"-{line}" for line in old.split("\n"))
        plus = "\n".join(f"+{line}" for line in new.split("\n"))
        hunk = f"{minus}\n{plus}"
    diff = f"--- a/{path}\n+++ b/{path}\n@@\n{hunk}"
    return json.dumps({"success": True, "diff": diff, "files_modified": [path]})


def search_result(matches: list[tuple[str, int, str]]) -> str:
    """A search_files tool result from (path, line, content) rows."""
    return json.dumps(
        {
            "total_count": len(matches),
            "matches": [{"path": p, "line": n, "content": c} for p, n, c in matches],
        },
        ensure_ascii=False,
        indent=1,
    )


class Conversation:
    """Builds an OpenAI chat-completions message list, pairing every call with its result."""

    def __init__(self, sample: str) -> None:
        self.ids = IdMaker(sample)
        self.messages: list[Message] = []

    def system(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def assistant(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def call(
        self, name: str, arguments: dict[str, Any], output: str | None, text: str | None = None
    ) -> str:
        """One assistant tool call and (unless `output` is None) its result; returns the call id."""
        call_id = self.ids.openai()
        function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        if output is not None:
            self.tool_result(call_id, output)
        return call_id

    def terminal(
        self, command: str, output: str | None, exit_code: int = 0, text: str | None = None
    ) -> str:
        """A terminal call printing `output` (None: the call never got its result)."""
        result = None if output is None else terminal_output(output, exit_code)
        return self.call("terminal", {"command": command}, result, text)

    def read_file(
        self,
        path: str,
        content: str,
        offset: int | None = None,
        limit: int | None = None,
        text: str | None = None,
    ) -> str:
        """A read_file call showing `content` numbered from `offset` (the whole file without one)."""
        arguments: dict[str, Any] = {"path": path}
        if offset is not None:
            arguments.update(offset=offset, limit=limit)
        return self.call("read_file", arguments, numbered(content, offset or 1), text)

    def write_file(self, path: str, content: str, text: str | None = None) -> str:
        result = json.dumps({"bytes_written": len(content.encode()), "dirs_created": False})
        return self.call("write_file", {"path": path, "content": content}, result, text)

    def patch(
        self, path: str, old: str, new: str, hunk: str | None = None, text: str | None = None
    ) -> str:
        arguments = {"path": path, "mode": "replace", "old_string": old, "new_string": new}
        return self.call("patch", arguments, patch_result(path, old, new, hunk), text)

    def search(
        self,
        pattern: str,
        path: str,
        matches: list[tuple[str, int, str]],
        target: str | None = None,
    ) -> str:
        arguments = {"pattern": pattern, "path": path}
        if target is not None:
            arguments["target"] = target
        return self.call("search_files", arguments, search_result(matches))

    def tool_result(self, call_id: str, output: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": output})


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    lines = [json.dumps(record, ensure_ascii=False, separators=(",", ":")) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
