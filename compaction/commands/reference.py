"""docs/cli.md, generated from the click commands themselves: every command's and subcommand's
`--help`, so the reference cannot drift from the code.

    python -m compaction.commands.reference --write   # regenerate docs/cli.md
    python -m compaction.commands.reference --check   # exit 1 when docs/cli.md is stale (CI)

The help is rendered at a fixed width, so the file is the same on every terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from compaction.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
WIDTH = 100
HEADER = """# The `compaction` command line

Generated from the commands' own `--help` by `python -m compaction.commands.reference --write`;
CI fails when it is stale. The README shows the five commands most people need; this is all of
them, with every option.

Every command reads any supported session format (detected from the content; `--from` to
override, docs/formats.md), prints one line naming the file and what is wrong on bad input and
exits with status 2, and never modifies its input. Commands that need an optional extra (the run
history, an LLM) say which one when it is not installed.
"""


def _commands(
    group: click.Group, ctx: click.Context, prefix: str
) -> Iterator[tuple[str, click.Command, click.Context]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}"
        sub = click.Context(command, info_name=name, parent=ctx, max_content_width=WIDTH)
        sub.terminal_width = WIDTH
        yield path, command, sub
        if isinstance(command, click.Group):
            yield from _commands(command, sub, path)


def render() -> str:
    """The whole reference, as docs/cli.md holds it."""
    root = click.Context(
        main, info_name="compaction", max_content_width=WIDTH, **main.context_settings
    )
    root.terminal_width = WIDTH
    parts = [HEADER, "## compaction\n", "```text", main.get_help(root), "```\n"]
    contents = []
    for path, command, ctx in _commands(main, root, "compaction"):
        anchor = path.replace(" ", "-")
        contents.append(f"- [`{path}`](#{anchor}) — {command.get_short_help_str(80)}")
        parts += [
            f'<a id="{anchor}"></a>\n\n## {path}\n',
            "```text",
            command.get_help(ctx),
            "```\n",
        ]
    return "\n".join([*parts[:1], "Contents:\n", *contents, "", *parts[1:]]).rstrip() + "\n"


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate docs/cli.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC}")
        return 0
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if current != text:
        print(
            f"{DOC} is stale: run python -m compaction.commands.reference --write",
            file=sys.stderr,
        )
        return 1
    print(f"{DOC} is current")
    return 0


if __name__ == "__main__":
    sys.exit(run())
