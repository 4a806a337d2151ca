"""What one tool call did, read from the shape its agent gives it: the template family of this
very call, every command it ran, and the files its patch adds, updates, deletes or moves.

Agents pass a command in many shapes: a string (`command`, Codex's `cmd`, Antigravity's
`CommandLine`), an argv list (Codex's `["bash", "-lc", "script"]`), or a JavaScript cell that
calls `tools.exec_command({cmd: …})` (Codex's code mode, `script.py`). Phase 1's one-liners,
the summariser's actions, its test detection and file effects, and the lab's probes all read the
command here, so they agree on what was run. Reading never raises: an argument of an odd shape
is simply not a command, and the one-liner falls back to its generic template.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache
from typing import Any, NamedTuple

from compaction.text.tool_calls.aliases import tool_kind
from compaction.text.tool_calls.script import (
    Each,
    ScriptCall,
    Unread,
    may_call_tools,
    render,
    script_calls,
)

#: Where a command is, in order (matched as `argument` matches: `CommandLine` is `commandline`).
#: `input` is a custom tool's free text: a command, or a code-mode cell.
COMMAND_KEYS = ("command", "cmd", "commandline", "script", "input")
#: Where a patch body is (Codex's apply_patch: `{"input": "*** Begin Patch\n…"}`; OpenCode's
#: `patchText`).
PATCH_KEYS = ("input", "patch", "patch_text")

#: Shells whose last argument is the script they run, after `-c` (`-lc`, `-ec`…), PowerShell's
#: `-Command` or cmd's `/c`.
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "powershell", "pwsh", "cmd"})
_SCRIPT_FLAG = re.compile(r"-[a-z]*c|-command|/c", re.I)
#: A code-mode cell that calls no tool (a computation): JavaScript, not a shell command.
_JAVASCRIPT = re.compile(
    r"^\s*(?:(?:const|let|var|await|async|function|import|return)\s|(?:text|image)\(|//|/\*)",
    re.M,
)
_PATCH_LINE = re.compile(
    r"^\*\*\* (?:(Add|Update|Delete) File|(Move) to): *(.+?)[ \t\r]*$", re.M | re.IGNORECASE
)


#: Argument names up to this long are remembered loosened (`_loose`): the same few dozen names
#: come back on every call. A longer one (a hostile file's) is loosened each time, so that the
#: process-wide memory stays small in bytes as well as in entries.
REMEMBERED_NAME_CHARS = 64


def _loose(key: str) -> str:
    if len(key) > REMEMBERED_NAME_CHARS:
        return _loosened(key)
    return _remembered_loose(key)


def _loosened(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


_remembered_loose = lru_cache(maxsize=1024)(_loosened)


@lru_cache(maxsize=256)
def _loose_forms(keys: tuple[str, ...]) -> tuple[str, ...]:
    # The wanted keys: literals of the callers, a bounded set.
    return tuple(_loose(key) for key in keys)


def argument(arguments: dict[str, Any], *keys: str, default: Any = None) -> Any:
    """The value of the first of `keys` that `arguments` holds (None and "" are not values),
    matched exactly first, then ignoring case and underscores: Antigravity's `AbsolutePath`
    and a camel-cased `filePath` are the `absolute_path` and `file_path` of other agents."""
    for key in keys:
        value = arguments.get(key)
        if value is not None and not (isinstance(value, str) and not value):
            return value
    # Loosely: each wanted key's loose form takes the last argument of that form, and the
    # first wanted key that takes one wins. (A dict of every argument's loose form, built on
    # each call, cost ~6% of the one-liners' instructions on a long session: most miss.)
    wanted = _loose_forms(keys)
    found: dict[int, Any] = {}
    for key, value in arguments.items():
        if value is None or (isinstance(value, str) and not value):
            continue  # not a value
        if isinstance(key, str):
            loose = _loose(key)
            if loose in wanted:
                found[wanted.index(loose)] = value
    return found[min(found)] if found else default


def argv_text(words: list[str]) -> str:
    """An argv list as the command it stands for: a shell's script itself (`["bash", "-lc",
    "make"]` ran `make`), any other list joined with the shell's quoting."""
    if len(words) >= 3 and _SCRIPT_FLAG.fullmatch(words[-2]):
        program = re.split(r"[\\/]", words[0])[-1].lower().removesuffix(".exe")
        if program in _SHELLS:
            return words[-1]
    return shlex.join(words)


def _command_values(value: Any) -> list[str]:
    """The commands an argument value stands for (a loop variable stands for several)."""
    if isinstance(value, Each):
        return [command for item in value.items for command in _command_values(item)]
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Unread):
        return [value.render()]
    words = value if isinstance(value, list) else []
    if words and all(isinstance(word, str | int | float | Unread) for word in words):
        return [argv_text([render(word) for word in words])]
    return []


def _is_cell(source: str) -> bool:
    return _JAVASCRIPT.search(source) is not None


def commands(arguments: dict[str, Any], scripts: bool = True) -> list[str]:
    """Every command a call runs, in order: one for a shell call, each `tools.exec_command` of
    a code-mode cell (`scripts`), none when it runs no command."""
    return list(_terminal_reading(arguments, scripts).commands)


def _terminal_reading(arguments: dict[str, Any], scripts: bool) -> CallReading:
    """A shell call: the first of COMMAND_KEYS that holds a command. A code-mode cell in
    `input` reads as what it calls, and one that calls nothing ran nothing."""
    for key in COMMAND_KEYS:
        value = argument(arguments, key)
        if key == "input" and isinstance(value, str) and scripts:
            calls = script_calls(value) if may_call_tools(value) else []
            if calls:
                return _script_reading(calls, arguments)
            if _is_cell(value):
                return CallReading(None, arguments)  # a cell that computes: nothing ran
        found = _command_values(value)
        if found:
            return CallReading("terminal", arguments, tuple(found))
    return CallReading("terminal", arguments)


def command_text(arguments: dict[str, Any]) -> str:
    """The command a call runs (the first, when a code-mode cell runs several), or ""."""
    found = commands(arguments)
    return found[0] if found else ""


class PatchChange(NamedTuple):
    verb: str  # "add", "update", "delete", "move"
    path: str
    to: str | None = None  # where a moved file went

    def text(self) -> str:
        return f"move {self.path} -> {self.to}" if self.to else f"{self.verb} {self.path}"


def patch_changes(text: str) -> list[PatchChange]:
    """The files an apply_patch body (`*** Update File: …`, `*** Move to: …`) changes, in order."""
    if "*** " not in text:
        return []
    changes: list[PatchChange] = []
    for verb, move, path in _PATCH_LINE.findall(text):
        if move:
            if changes and changes[-1].verb == "update" and changes[-1].to is None:
                changes[-1] = PatchChange("move", changes[-1].path, path)
        else:
            changes.append(PatchChange(verb.lower(), path))
    return changes


def written(changes: tuple[PatchChange, ...] | list[PatchChange]) -> list[str]:
    """The files a patch leaves written: the ones it adds or updates, and where it moved some."""
    paths = []
    for change in changes:
        if change.verb in ("add", "update"):
            paths.append(change.path)
        elif change.to:
            paths.append(change.to)
    return paths


class CallReading(NamedTuple):
    """One call as the templates read it."""

    kind: str | None  # the template family of this call (see call_kind)
    arguments: dict[str, Any]  # what the template reads (a code-mode cell: its call's own)
    commands: tuple[str, ...] = ()  # what a terminal call ran, in order
    patch: tuple[PatchChange, ...] = ()  # what its patch bodies change, in order
    more: int = 0  # calls of a code-mode cell that the template's line does not name


def read_call(name: str, arguments: dict[str, Any], scripts: bool = True) -> CallReading:
    """How a call reads: its family (an editor's by its `command`, a code-mode cell's by what it
    calls), its commands and its patch."""
    kind = tool_kind(name)
    if kind == "editor":
        command = str(arguments.get("command", ""))
        if command == "view":
            return CallReading("read_file", arguments)
        if command == "create":
            content = arguments.get("file_text", "")
            return CallReading("write_file", {**arguments, "content": content})
        return CallReading("patch", {**arguments, "mode": command or "replace"})
    if kind == "terminal":
        return _terminal_reading(arguments, scripts)
    if kind == "patch":
        body = argument(arguments, *PATCH_KEYS)
        changes = patch_changes(body) if isinstance(body, str) else []
        return CallReading("patch", arguments, (), tuple(changes))
    return CallReading(kind, arguments)


def call_kind(name: str, arguments: dict[str, Any]) -> str | None:
    """The template family of one call: the alias table's, decided per call for the tools whose
    family depends on their arguments (an editor's `command`, what a code-mode cell calls)."""
    return read_call(name, arguments).kind


def _script_reading(calls: list[ScriptCall], arguments: dict[str, Any]) -> CallReading:
    """A code-mode cell: a terminal call when it runs any command (the commands of every
    `tools.exec_command`), else the family of the first tool it calls that has a template."""
    found: list[str] = []
    changes: list[PatchChange] = []
    first: CallReading | None = None
    count = patches = 0
    for call in calls:
        value = call.argument
        inner = value if isinstance(value, dict) else {} if value is None else {"input": value}
        reading = read_call(call.tool, inner, scripts=False)
        if reading.kind == "terminal":
            found.extend(reading.commands)
            count += max(1, len(reading.commands))
        else:
            count += 1
        if reading.patch:
            changes.extend(reading.patch)
            patches += 1
        if first is None and reading.kind not in (None, "terminal"):
            first = reading
    if found:
        return CallReading("terminal", arguments, tuple(found), tuple(changes), count - 1)
    if first is not None:
        shown = max(patches, 1) if first.kind == "patch" else 1
        return first._replace(patch=tuple(changes), more=count - shown)
    names = ", ".join(dict.fromkeys(call.tool for call in calls))
    return CallReading(None, {"tools": names})
