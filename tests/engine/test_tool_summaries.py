"""Phase 1's one-line summaries, byte for byte against ALGORITHM.md's templates, the aliases of
real agents, the failure evidence suffix, and the never-raise guarantee."""

from __future__ import annotations

from typing import Any

import pytest

from compaction.summary import static_marker
from compaction.text.one_liners import (
    DUPLICATE_MARKER,
    STUB_RESULT,
    TOOL_ALIASES,
    error_evidence,
    exit_code,
    is_already_pruned,
    summarize_tool_output,
    tool_kind,
)


def lines(n: int, text: str = "ok") -> str:
    """An output with exactly n lines (n - 1 newlines)."""
    return "\n".join(f"{text} {i}" for i in range(n))


def test_markers_are_exact() -> None:
    assert DUPLICATE_MARKER == "[Duplicate tool output — same content as a more recent call]"
    assert STUB_RESULT == "[Result from earlier conversation — see context summary above]"


def test_terminal_template() -> None:
    output = lines(46) + '\n{"exit_code": 0}'
    assert (
        summarize_tool_output("terminal", {"command": "npm test"}, output)
        == "[terminal] ran `npm test` -> exit 0, 47 lines output"
    )


def test_terminal_unknown_exit_code_and_thousands_separator() -> None:
    output = lines(1_234)
    assert (
        summarize_tool_output("terminal", {"command": "cat big.log"}, output)
        == "[terminal] ran `cat big.log` -> exit ?, 1,234 lines output"
    )


def test_terminal_command_cut_to_80() -> None:
    command = "echo " + "a" * 200
    line = summarize_tool_output("terminal", {"command": command}, "done")
    assert line == f"[terminal] ran `{command[:80]}...` -> exit ?, 1 lines output"
    exactly_80 = "x" * 80
    assert f"`{exactly_80}`" in summarize_tool_output("terminal", {"command": exactly_80}, "ok")


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ('{"exit_code": 2, "output": "x"}', 2),
        ("build\nexit code 3", 3),
        ("Exit status 127", 127),
        ("exit code: 1", 1),
        ("no code here", None),
        ("Process exited with code 1", 1),
        # The pattern reads this form too; the ASCII pre-test once skipped it (None here, 1
        # with any non-ASCII character in the output).
        ("Process exited with status 1", 1),
        ("Process exited with status 1 —", 1),
        ("EXITED WITH STATUS 4", 4),
    ],
)
def test_exit_code_forms(output: str, code: int | None) -> None:
    assert exit_code(output) == code


def test_failure_keeps_the_exception_line() -> None:
    output = (
        "Traceback (most recent call last):\n"
        '  File "app/db.py", line 12, in insert\n'
        "    cursor.execute(sql)\n"
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email\n"
        "exit code 1"
    )
    assert (
        summarize_tool_output("terminal", {"command": "python app.py"}, output)
        == "[terminal] ran `python app.py` -> exit 1, 5 lines output — "
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email"
    )


def test_failure_prefers_the_last_exception_line() -> None:
    output = "ValueError: first\nduring handling\nKeyError: 'missing'\n"
    assert error_evidence(output) == "KeyError: 'missing'"


def test_failure_without_exception_keeps_the_last_error_line() -> None:
    output = (
        "collected 12 items\nFAILED tests/test_a.py::test_one\n"
        "FAILED tests/test_b.py::test_two\n2 passed"
    )
    line = summarize_tool_output("bash", {"command": "pytest"}, output)
    assert (
        line == "[bash] ran `pytest` -> exit ?, 4 lines output — FAILED tests/test_b.py::test_two"
    )


def test_failure_evidence_for_a_nonzero_exit_with_no_error_word() -> None:
    output = "compiling\nlinking\nexit status 2"
    assert error_evidence(output, exit_code(output)) == "exit status 2"
    assert error_evidence("all good", 0) is None
    assert error_evidence("fine\nfatal: not a git repository") == "fatal: not a git repository"


