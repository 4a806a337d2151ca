"""docs/cli.md is the commands' own help: regenerated, it is unchanged (else run
`python -m compaction.commands.reference --write`), and it holds every command and option."""

from __future__ import annotations

import click

from compaction.cli import main
from compaction.commands.reference import DOC, render, run


def test_docs_cli_md_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: python -m compaction.commands.reference --write"
    )
    assert run(["--check"]) == 0


def test_every_command_and_option_is_in_the_reference() -> None:
    text = render()
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        assert f"## compaction {name}" in text
        for parameter in command.params:
            for option in getattr(parameter, "opts", []):
                if option.startswith("-"):
                    assert option in text, f"{name} {option}"
