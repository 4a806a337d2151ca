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
    json_printable,
    load_input,
    source_options,
    write_output,
    write_stdout,
)
from compaction.commands.terminal import printable
from compaction.formats import EXPORT_FORMATS, dump_conversation


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
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
    conversation = load_input(input_path, source_format, index)
    text = dump_json(dump_conversation(conversation.messages, target), input_path)
    if output is None:
        write_stdout(json_printable(text) + "\n")
        return
    write_output(output, text + "\n", inputs=[input_path])
    click.echo(
        f"{conversation.format} → {target}: {len(conversation.messages)} messages written to "
        f"{printable(str(output), newlines=False)}",
        err=True,
    )
