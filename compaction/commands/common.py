"""What every subcommand shares: the one-line error exit, the input-selection options, `--set`
parsing, warnings printed safely, and output writing (atomic for files, written through for FIFOs
and devices, never over an input, always valid JSON) — so every command fails, reads, warns and
writes the same way."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from compaction.commands.terminal import printable
from compaction.config import CompactionConfig
from compaction.errors import CompactionError
from compaction.formats import FORMATS, Conversation, load_for_cli

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    """One line on stderr and exit status 2: bad input never ends in a traceback. The message
    often quotes the input (a file name, a record), so it is printed through `printable`."""
    click.echo(f"error: {printable(message, newlines=False)}", err=True)
    raise SystemExit(2)


def print_warnings(warnings: Iterable[str], source: Path | str | None = None) -> None:
    """Each warning as one `warning: SOURCE: text` line on stderr, through `printable`.

    Every command prints what the loader reported (a skipped broken line, a repair, a record it
    could not read) this one way, so no command can drop them or let the text they quote (file
    content) reach the terminal raw.
    """
    where = f"{printable(str(source), newlines=False)}: " if source is not None else ""
    for warning in warnings:
        click.echo(f"warning: {where}{printable(warning, newlines=False)}", err=True)


def print_compactions(lines: Iterable[str], source: Path | str | None = None) -> None:
    """The compactions the agent itself recorded, one `note: SOURCE: …` line each: what the
    session holds, not a problem with reading it (the warnings are those)."""
    where = f"{printable(str(source), newlines=False)}: " if source is not None else ""
    for line in lines:
        click.echo(
            f"note: {where}the agent compacted its context at {printable(line, newlines=False)}",
            err=True,
        )


def load_input(
    path: Path | str, source_format: str, index: int | None, notes: bool = True
) -> Conversation:
    """The conversation a command works on, its warnings printed (and, with `notes`, the
    compactions the agent made, for a command that does not list them itself); exit 2 when it
    cannot be read."""
    try:
        conversation = load_for_cli(path, source_format, index)
    except CompactionError as exc:
        fail(str(exc))
    print_warnings(conversation.warnings, path)
    if notes:
        print_compactions(conversation.compaction_lines(), path)
    return conversation


# DEL and the C1 controls, which json.dumps(ensure_ascii=False) writes raw (it escapes only
# U+0000-U+001F), and lone surrogates, which cannot be encoded at all.
_JSON_RAW = re.compile("[\x7f-\x9f\ud800-\udfff]")


def json_printable(text: str) -> str:
    """JSON text with DEL, the C1 controls and lone surrogates written as `\\u` escapes: the same
    JSON value, safe to send to a terminal (a raw U+009B is a one-character CSI)."""
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def source_options(function: F) -> F:
    """`--from FORMAT` (alias `--format`) and `--index N`, for commands that read a session."""
    function = click.option(
        "--index", type=int, default=None, help="Which conversation of a multi-conversation file."
    )(function)
    function = click.option(
        "--from",
        "--format",
        "source_format",
        type=click.Choice(["auto", *FORMATS]),
        default="auto",
        show_default=True,
        help="Input format (detected from the content by default).",
    )(function)
    return function


def parse_settings(pairs: tuple[str, ...]) -> dict[str, Any]:
    """`--set field=value` pairs, values parsed as JSON where they can be (numbers, strings)."""
    settings: dict[str, Any] = {}
    names = CompactionConfig.field_names()
    for pair in pairs:
        name, separator, raw = pair.partition("=")
        name = name.strip()
        if not separator or name not in names:
            fail(f"--set {pair!r}: expected FIELD=VALUE with FIELD one of {', '.join(names)}")
        try:
            settings[name] = json.loads(raw)
        except ValueError:
            settings[name] = raw.strip()
    return settings


def _identity(path: Path) -> tuple[int, int] | str:
    """What a path names: the file itself (device, inode) when it exists, so hard links and
    symlinks to it count as the same file; else the absolute path it would be created at."""
    try:
        status = path.stat()
    except (OSError, ValueError):
        try:
            return str(path.resolve())
        except (OSError, RuntimeError):  # a symlink loop
            return str(path.absolute())
    return (status.st_dev, status.st_ino)


def check_outputs(outputs: Iterable[Path | str | None], inputs: Iterable[Path | str]) -> None:
    """Exit 2 when an output path is an input file, another output of the same command, or in
    a folder that does not exist.

    The input file is never modified: `compress s.json -o s.json` would otherwise replace the
    session the user is debugging with its compaction. Commands call this before their work, so
    a long sweep does not end in a refusal; `write_output` checks again, so no writer can forget.
    """
    sources = {_identity(Path(source)): Path(source) for source in inputs}
    seen: dict[tuple[int, int] | str, Path] = {}
    for output in (Path(output) for output in outputs if output is not None):
        identity = _identity(output)
        if identity in sources:
            fail(
                f"{output}: would overwrite the input file {sources[identity]}; "
                "choose another output path"
            )
        if identity in seen and not _is_character_device(output):
            fail(f"{output}: is also the path of another output ({seen[identity]})")
        seen[identity] = output
        folder = output.parent
        if not folder.is_dir():
            reason = "Not a directory" if folder.exists() else "No such file or directory"
            fail(f"{output}: cannot write: {reason}")


def _is_character_device(path: Path) -> bool:
    """/dev/null named twice (`-o /dev/null --report /dev/null`) is two discarded outputs."""
    try:
        return stat.S_ISCHR(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, then rename, so a
    failed run never leaves a partial file. Only for a regular file or a new path: renaming
    over anything else replaces it (`write_output` chooses)."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        # Overwriting keeps the file's mode, as open(path, "w") would; a new file gets
        # 0o666 minus the umask, not the 0o600 mkstemp gives its private temporary files.
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_through(path: Path, text: str) -> None:
    """Open `path` and write `text` into it, as a shell's `>` would: for a FIFO (the reader gets
    the text; opening waits for one) and a character device (/dev/null, /dev/full, a terminal),
    which a rename would replace with a regular file (as root, /dev/null itself)."""
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(text)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, for the refusal; None for one that is written through."""
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def write_output(path: Path | str, text: str, *, inputs: Iterable[Path | str]) -> None:
    """Write a command's output file, refusing to replace one of `inputs`; a write that fails (no
    such folder, no permission, disk full) exits 2 with one line.

    What `path` names decides how. A regular file (or a new path) gets the atomic write. A
    symlink is followed: its target gets the atomic write and the link stays a link. A FIFO or a
    character device is written through (`write_through`). A block device, socket or directory
    is refused with exit 2: JSON written over a disk is never what was meant. Nothing that is
    not a regular file is ever renamed over.
    """
    target = Path(path)
    check_outputs([target], inputs)
    try:
        resolved = Path(os.path.realpath(target)) if target.is_symlink() else target
        try:
            mode: int | None = os.stat(resolved).st_mode
        except FileNotFoundError:
            mode = None
        if mode is None or stat.S_ISREG(mode):
            write_atomically(resolved, text)
        elif (kind := _kind(mode)) is not None:
            fail(f"{target}: cannot write: {kind}, not a file; choose a file path")
        else:
            write_through(resolved, text)
    except OSError as exc:
        fail(f"{target}: cannot write: {exc.strerror or exc}")


def write_stdout(text: str) -> None:
    """Write a command's result to standard output; a failed write (a full disk, a closed pipe)
    exits 2 with one line instead of a traceback."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        _discard_stdout()
        fail(f"<stdout>: cannot write: {exc.strerror or exc}")


def _discard_stdout() -> None:
    """Point the stdout descriptor at /dev/null: the text still buffered would fail again when
    Python flushes it at exit, printing a second error and changing the exit status to 120."""
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return  # not a real file (a test runner's buffer): nothing is flushed at exit
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def dump_json(value: Any, source: Path | str, indent: int | None = 2) -> str:
    """`value` as JSON text that any parser accepts: NaN and Infinity, which Python's json would
    write bare, exit 2 with one line naming `source` instead of producing an invalid file."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError as exc:
        fail(f"{source}: the output would hold NaN or Infinity, which JSON does not allow ({exc})")