def test_evidence_is_cut_to_160() -> None:
    output = "RuntimeError: " + "x" * 400
    evidence = error_evidence(output)
    assert evidence == ("RuntimeError: " + "x" * 400)[:160] + "..."


def test_read_file_template() -> None:
    output = "x" * 1_200
    assert (
        summarize_tool_output("read_file", {"path": "config.py"}, output)
        == "[read_file] read config.py from line 1 (1,200 chars)"
    )
    assert (
        summarize_tool_output("read_file", {"path": "config.py", "offset": 40}, output)
        == "[read_file] read config.py from line 40 (1,200 chars)"
    )


def test_write_file_template() -> None:
    content = "\n".join(["line"] * 42)
    assert (
        summarize_tool_output("write_file", {"path": "app.py", "content": content}, "w" * 300)
        == "[write_file] wrote to app.py (42 lines)"
    )


def test_search_files_template() -> None:
    output = "\n".join(f"agent/m{i}.py:1: compress" for i in range(12)) + "\n\n"
    assert (
        summarize_tool_output("search_files", {"pattern": "compress", "path": "agent/"}, output)
        == "[search_files] content search for 'compress' in agent/ -> 12 matches"
    )
    counted = '{"total_count": 1500, "matches": []}'
    assert (
        summarize_tool_output("search_files", {"pattern": "x", "target": "files"}, counted)
        == "[search_files] files search for 'x' in . -> 1,500 matches"
    )


def test_patch_template() -> None:
    assert (
        summarize_tool_output("patch", {"path": "auth.py"}, "p" * 342)
        == "[patch] replace in auth.py (342 chars result)"
    )
    assert (
        summarize_tool_output("patch", {"path": "auth.py", "mode": "insert"}, "p" * 10)
        == "[patch] insert in auth.py (10 chars result)"
    )


def test_browser_navigate_template() -> None:
    assert (
        summarize_tool_output("browser_navigate", {"url": "https://example.com"}, "b" * 4_200)
        == "[browser_navigate] https://example.com (4,200 chars)"
    )


def test_delegate_task_goal_cut_to_30() -> None:
    goal = "fix the race condition in the scheduler module"
    assert goal[:30] == "fix the race condition in the "
    assert (
        summarize_tool_output("delegate_task", {"goal": goal}, "d" * 15_000)
        == "[delegate_task] 'fix the race condition in the...' (15,000 chars result)"
    )
    exactly_30 = "fix the race condition in abc, then rerun everything"
    assert (
        summarize_tool_output("delegate_task", {"goal": exactly_30}, "d" * 15_000)
        == "[delegate_task] 'fix the race condition in abc,...' (15,000 chars result)"
    )
    assert (
        summarize_tool_output("delegate_task", {"goal": "short goal"}, "d" * 5)
        == "[delegate_task] 'short goal' (5 chars result)"
    )


def test_generic_template_first_two_arguments_values_cut_to_40() -> None:
    arguments = {"key1": "value1", "key2": "v" * 100, "key3": "ignored"}
    assert (
        summarize_tool_output("lookup", arguments, "r" * 5_000)
        == f"[lookup] key1=value1 key2={'v' * 40}... (5,000 chars result)"
    )
    assert summarize_tool_output("lookup", {}, "r" * 5_000) == "[lookup] (5,000 chars result)"
    assert summarize_tool_output("", {}, "r" * 5_000) == "[unknown] (5,000 chars result)"
    assert (
        summarize_tool_output("unknown", {"a": 1, "b": [1, 2]}, "r" * 250)
        == "[unknown] a=1 b=1 2 (250 chars result)"
    )


def test_generic_template_keeps_failure_evidence() -> None:
    output = "querying...\nValueError: bad id 7"
    assert (
        summarize_tool_output("lookup", {"id": 7}, output)
        == f"[lookup] id=7 ({len(output)} chars result) — ValueError: bad id 7"
    )


