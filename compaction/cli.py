"""The `compaction` command line (click). Subcommands of each area live in compaction/commands/.

Each subcommand's module is imported only when that subcommand runs (or `--help` lists them):
`history` pulls in sqlite-utils, pandas and pyarrow and the lab commands their own weight, none of
which `compaction compress` needs — eager registration cost every command seconds at start-up.
"""

from __future__ import annotations

from importlib import import_module

import click

#: command name -> (module in compaction.commands, attribute holding the click command)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("audit", "audit_command"),
    "compress": ("compress", "compress_command"),
    "convert": ("convert", "convert"),
    "cost": ("cost", "cost_command"),
    "eval": ("evaluate", "eval_command"),
    "history": ("history", "history_group"),
    "inspect": ("compress", "inspect_command"),
    "scan": ("scan", "scan_command"),
    "sessions": ("sessions", "sessions_command"),
    "simulate": ("simulate", "simulate_command"),
    "sweep": ("sweep", "sweep_command"),
    "validate": ("validate", "validate_command"),
}


#: A module an optional extra installs -> that extra (pyproject.toml).
EXTRAS: dict[str, str] = {
    "streamlit": "app",
    "plotly": "app",
    "altair": "app",
    "pandas": "app",
    "sqlite_utils": "app",
    "litellm": "llm",
    "dask": "dask",
    "distributed": "dask",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use, by name; a command that needs
    an extra the install lacks says which one, not a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            missing = (exc.name or "").partition(".")[0]
            extra = EXTRAS.get(missing)
            if extra is None:
                raise
            raise click.ClickException(
                f"this command needs {missing}, which is not installed: "
                f"pip install 'compaction-lab[{extra}]'"
            ) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in COMMANDS:
            return command
        module, attribute = COMMANDS[cmd_name]
        loaded = getattr(import_module(f"compaction.commands.{module}"), attribute)
        if not isinstance(loaded, click.Command):
            raise TypeError(f"compaction.commands.{module}.{attribute} is not a click command")
        self.add_command(loaded, cmd_name)  # later look-ups are plain dictionary reads
        return loaded


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="compaction-lab")
def main() -> None:
    """See, tune and teach how LLM agents compact their context."""
