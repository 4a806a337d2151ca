"""Subcommands of the `compaction` CLI, one module per area (the group itself is in cli.py)."""
