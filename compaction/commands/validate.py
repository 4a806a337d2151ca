"""`compaction validate`: would a provider accept this conversation? Exit status says so.

Exit 0 when the provider would accept the request (warnings are printed but do not fail it),
1 when it has errors (or warnings, with --strict), 2 when the input cannot be read. What the
importer reported (a broken JSONL line skipped, a repair) is printed as every command prints it,
`warning: PATH: ...` on stderr, or listed under "warnings" in the --json report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from compaction.commands.common import json_printable, print_warnings, source_options
from compaction.commands.terminal import printable
from compaction.errors import CompactionError
from compaction.formats import load_for_cli
from compaction.provider_rules import PROVIDERS, errors, validate

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


def _load_messages(
    path: str, source_format: str, index: int | None
) -> tuple[list[Any], str, list[str]]:
    """(messages, how they were read, the loader's warnings); raises CompactionError when the
    input cannot be used. The warnings are the other commands' (a broken JSONL line skipped, a
    repair made): a file imported first is checked as the engine receives it, and the user is
    told what was left out of it, never "36 messages" in silence."""
    source = Path(path)
    text = None
    # A folder, a database address (`opencode.db#ses_…`) or a session id is the loader's to
    # open (formats/folders.py); only a file is read here.
    address = not source.exists() and ("#" in path or path.startswith("ses_"))
    if not source.is_dir() and not address:
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise CompactionError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
        except UnicodeDecodeError:
            text = None  # a database, or not text at all: the loader says which
    if text is not None and source_format in ("auto", "openai") and index is None:
        try:
            canonical = _canonical(json.loads(text))
        except (ValueError, RecursionError):
            canonical = None
        if canonical is not None:
            return canonical, "checked as written", []
    conversation = load_for_cli(path, source_format, index)
    return conversation.messages, f"imported from {conversation.format}", conversation.warnings


def _count(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


@click.command("validate")
@click.argument("input_path", metavar="INPUT", type=click.Path())
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
        messages, how, warnings = _load_messages(input_path, source_format, index)
    except CompactionError as exc:
        click.echo(f"Error: {printable(str(exc), newlines=False)}", err=True)
        raise SystemExit(2) from exc
    if not as_json:  # --json carries them in the report, so its output stays one JSON value
        print_warnings(warnings, input_path)
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
            "warnings": warnings,
        }
        click.echo(json_printable(json.dumps(report, indent=2, ensure_ascii=False)))
    else:
        for problem in problems:
            click.echo(printable(str(problem), newlines=False))
        error_count = len(errors(problems))
        warning_count = len(problems) - error_count
        verdict = "INVALID" if failing else "valid"
        click.echo(
            f"{printable(input_path, newlines=False)}: {verdict} for {provider} "
            f"({_count(len(messages), 'message')} {how}; {_count(error_count, 'error')}, "
            f"{_count(warning_count, 'warning')})"
        )
    raise SystemExit(1 if failing else 0)
