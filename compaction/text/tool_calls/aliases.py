"""The table of tool-name aliases: which template family each agent's tool belongs to.

Agents name the same tools differently (Claude Code's `Bash`, Codex's `exec_command`, SWE-agent's
`str_replace_editor`, Antigravity's `run_command`...). Every alias lives in `TOOL_ALIASES`, so
adding an agent is one table edit.
"""

from __future__ import annotations

#: Template kind -> tool names (case-sensitive as agents write them).
TOOL_ALIASES: dict[str, tuple[str, ...]] = {
    "terminal": (
        "terminal",  # hermes
        "bash",  # SWE-agent, Copilot CLI
        "Bash",  # Claude Code
        "execute_bash",  # OpenHands
        "exec_command",  # Codex
        "shell",  # Codex (older): the command is an argv list
        "shell_command",  # Codex Desktop
        "local_shell",  # Codex's local_shell_call
        # Codex's code mode: a JavaScript cell calling `tools.exec_command(...)` and other tools
        # (read per call by tool_calls.reading), or a plain `{"command": ...}` elsewhere.
        "exec",
        "run_shell_command",  # Gemini CLI
        "run_command",  # Antigravity (`CommandLine`)
        "execute_command",
        "run_terminal_cmd",
    ),
    "read_file": ("read_file", "Read", "view_file", "read", "ReadFile", "read_many_files"),
    "write_file": (
        "write_file",
        "Write",
        "create_file",
        "WriteFile",
        "write_to_file",  # Antigravity (`TargetFile`, `CodeContent`)
    ),
    "search_files": (
        "search_files",
        "Grep",
        "Glob",
        "grep",
        "search",
        "find_files",
        "search_file_content",
        "glob",
        "file_search",
        "codebase_search",
        "grep_search",  # Antigravity (`Query`, `SearchPath`)
        "find_by_name",  # Antigravity (`Pattern`, `SearchDirectory`)
        "grep_files",  # Codex
    ),
    "patch": (
        "patch",
        "Edit",
        "MultiEdit",
        "apply_patch",
        "edit_file",
        "replace",
        "edit",
        "NotebookEdit",
        "replace_file_content",  # Antigravity
        "multi_replace_file_content",  # Antigravity
    ),
    "browser_navigate": (
        "browser_navigate",
        "WebFetch",
        "web_fetch",
        "fetch",
        "navigate",
        "read_url_content",  # Antigravity (`Url`)
    ),
    "delegate_task": ("delegate_task", "Task", "Agent", "dispatch_agent"),
    # SWE-agent / OpenHands editor: decided per call by its `command` argument.
    "editor": ("str_replace_editor", "str_replace_based_edit_tool"),
}

#: Tools whose results list files rather than lines that matched.
FILE_SEARCHES = frozenset({"Glob", "glob", "find_files", "find_by_name"})

_KIND_BY_NAME = {name: kind for kind, names in TOOL_ALIASES.items() for name in names}


def tool_kind(tool_name: str) -> str | None:
    """The template family of a tool name, or None for tools without a template."""
    return _KIND_BY_NAME.get(tool_name)
