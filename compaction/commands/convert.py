"""`compaction convert`: any supported session file to OpenAI or Anthropic messages.

Bad input ends with one line on stderr and exit status 2 (never a traceback), and the output file
is written to a temporary file beside it and renamed, so a failed run never leaves a partial file.
"""

from __future__ import annotations

from pathlib import Path

import click

from compaction.commands.common import (
    check_outputs,
    dump_json,
    fail,
    source_options,
    write_output,
    write_stdout,
)
from compaction.errors import CompactionError
from compaction.formats import EXPORT_FORMATS, dump_conversation, load_for_cli


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--to", "target", type=click.Choice(EXPORT_FORMATS), required=True, help="Output format."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here instead of standard output.",
)
@source_options
def convert(
    input_path: Path, target: str, output: Path | None, source_format: str, index: int | None
) -> None:
    """Convert a conversation file (any supported agent format) to OpenAI or Anthropic JSON."""
    check_outputs([output], [input_path])
    try:
        conversation = load_for_cli(input_path, source_format, index)
    except CompactionError as exc:
        fail(str(exc))
        return
    for warning in conversation.warnings:
        click.echo(f"warning: {warning}", err=True)
    text = dump_json(dump_conversation(conversation.messages, target), input_path)
    if output is None:
        write_stdout(text + "\n")
        return
    write_output(output, text + "\n", inputs=[input_path])
    click.echo(
        f"{conversation.format} → {target}: {len(conversation.messages)} messages written to "
        f"{output}",
        err=True,
    )
