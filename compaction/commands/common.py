"""What every subcommand shares: the one-line error exit, the input-selection options, `--set`
parsing and atomic output files — so every command fails, reads and writes the same way."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from compaction.config import CompactionConfig
from compaction.formats import FORMATS

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    """One line on stderr and exit status 2: bad input never ends in a traceback."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)


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


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, then rename, so a
    failed run never leaves a partial file."""
    folder = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