@pytest.mark.parametrize(
    ("name", "arguments", "output", "expected"),
    [
        ("Bash", {"command": "ls"}, "a\nb", "[Bash] ran `ls` -> exit ?, 2 lines output"),
        (
            "exec_command",
            {"cmd": ["bash", "-lc", "make"]},
            "ok",
            # A shell's `-lc` script is the command that ran.
            "[exec_command] ran `make` -> exit ?, 1 lines output",
        ),
        (
            "shell",
            {"command": ["ls", "-la"]},
            "ok",
            "[shell] ran `ls -la` -> exit ?, 1 lines output",
        ),
        (
            "execute_bash",
            {"command": "pwd"},
            "/repo",
            "[execute_bash] ran `pwd` -> exit ?, 1 lines output",
        ),
        (
            "Read",
            {"file_path": "/src/a.py"},
            "r" * 300,
            "[Read] read /src/a.py from line 1 (300 chars)",
        ),
        (
            "Write",
            {"file_path": "b.py", "content": "1\n2\n3"},
            "ok",
            "[Write] wrote to b.py (3 lines)",
        ),
        (
            "Edit",
            {"file_path": "c.py", "old_string": "a", "new_string": "b"},
            "e" * 250,
            "[Edit] replace in c.py (250 chars result)",
        ),
        (
            "MultiEdit",
            {"file_path": "c.py", "edits": []},
            "ok",
            "[MultiEdit] replace in c.py (2 chars result)",
        ),
        (
            "Grep",
            {"pattern": "TODO", "path": "src"},
            "a\nb\nc",
            "[Grep] content search for 'TODO' in src -> 3 matches",
        ),
        (
            "Glob",
            {"pattern": "**/*.py"},
            "a.py\nb.py",
            "[Glob] files search for '**/*.py' in . -> 2 matches",
        ),
        (
            "WebFetch",
            {"url": "https://docs.python.org", "prompt": "x"},
            "w" * 2_000,
            "[WebFetch] https://docs.python.org (2,000 chars)",
        ),
        (
            "Task",
            {"description": "find the bug", "prompt": "long"},
            "t" * 999,
            "[Task] 'find the bug' (999 chars result)",
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** End Patch"},
            "Done!",
            "[apply_patch] update src/x.py (5 chars result)",
        ),
        (
            "str_replace_editor",
            {"command": "view", "path": "/r/a.py"},
            "v" * 700,
            "[str_replace_editor] read /r/a.py from line 1 (700 chars)",
        ),
        (
            "str_replace_editor",
            {"command": "create", "path": "/r/n.py", "file_text": "a\nb"},
            "File created",
            "[str_replace_editor] wrote to /r/n.py (2 lines)",
        ),
        (
            "str_replace_editor",
            {"command": "str_replace", "path": "/r/a.py", "old_str": "x", "new_str": "y"},
            "s" * 400,
            "[str_replace_editor] str_replace in /r/a.py (400 chars result)",
        ),
    ],
)
def test_aliases_map_onto_the_templates(
    name: str, arguments: dict[str, Any], output: str, expected: str
) -> None:
    assert summarize_tool_output(name, arguments, output) == expected


def test_alias_table_covers_the_named_agents() -> None:
    expected = {
        "Bash": "terminal",
        "exec_command": "terminal",
        "shell": "terminal",
        "execute_bash": "terminal",
        "bash": "terminal",
        "Read": "read_file",
        "Write": "write_file",
        "Edit": "patch",
        "MultiEdit": "patch",
        "apply_patch": "patch",
        "Grep": "search_files",
        "Glob": "search_files",
        "WebFetch": "browser_navigate",
        "Task": "delegate_task",
        "str_replace_editor": "editor",
    }
    for name, kind in expected.items():
        assert tool_kind(name) == kind, name
    assert tool_kind("my_custom_tool") is None
    # One table, no name in two families.
    every = [n for names in TOOL_ALIASES.values() for n in names]
    assert len(every) == len(set(every))


