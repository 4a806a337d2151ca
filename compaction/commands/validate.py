"""`compaction validate`: would a provider accept this conversation? Exit status says so.

Exit 0 when the provider would accept the request (warnings are printed but do not fail it),
1 when it has errors (or warnings, with --strict), 2 when the input cannot be read.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import click

from compaction.errors import CompactionError
from compaction.validate import PROVIDERS, errors, validate


def _load_messages(path: str) -> list[Any]:
    """The message list in `path`; raises click.ClickException (exit 2 by the caller) otherwise."""
    try:
        formats = importlib.import_module("compaction.formats")
    except ImportError:
        formats = None
    loader = getattr(formats, "load_for_cli", None)
    if loader is not None:
        # Every importer at once: the formats area's loader detects the format itself.
        loaded = loader(path)
        messages = getattr(loaded, "messages", loaded)
        if not isinstance(messages, list):
            raise CompactionError(f"{path}: the loader returned no message list")
        return messages
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompactionError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CompactionError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except ValueError as exc:
        raise CompactionError(f"{path}: not valid JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise CompactionError(
            f'{path}: expected a JSON list of messages or {{"messages": [...]}}, '
            f"got a JSON {type(data).__name__}"
        )
    return data


@click.command("validate")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option(
    "--provider",
    type=click.Choice(PROVIDERS),
    default="openai",
    show_default=True,
    help="Whose request rules to check.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def validate_command(input_path: str, provider: str, as_json: bool, strict: bool) -> None:
    """Check INPUT against a provider's rules for tool calls, roles and contents."""
    try:
        messages = _load_messages(input_path)
    except CompactionError as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from exc
    problems = validate(messages, provider=provider)
    failing = problems if strict else errors(problems)
    if as_json:
        report = {
            "input": input_path,
            "provider": provider,
            "messages": len(messages),
            "valid": not failing,
            "problems": [problem.to_dict() for problem in problems],
        }
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for problem in problems:
            click.echo(str(problem))
        error_count = len(errors(problems))
        warning_count = len(problems) - error_count
        verdict = "INVALID" if failing else "valid"
        click.echo(
            f"{input_path}: {verdict} for {provider} "
            f"({len(messages)} messages, {error_count} errors, {warning_count} warnings)"
        )
    raise SystemExit(1 if failing else 0)
