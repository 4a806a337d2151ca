"""`compaction validate`: would a provider accept this conversation? Exit status says so.

Exit 0 when the provider would accept the request (warnings are printed but do not fail it),
1 when it has errors (or warnings, with --strict), 2 when the input cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from compaction.commands.common import source_options
from compaction.errors import CompactionError
from compaction.formats import load_for_cli
from compaction.validate import PROVIDERS, errors, validate

_KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")


_ANTHROPIC_BLOCKS = ("tool_use", "tool_result")


def _canonical(data: Any) -> list[Any] | None:
    """The message list of a canonical (OpenAI) JSON request, or None for any other shape.

    A canonical list is validated exactly as written: importing it would repair problems (missing
    ids, anonymous results) that the provider would reject.
    """
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list) or not data:
        return None
    for message in data:
        if not isinstance(message, dict) or message.get("role") not in _KNOWN_ROLES:
            return None
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") in _ANTHROPIC_BLOCKS for part in content
        ):
            return None  # an Anthropic request: the importer converts its blocks
    return data


def _load_messages(path: str, source_format: str, index: int | None) -> tuple[list[Any], str]:
    """(messages, how they were read); raises CompactionError when the input cannot be used."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise CompactionError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CompactionError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    if source_format in ("auto", "openai") and index is None:
        try:
            canonical = _canonical(json.loads(text))
        except (ValueError, RecursionError):
            canonical = None
        if canonical is not None:
            return canonical, "checked as written"
    conversation = load_for_cli(path, source_format, index)
    return conversation.messages, f"imported from {conversation.format}"


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


@click.command("validate")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option(
    "--provider",
    type=click.Choice(PROVIDERS),
    default="openai",
    show_default=True,
    help="Whose request rules to check.",
)
@source_options
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def validate_command(
    input_path: str,
    provider: str,
    source_format: str,
    index: int | None,
    as_json: bool,
    strict: bool,
) -> None:
    """Check INPUT against a provider's rules for tool calls, roles and contents.

    A canonical JSON message list is checked exactly as written; any other session format is
    imported first (and so checked as the engine would receive it).
    """
    try:
        messages, how = _load_messages(input_path, source_format, index)
    except CompactionError as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from exc
    problems = validate(messages, provider=provider)
    failing = problems if strict else errors(problems)
    if as_json:
        report = {
            "input": input_path,
            "provider": provider,
            "read": how,
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
            f"({_count(len(messages), 'message')} {how}; {_count(error_count, 'error')}, "
            f"{_count(warning_count, 'warning')})"
        )
    raise SystemExit(1 if failing else 0)
