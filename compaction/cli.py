"""The `compaction` command line (click). Subcommands of each area live in compaction/commands/."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="compaction-lab")
def main() -> None:
    """See, tune and teach how LLM agents compact their context."""


# -- subcommands registered by area --
from compaction.commands.compress import compress_command, inspect_command  # noqa: E402

main.add_command(compress_command)
main.add_command(inspect_command)
from compaction.commands.validate import validate_command  # noqa: E402

main.add_command(validate_command)
from compaction.commands.convert import convert as convert_command  # noqa: E402

main.add_command(convert_command)
from compaction.commands.history import history_group  # noqa: E402

main.add_command(history_group)
from compaction.commands.simulate import simulate_command  # noqa: E402

main.add_command(simulate_command)
from compaction.commands.evaluate import eval_command  # noqa: E402

main.add_command(eval_command)
from compaction.commands.sweep import sweep_command  # noqa: E402

main.add_command(sweep_command)
from compaction.commands.sessions import sessions_command  # noqa: E402

main.add_command(sessions_command)
from compaction.commands.audit import audit_command  # noqa: E402

main.add_command(audit_command)
