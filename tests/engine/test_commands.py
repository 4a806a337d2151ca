"""Commands are shown as commands (issue 29): Phase 1's one-liners and the summary's actions read
the command out of every tool-call shape of the corpus and the formats doc — Codex's code-mode
`exec` cells (JavaScript calling `tools.exec_command`), apply_patch bodies, argv lists, Codex
Desktop's `shell_command`, hermes' `terminal`, Gemini CLI's `run_shell_command`, Antigravity's
run steps, OpenHands' `execute_bash`, SWE-agent's `bash`. Each record here is hand-written in the
shape the corpus shows; the last test reads every terminal call of the corpus itself."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.formats import load_conversations
from compaction.messages import parse_arguments
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.summarizers.base import SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary import parse_summary
from compaction.text.one_liners import is_already_pruned, summarize_tool_output
from compaction.text.patterns import command_text, written_paths
from compaction.text.tool_calls import call_kind, script_calls

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
CODE_MODE_OUTPUT = "Script completed\nWall time 0.8 seconds\nOutput:\nOn branch main\nclean"


def cell(source: str) -> dict[str, Any]:
    """A Codex `custom_tool_call` named `exec`, as the Codex importer wraps its free text."""
    return {"input": source}


# -- Codex code mode: JavaScript calling the agent's tools ---------------------------------------


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        # Quoted keys, the result printed with text(): the command is the cmd string.
        (
            'const r = await tools.exec_command({"cmd": "git status", "workdir": "/srv/app"});\n'
            "text(r.output);",
            "git status",
        ),
        # Bare keys and single quotes.
        (
            "text((await tools.exec_command({cmd: 'npm test', workdir: '/srv/web'})).output);",
            "npm test",
        ),
        # A template literal whose ${…} is a constant of the cell.
        (
            'const dir = "web";\nawait tools.exec_command({cmd: `cd ${dir} && npm test`});',
            "cd web && npm test",
        ),
        # An expression only running the cell would give stays as its source.
        ("await tools.exec_command({cmd: `make ${target}`});", "make ${target}"),
        # Escaped quotes inside the string, and a pragma comment before the code.
        (
            '// @exec: {"max_output_tokens": 20000}\n'
            'text(await tools.exec_command({"cmd": "grep -n \\"def main\\" app.py"}));',
            'grep -n "def main" app.py',
        ),
        # JSON.stringify and string concatenation.
        (
            'await tools.exec_command({cmd: "cat " + JSON.stringify("my notes.txt")});',
            'cat "my notes.txt"',
        ),
        # An argv list joined in the cell.
        ('await tools.exec_command({cmd: ["git", "log", "-1"].join(" ")});', "git log -1"),
        # A call written inside a string, a comment or a regular expression is not a call.
        (
            "const note = 'tools.exec_command({cmd: \"rm -rf /\"})';\n"
            "// tools.exec_command({cmd: 'x'})\n"
            "const re = /tools.exec_command\\(/g; const half = total / 2;\n"
            "await tools.exec_command({cmd: 'ls src'});",
            "ls src",
        ),
        # A cell cut short (a shrunk argument): the open string runs to the end.
        (
            'const r = await tools.exec_command({cmd: "pytest -q tests/test_api.py',
            "pytest -q tests/test_api.py",
        ),
    ],
)
def test_a_code_mode_cell_shows_the_command_it_ran(source: str, shown: str) -> None:
    assert (
        summarize_tool_output("exec", cell(source), CODE_MODE_OUTPUT)
        == f"[exec] ran `{shown}` -> exit ?, 5 lines output"
    )
    assert command_text(cell(source)) == shown
    assert call_kind("exec", cell(source)) == "terminal"


@pytest.mark.parametrize(
    "source",
    [
        "const results = await Promise.allSettled([\n"
        '  tools.exec_command({cmd: "pytest -q"}),\n'
        '  tools.exec_command({cmd: "ruff check ."}),\n'
        "]);",
        'const cmds = ["pytest -q", "ruff check ."];\n'
        "for (const c of cmds) { text((await tools.exec_command({cmd: c})).output); }",
        'await Promise.all(["pytest -q", "ruff check ."]'
        ".map((cmd) => tools.exec_command({ cmd })));",
    ],
)
def test_a_cell_running_several_commands_shows_the_first_and_counts_the_rest(source: str) -> None:
    assert (
        summarize_tool_output("exec", cell(source), "exit code 0\n2 passed")
        == "[exec] ran `pytest -q` (+1 more) -> exit 0, 2 lines output"
    )
    assert command_text(cell(source)) == "pytest -q"


def test_a_cell_that_patches_names_the_files_and_a_later_command_wins() -> None:
    patch_only = (
        "const patch = await tools.apply_patch(`*** Begin Patch\n*** Add File: notes/todo.md\n"
        "+- ship it\n*** End Patch`);"
    )
    assert (
        summarize_tool_output("exec", cell(patch_only), "Success. Updated the following files")
        == "[exec] add notes/todo.md (36 chars result)"
    )
    assert call_kind("exec", cell(patch_only)) == "patch"
    assert command_text(cell(patch_only)) == ""
    assert written_paths("exec", cell(patch_only), json.dumps(cell(patch_only))) == [
        "notes/todo.md"
    ]
    # A double-quoted body with escaped newlines, then the test run: the run is the line's
    # command, the patch counts as one more, and both files the cell wrote are known.
    then_test = (
        'text(await tools.apply_patch("*** Begin Patch\\n*** Update File: src/lib.rs\\n@@\\n'
        '-old\\n+new\\n*** End Patch"));\n'
        'text(await tools.exec_command({cmd: "cargo test > build/test.log"}));'
    )
    assert (
        summarize_tool_output("exec", cell(then_test), "exit code 0")
        == "[exec] ran `cargo test > build/test.log` (+1 more) -> exit 0, 1 lines output"
    )
    assert written_paths("exec", cell(then_test), "") == ["src/lib.rs", "build/test.log"]


def test_a_cell_calling_other_tools_maps_them_to_their_templates() -> None:
    read = "text(await tools.read_file({file_path: 'src/app.py', offset: 10}));"
    assert (
        summarize_tool_output("exec", cell(read), "r" * 300)
        == "[exec] read src/app.py from line 10 (300 chars)"
    )
    assert call_kind("exec", cell(read)) == "read_file"
    image = 'image((await tools.view_image({path: "/tmp/shot.png"})).content);'
    assert (
        summarize_tool_output("exec", cell(image), "i" * 250)
        == "[exec] tools=view_image (250 chars result)"
    )
    assert call_kind("exec", cell(image)) is None


def test_a_cell_that_only_computes_is_not_a_command() -> None:
    computing = "const total = [1, 2, 3].reduce((a, b) => a + b, 0);\ntext(total);"
    assert call_kind("exec", cell(computing)) is None
    assert command_text(cell(computing)) == ""
    # Elsewhere `exec` takes a plain command, which is shown as one.
    assert (
        summarize_tool_output("exec", {"command": "ls -la"}, "a\nb")
        == "[exec] ran `ls -la` -> exit ?, 2 lines output"
    )


# -- apply_patch --------------------------------------------------------------------------------

PATCH = (
    "*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n-    return 1\n+    return 2\n"
    "*** Add File: src/b.py\n+x = 1\n*** End Patch\n"
)


def test_an_apply_patch_line_names_each_file_and_what_happened_to_it() -> None:
    output = '{"output":"Success. Updated the following files:\\nM src/a.py\\nA src/b.py\\n"}'
    assert (
        summarize_tool_output("apply_patch", {"input": PATCH}, output)
        == f"[apply_patch] update src/a.py, add src/b.py ({len(output)} chars result)"
    )
    moved = (
        "*** Begin Patch\n*** Delete File: old/c.py\n*** Update File: src/d.py\n"
        "*** Move to: src/e.py\n@@\n-a\n+b\n*** End Patch"
    )
    assert (
        summarize_tool_output("apply_patch", {"input": moved}, "Done!")
        == "[apply_patch] delete old/c.py, move src/d.py -> src/e.py (5 chars result)"
    )
    assert written_paths("apply_patch", {"input": moved}, "") == ["src/e.py"]
    many = "*** Begin Patch\n" + "".join(f"*** Add File: f{i}.py\n+{i}\n" for i in range(5))
    assert (
        summarize_tool_output("apply_patch", {"input": many}, "ok")
        == "[apply_patch] add f0.py, add f1.py, add f2.py (+2 more) (2 chars result)"
    )
    # A path argument keeps the patch template.
    assert (
        summarize_tool_output("apply_patch", {"path": "auth.py", "input": PATCH}, "p" * 342)
        == "[apply_patch] replace in auth.py (342 chars result)"
    )


# -- shells of every agent ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "output", "expected"),
    [
        # Codex's argv lists: a shell's -c script is the command; other lists are shell-quoted.
        (
            "shell",
            {"command": ["bash", "-lc", "pytest -q && git status"], "workdir": "/repo"},
            "ok",
            "[shell] ran `pytest -q && git status` -> exit ?, 1 lines output",
        ),
        (
            "shell",
            {"command": ["/bin/zsh", "-c", "ls"]},
            "ok",
            "[shell] ran `ls` -> exit ?, 1 lines output",
        ),
        (
            "shell",
            {"command": ["powershell.exe", "-NoProfile", "-Command", "Get-ChildItem -Force"]},
            "ok",
            "[shell] ran `Get-ChildItem -Force` -> exit ?, 1 lines output",
        ),
        (
            "shell",
            {"command": ["ls", "-la", "my dir"]},
            "ok",
            "[shell] ran `ls -la 'my dir'` -> exit ?, 1 lines output",
        ),
        (
            "local_shell",
            {"type": "exec", "command": ["bash", "-lc", "make"], "working_directory": "/w"},
            "ok",
            "[local_shell] ran `make` -> exit ?, 1 lines output",
        ),
        # Codex exec_command and Codex Desktop's shell_command.
        (
            "exec_command",
            {"cmd": "sed -n '1,40p' api/routes.ts", "workdir": "/srv", "yield_time_ms": 1000},
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nx",
            "[exec_command] ran `sed -n '1,40p' api/routes.ts` -> exit 0, 5 lines output",
        ),
        (
            "shell_command",
            {"command": "Get-ChildItem -Force", "workdir": "C:\\Users\\me\\game", "timeout_ms": 1},
            "Exit code: 0\nWall time: 0.4 seconds\nOutput:\nREADME.md",
            "[shell_command] ran `Get-ChildItem -Force` -> exit 0, 4 lines output",
        ),
        # hermes' terminal, whose output is wrapped in JSON.
        (
            "terminal",
            {"command": "npm test", "timeout": 120},
            '{"output": "47 passing", "exit_code": 0, "error": null}',
            "[terminal] ran `npm test` -> exit 0, 1 lines output",
        ),
        # Gemini CLI.
        (
            "run_shell_command",
            {"command": "uv run pytest", "description": "Run the tests", "directory": "bot"},
            "Command: uv run pytest\nExit Code: 0",
            "[run_shell_command] ran `uv run pytest` -> exit 0, 2 lines output",
        ),
        # Antigravity's run step: PascalCase arguments.
        (
            "run_command",
            {"CommandLine": "npm run build", "Cwd": "C:\\app", "Blocking": True},
            "ok",
            "[run_command] ran `npm run build` -> exit ?, 1 lines output",
        ),
        # OpenHands and SWE-agent.
        (
            "execute_bash",
            {"command": "cd /workspace/repo && make test", "is_input": "false"},
            "ok\n[Command finished with exit code 0]",
            "[execute_bash] ran `cd /workspace/repo && make test` -> exit 0, 2 lines output",
        ),
        (
            "bash",
            {"command": "python reproduce.py"},
            "345",
            "[bash] ran `python reproduce.py` -> exit ?, 1 lines output",
        ),
    ],
)
def test_every_shell_shape_shows_its_command(
    name: str, arguments: dict[str, Any], output: str, expected: str
) -> None:
    assert summarize_tool_output(name, arguments, output) == expected


@pytest.mark.parametrize(
    ("name", "arguments", "output", "expected"),
    [
        (
            "write_to_file",
            {
                "ArtifactMetadata": {"ArtifactType": "implementation_plan", "Summary": "plan"},
                "CodeContent": "# Plan\n\n- step one",
                "TargetFile": "C:\\work\\brain\\implementation_plan.md",
                "toolAction": "Writing the plan",
            },
            "Created file",
            "[write_to_file] wrote to C:\\work\\brain\\implementation_plan.md (3 lines)",
        ),
        (
            "view_file",
            {"AbsolutePath": "C:\\app\\main.py", "StartLine": 20, "EndLine": 80},
            "v" * 400,
            "[view_file] read C:\\app\\main.py from line 20 (400 chars)",
        ),
        (
            "grep_search",
            {"SearchPath": "C:\\app", "Query": "def main", "Includes": ["*.py"]},
            "main.py:3\nlib.py:9",
            "[grep_search] content search for 'def main' in C:\\app -> 2 matches",
        ),
    ],
)
def test_antigravity_steps_show_their_file_and_pattern(
    name: str, arguments: dict[str, Any], output: str, expected: str
) -> None:
    assert summarize_tool_output(name, arguments, output) == expected


def test_antigravity_writes_are_written_paths() -> None:
    arguments = {"TargetFile": "C:\\app\\plan.md", "CodeContent": "x"}
    assert written_paths("write_to_file", arguments, json.dumps(arguments)) == ["C:\\app\\plan.md"]


# -- the summary's actions ----------------------------------------------------------------------

REQUEST = "Make the signup endpoint reject duplicate emails."
FAILING = (
    "Script completed\nOutput:\ntests/test_signup.py F\n"
    "E   ValueError: duplicate email a@example.com\n"
    "FAILED tests/test_signup.py::test_duplicate_email - ValueError: duplicate email\n"
    "========== 1 failed, 12 passed in 1.1s ==========\n"
)
PASSING = "Script completed\nOutput:\n========== 13 passed in 1.0s ==========\n"


def code_mode_turns() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": REQUEST}]
    cells = [
        (
            'const r = await tools.exec_command({"cmd": "python -m pytest -q", "workdir": "/srv"});'
            "\ntext(r.output);",
            FAILING,
        ),
        ("await tools.exec_command({cmd: \"sed -i 's/insert/upsert/' app/users.py\"});", "ok"),
        ("text((await tools.exec_command({cmd: 'python -m pytest -q'})).output);", PASSING),
    ]
    for position, (source, output) in enumerate(cells):
        call_id = f"call_{position}"
        turns.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "exec", "arguments": json.dumps(cell(source))},
                    }
                ],
            }
        )
        turns.append({"role": "tool", "tool_call_id": call_id, "content": output})
    return turns


def test_the_summary_of_a_code_mode_session_reads_its_commands() -> None:
    turns = code_mode_turns()
    serialized = serialize_turns(turns)
    request = SummaryRequest(
        turns=turns,
        serialized=serialized,
        budget_tokens=3_000,
        prompt=build_prompt(serialized, 3_000, None, None),
        focus=None,
        latest_user_request=REQUEST,
        raw_turns=turns,
        first_user_request=REQUEST,
    )
    summary = parse_summary(ExtractiveSummarizer().summarize(request))
    actions = summary.sections["Completed Actions"]
    assert "input=const" not in actions
    assert "1. [exec] ran `python -m pytest -q` -> failed" in actions
    assert "2. [exec] ran `sed -i 's/insert/upsert/' app/users.py`" in actions
    assert "3. [exec] ran `python -m pytest -q`" in actions
    assert "(fixed by action 3)" in actions  # the test run is recognised as one
    assert "app/users.py — edited (sed -i)" in summary.sections["Relevant Files"]
    assert "Last test: `python -m pytest -q`" in summary.sections["Active State"]


def test_phase_one_prunes_a_code_mode_output_to_its_command() -> None:
    turns = code_mode_turns()
    big = "Script completed\nOutput:\n" + "\n".join(f"line {i}" for i in range(400))
    turns[2] = {**turns[2], "content": big}
    messages = [*turns, *[{"role": "user", "content": f"next {i}"} for i in range(3)]]
    config = CompactionConfig(context_length=2_000, protect_first_n=1, summary_min_tokens=200)
    result = Compactor(config).compress(messages, force=True)
    lines = [m["content"] for m in result.phases[0].messages if m.get("role") == "tool"]
    assert "[exec] ran `python -m pytest -q` -> exit ?, 402 lines output" in lines


# -- never raise --------------------------------------------------------------------------------


DEEP_LIST = "tools.exec_command(" + "[" * 5_000 + "'deep'" + "]" * 5_000 + ")"
DEEP_TEMPLATE = "tools.exec_command({cmd: " + "`${" * 3_000 + "})"
DEEP_PARENTHESES = "tools.apply_patch(" + "(" * 4_000 + ")"


@pytest.mark.parametrize(
    ("arguments", "command"),
    [
        ({"input": 5}, ""),
        ({"input": ["ls", "-la"]}, "ls -la"),
        ({"input": None, "command": {"nested": True}}, ""),
        ({"input": "tools.exec_command("}, "${}"),
        ({"input": "tools.exec_command({cmd: "}, "${}"),
        (
            {"input": "tools.exec_command({cmd: 'ls', ...rest, [key]: 3, f() {}, n: -1})"},
            "ls",
        ),
        ({"input": "tools.exec_command({cmd: {a: 1}})"}, ""),
        ({"input": "tools.exec_command({cmd: [1, {x: 2}]})"}, ""),
        ({"input": "tools.exec_command({cmd: `a ${`b ${`c"}, "a b c"),
        ({"input": "tools.exec_command({cmd: 'x\\u{110000}\\ud800\\x4'})"}, "xu{110000}\ufffdx4"),
        # Nested deeper than Python's stack: the cell is not read, its text is what it ran.
        ({"input": DEEP_LIST}, DEEP_LIST),
        ({"input": DEEP_TEMPLATE}, DEEP_TEMPLATE),
        ({"input": DEEP_PARENTHESES}, DEEP_PARENTHESES),
        ({"input": "for (const c of ) tools.exec_command({cmd: c}); x.map(() => 1)"}, "${c}"),
        ({"input": "tools['exec_command']({cmd: 'ls'}); tools[0](1); tools.(); tools."}, "ls"),
        ({"input": "} ] ) tools.exec_command({]}) /* an open comment"}, ""),
        ({"command": ["bash", "-lc"]}, "bash -lc"),
        ({"command": ["bash", {"x": 1}, "ls"]}, ""),
        ({"CommandLine": ["a", None]}, ""),
    ],
)
def test_odd_shapes_never_raise_and_stay_one_line(arguments: dict[str, Any], command: str) -> None:
    assert command_text(arguments) == command
    for name in ("exec", "shell", "apply_patch", "run_command"):
        line = summarize_tool_output(name, arguments, "z" * 300)
        assert line.startswith(f"[{name}] ")
        assert "\n" not in line
        assert isinstance(written_paths(name, arguments, json.dumps(arguments, default=str)), list)


def test_a_cell_nested_to_make_reading_quadratic_is_read_in_linear_time() -> None:
    # Each `const` is read by skipping the rest of its value: 8,000 nested ones cost the
    # squared length (some 30 s) without the reader's step budget.
    source = "const a = () => { " * 8_000 + "tools.exec_command({cmd: 'ls'})" + " }" * 8_000
    started = time.perf_counter()
    assert command_text(cell(source)) == "ls"
    assert time.perf_counter() - started < 5


FRAGMENTS = [
    "tools.exec_command(", "tools.apply_patch(", "tools.read_file(", "{", "}", "(", ")", "[",
    "]", ",", ":", ";", "cmd", "`", "${", "'", '"', "\\", "/", "//", "/*", "*/", "\n", " ",
    "const c = ", "for (const c of ", ".map((c) => ", ".join(", "JSON.stringify(", "+", "...",
    "=>", "await ", "'ls -la'", '"npm test"', "*** Add File: a.py\n", "\\u{", "\\ud83d", "0x",
]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_any_cell_is_read_without_raising(pieces: list[str]) -> None:
    source = "".join(pieces)
    calls = script_calls(source)
    assert all(isinstance(call.tool, str) for call in calls)
    line = summarize_tool_output("exec", cell(source), "out")
    assert "\n" not in line
    assert isinstance(command_text(cell(source)), str)


def test_a_one_liner_is_recognised_as_pruned_on_the_next_pass() -> None:
    many = "*** Begin Patch\n" + "".join(f"*** Add File: {'d/' * 90}f{i}.py\n" for i in range(9))
    line = summarize_tool_output("apply_patch", {"input": many}, "ok")
    assert line.startswith("[apply_patch] add d/d/") and "(+6 more)" in line
    assert is_already_pruned(line)
    long_command = "tools.exec_command({cmd: '" + "x" * 500 + "'})"
    line = summarize_tool_output("exec", cell(long_command), "z" * 300)
    assert line.startswith(f"[exec] ran `{'x' * 80}...` -> exit ?")
    assert is_already_pruned(line)


# -- the corpus ---------------------------------------------------------------------------------

#: What a command never looks like in its line: the generic template's `key=value` pairs
#: (`[exec] input=const r = …`) or the arguments' JSON.
RAW_ARGUMENTS = re.compile(r"^\[[^\]]+\] (?:input|command|cmd|CommandLine)=|ran `\{\"")


def _first_line_cut(command: str) -> str:
    line = " ".join(command.strip().split("\n", 1)[0].split())
    return line if len(line) <= 80 else line[:80].rstrip()


def _shell_command_of(arguments: dict[str, Any]) -> str | None:
    """The command string a call carries, read independently of the code under test."""
    for key in ("command", "cmd", "CommandLine"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS} (a fresh user clone)"
)
def test_every_corpus_command_is_shown_in_its_one_liner() -> None:
    checked = 0
    for path in sorted(CORPUS.iterdir()):
        if path.name == "README.md":
            continue
        for conversation in load_conversations(path):
            for message in conversation.messages:
                for call in message.get("tool_calls") or []:
                    name = call["function"]["name"]
                    arguments = parse_arguments(call["function"]["arguments"])
                    command = _shell_command_of(arguments)
                    is_editor = "command" in arguments and "path" in arguments
                    terminal = call_kind(name, arguments) == "terminal"
                    if not terminal and (command is None or is_editor):
                        continue
                    command = command or command_text(arguments)
                    line = summarize_tool_output(name, arguments, "x" * 300)
                    where = f"{path.name}: {name} {call['function']['arguments'][:120]}"
                    assert f"] ran `{_first_line_cut(command)}" in line, where
                    assert "input=const" not in line, where
                    assert not RAW_ARGUMENTS.search(line), where
                    checked += 1
    assert checked > 200, checked
