"""What a tool call did, read from every agent's shape of it: the table of tool-name aliases
(`aliases.py`), the family, commands and patch of one call (`reading.py`), and Codex's
code-mode cells, JavaScript calling the agent's tools (`script.py`, over the tokens of
`javascript.py`).

Phase 1's one-liners (tool_summaries.py), the summariser's actions and file effects, and the
lab's probes (through text_patterns.py) all read calls here, so they agree on what ran.
"""

from compaction.text.tool_calls.aliases import FILE_SEARCHES, TOOL_ALIASES, tool_kind
from compaction.text.tool_calls.reading import (
    COMMAND_KEYS,
    CallReading,
    PatchChange,
    argument,
    argv_text,
    call_kind,
    command_text,
    commands,
    patch_changes,
    read_call,
    written,
)
from compaction.text.tool_calls.script import ScriptCall, script_calls

__all__ = [
    "COMMAND_KEYS",
    "FILE_SEARCHES",
    "TOOL_ALIASES",
    "CallReading",
    "PatchChange",
    "ScriptCall",
    "argument",
    "argv_text",
    "call_kind",
    "command_text",
    "commands",
    "patch_changes",
    "read_call",
    "script_calls",
    "tool_kind",
    "written",
]