def test_wrapped_json_terminal_output_is_read_inside() -> None:
    output = '{"output": "line1\\nline2\\nline3", "exit_code": 1, "error": "boom failed"}'
    assert (
        summarize_tool_output("terminal", {"command": "make"}, output)
        == "[terminal] ran `make` -> exit 1, 4 lines output — boom failed"
    )


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("terminal", {"command": {"nested": [1, {"x": None}]}}),
        ("read_file", {"path": None, "offset": {"a": 1}}),
        ("write_file", {"path": 5, "content": ["not", "text"]}),
        ("search_files", {"pattern": 3.5, "path": ["a", "b"]}),
        ("patch", {"input": 12}),
        ("browser_navigate", {"url": ["x"]}),
        ("delegate_task", {"goal": {"deep": True}}),
        ("str_replace_editor", {"command": None}),
        ("anything", {"k": object()}),
    ],
)
def test_odd_argument_shapes_never_raise(name: str, arguments: dict[str, Any]) -> None:
    line = summarize_tool_output(name, arguments, "z" * 300)
    assert line.startswith(f"[{name}] ")
    assert "\n" not in line


def test_already_pruned_content_is_recognised() -> None:
    assert is_already_pruned(DUPLICATE_MARKER)
    assert is_already_pruned(STUB_RESULT)
    assert is_already_pruned(static_marker(4))
    one_liner = summarize_tool_output("terminal", {"command": "ls"}, "a\nb")
    assert is_already_pruned(one_liner)
    assert not is_already_pruned("[INFO] starting\nreal output\nmore")
    assert not is_already_pruned("plain text output")


def test_every_already_pruned_form_opens_with_a_bracket() -> None:
    """is_already_pruned stops at the first character of nearly every output: each form it
    knows (the markers, the stub, a summary line) opens with "["."""
    from compaction.summary import STATIC_MARKER_START
    from compaction.text.one_liners import _SUMMARY_LINE

    for form in (DUPLICATE_MARKER, STUB_RESULT, STATIC_MARKER_START):
        assert form.startswith("[")
    assert _SUMMARY_LINE.pattern.startswith("^\\[")
    assert not is_already_pruned(" " + DUPLICATE_MARKER)


def test_pytest_failure_explanations_are_quoted_without_their_prefix() -> None:
    output = (
        "tests/test_x.py F\n>       assert parse('abc')\n"
        "E       ValueError: invalid literal for int() with base 10: 'abc'\n"
        "1 failed in 0.12s\nexit code 1"
    )
    line = summarize_tool_output("terminal", {"command": "pytest -x"}, output)
    assert line.endswith(" — ValueError: invalid literal for int() with base 10: 'abc'")


def test_a_successful_output_names_an_error_only_where_it_reports_one() -> None:
    # Issue 29: `sed` printing a file's source ended its line in "— code: ERROR_CODES.NOT_FOUND,",
    # a failure that never happened; a journal that reports an exception keeps it as evidence.
    source = "  if (!user) {\n    code: ERROR_CODES.NOT_FOUND,\n    message: 'Failed to load',\n"
    assert error_evidence(source, 0) is None
    assert error_evidence("457→ {String.slice(error.error_content, 0, 100)}") is None
    assert error_evidence("except ValueError:\n    pass\n") is None
    journal = (
        "Jun 03 07:40:54 staging-1 gunicorn[2291]: sqlite3.IntegrityError: UNIQUE constraint "
        "failed: users.email\nJun 03 07:41:00 staging-1 systemd[1]: ok\n"
    )
    assert error_evidence(journal, 0) == (
        "Jun 03 07:40:54 staging-1 gunicorn[2291]: sqlite3.IntegrityError: UNIQUE constraint "
        "failed: users.email"
    )
    line = summarize_tool_output("Bash", {"command": "sed -n '1,40p' src/a.ts"}, source)
    assert " — " not in line
