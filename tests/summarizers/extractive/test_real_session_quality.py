"""What issue 22 asked of the extractive summary on real sessions, each on a hand-made session:
unresolved failures quoted in Blocked (and fixed ones named in Completed Actions), the user's own
latest request as Active Task, files read and changed through shell commands, alike actions
grouped, decisions with their object, and a focus topic matched on word stems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.formats import load_conversation
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.summarizers.base import SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summary import Summary, parse_summary

REQUEST = "Make the signup endpoint reject duplicate emails."
UNIQUE = (
    "psycopg.errors.UniqueViolation: "
    'duplicate key value violates unique constraint "users_email_key"'
)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def shell(call_id: str, command: str, output: str, text: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": text,
            "tool_calls": [call(call_id, "exec_command", cmd=command)],
        },
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def summarize(
    turns: list[dict[str, Any]], budget: int = 3_000, focus: str | None = None
) -> tuple[Summary, dict[str, Any]]:
    serialized = serialize_turns(turns)
    request = SummaryRequest(
        turns=turns,
        serialized=serialized,
        budget_tokens=budget,
        prompt=build_prompt(serialized, budget, None, focus),
        focus=focus,
        latest_user_request=REQUEST,
        raw_turns=turns,
        first_user_request=REQUEST,
    )
    summarizer = ExtractiveSummarizer()
    summary = parse_summary(summarizer.summarize(request))
    assert summary.found_headings == 13
    return summary, summarizer.last_details


FAILING_RUN = (
    "Process exited with code 1\nOutput:\n"
    "tests/test_signup.py F\n"
    "    def test_duplicate_email(db):\n"
    f"E   {UNIQUE}\n"
    "E   DETAIL:  Key (email)=(a@example.com) already exists.\n"
    f"FAILED tests/test_signup.py::test_duplicate_email - {UNIQUE[:60]}\n"
    "========== 1 failed, 212 passed in 9.1s ==========\n"
)
PASSING_RUN = "Process exited with code 0\nOutput:\n========== 213 passed in 9.0s ==========\n"
NARROW_PASS = "Process exited with code 0\nOutput:\n========== 3 passed in 0.4s ==========\n"


def test_a_planted_failure_never_resolved_is_quoted_verbatim_in_blocked() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        *shell("c1", "python -m pytest -q", FAILING_RUN),
        # A narrower run passing says nothing about the test that failed in the whole suite.
        *shell("c2", "python -m pytest -q tests/test_login.py", NARROW_PASS),
        {"role": "assistant", "content": "The login tests pass."},
    ]
    summary, _ = summarize(turns)
    blocked = summary.sections["Blocked"]
    assert blocked.startswith("- `python -m pytest -q` failed (exit 1), not fixed since: ")
    # The exception line first, verbatim, then the rest of the evidence.
    assert f"not fixed since: `{UNIQUE}`" in blocked
    assert "1 failed, 212 passed" in blocked


def test_a_failure_fixed_later_is_not_blocked_and_the_fix_is_named() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        *shell("c1", "python -m pytest -q", FAILING_RUN),
        *shell(
            "c2", "sed -i 's/insert/upsert/' app/users.py", "Process exited with code 0\nOutput:\n"
        ),
        *shell("c3", "python -m pytest -q", PASSING_RUN),
    ]
    summary, _ = summarize(turns)
    assert summary.sections["Blocked"] == "None."
    actions = summary.sections["Completed Actions"]
    assert "(fixed by action 3)" in actions
    assert f"fixed the failure of action 1: `{UNIQUE}`" in actions


def test_a_codex_sed_in_place_puts_the_file_in_relevant_files_as_modified() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        *shell("c1", "sed -i 's/old/new/' src/a.py", "Process exited with code 0\nOutput:\n"),
        *shell(
            "c2",
            "cat > notes/plan.md <<'EOF'\n# plan\nEOF",
            "Process exited with code 0\nOutput:\n",
        ),
        *shell(
            "c3",
            "git mv src/b.py src/c.py && git add src/c.py",
            "Process exited with code 0\nOutput:\n",
        ),
        *shell(
            "c4", "/usr/bin/time -v rm -f build/out.log", "Process exited with code 0\nOutput:\n"
        ),
    ]
    summary, _ = summarize(turns)
    files = summary.sections["Relevant Files"]
    assert "- src/a.py — edited (sed -i)" in files
    assert "- notes/plan.md — written" in files
    assert "- src/b.py — moved to src/c.py" in files
    assert "- src/c.py — moved from src/b.py, staged (git add)" in files
    assert "- build/out.log — deleted" in files
    assert "/usr/bin/time" not in files  # a program is not a file
    assert "src/a.py" in summary.sections["Active State"]


def test_an_apply_patch_body_names_what_happened_to_each_file() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n"
        "*** Update File: src/old.py\n@@\n-a\n+b\n"
        "*** Delete File: src/gone.py\n*** End Patch\n"
    )
    turns = [
        {"role": "user", "content": REQUEST},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("p1", "apply_patch", input=patch)],
        },
        {"role": "tool", "tool_call_id": "p1", "content": "Success. Updated the following files"},
    ]
    files = summarize(turns)[0].sections["Relevant Files"]
    assert "- src/new.py — created" in files
    assert "- src/old.py — edited" in files
    assert "- src/gone.py — deleted" in files


def test_repeated_test_runs_and_stretches_of_reads_are_grouped() -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": REQUEST}]
    for number in range(7):
        output = FAILING_RUN if number in (2, 3) else PASSING_RUN
        turns += shell(f"t{number}", "python -m pytest -q", output)
    for number in range(4):
        turns += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"r{number}", "Read", file_path=f"/repo/src/m{number}.py")],
            },
            {"role": "tool", "tool_call_id": f"r{number}", "content": "x = 1\n" * 3},
        ]
    actions = summarize(turns)[0].sections["Completed Actions"]
    lines = actions.splitlines()
    assert sum("python -m pytest" in line for line in lines) == 1
    assert (
        "ran `python -m pytest` 7× as `python -m pytest -q` (also actions 1, 2, 3, 4, 5, 6); "
        "2 failed (2 of them fixed)" in actions
    )
    assert (
        "[Read] read 4 files in 4 calls (actions 8–11): /repo/src/m0.py, /repo/src/m1.py" in actions
    )


def test_a_decision_that_points_back_carries_its_object() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        {
            "role": "assistant",
            "content": "Option 3 adds a unique index and catches the violation in the handler. "
            "I'll go with option 3.",
        },
        {"role": "assistant", "content": "Expected — I'll use that alias in the next edits."},
    ]
    decisions = summarize(turns)[0].sections["Key Decisions"]
    assert decisions == (
        "- Option 3 adds a unique index and catches the violation in the handler. → "
        "I'll go with option 3."
    )


def test_focus_matches_word_stems_and_reports_what_it_kept() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        *shell(
            "c1",
            "cargo test --workspace",
            "Process exited with code 0\nOutput:\ntest result: ok. 12 passed\n",
        ),
        *shell("c2", "npm run lint", "Process exited with code 0\nOutput:\nclean\n"),
    ]
    _, details = summarize(turns, focus="Rust tests")
    assert details["focus_stems"] == ["rust", "test"]
    matched = {item["text"] for item in details["focus_items"]}
    assert any("cargo test" in text for text in matched)
    assert not any("npm run lint" in text for text in matched)
    assert all(item["kept"] for item in details["focus_items"])
    assert details["focus_matched"] == len(details["focus_items"])


def _claude_record(
    kind: str, uuid: str, parent: str | None, content: Any, **extra: Any
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"role": kind, "id": f"m-{uuid}", "content": content}
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "message": message,
        **extra,
    }


def test_a_claude_code_session_ending_on_stop_hook_feedback_keeps_the_user_request(
    tmp_path: Path,
) -> None:
    request = "Port the parser to Rust and delete the Python files when done."
    records = [_claude_record("user", "u0", None, request)]
    parent = "u0"
    for number in range(12):
        use = f"a{number}"
        records.append(
            _claude_record(
                "assistant",
                use,
                parent,
                [
                    {
                        "type": "tool_use",
                        "id": f"t{number}",
                        "name": "Bash",
                        "input": {"command": f"cargo build -p part{number}"},
                    }
                ],
            )
        )
        records.append(
            _claude_record(
                "user",
                f"r{number}",
                use,
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{number}",
                        "content": "Compiling...\n" * 80,
                    }
                ],
            )
        )
        parent = f"r{number}"
    records.append(
        _claude_record("assistant", "done", parent, [{"type": "text", "text": "All parts build."}])
    )
    feedback = (
        "Stop hook feedback:\n[stop.sh]: # Uncommitted Changes Detected\n"
        "Cannot exit with unstaged changes."
    )
    records.append(_claude_record("user", "hook", "done", feedback, isMeta=True))
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    conversation = load_conversation(path)
    assert conversation.messages[-1]["content"] == feedback
    assert conversation.marks[len(conversation.messages) - 1] == "stop-hook"
    result = Compactor(CompactionConfig(context_length=4_000, protect_first_n=1)).compress(
        conversation,
        force=True,  # a Conversation: its messages, and what it records beside them
    )
    assert not result.skipped
    assert result.summary is not None
    assert result.summary.sections["Active Task"] == request
    assert result.summary.sections["Goal"] == request


def test_identifiers_say_what_they_are() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        *shell("c1", "git log --oneline -1", "Exit code: 0\nOutput:\n05fd186 feat: close review\n"),
        *shell("c2", "cat pyproject.toml", 'Exit code: 0\nOutput:\nversion = "2.12.0"\n'),
        {"role": "assistant", "content": "Background job <task-id>b0be39e</task-id> started."},
    ]
    critical = summarize(turns)[0].sections["Critical Context"]
    assert "05fd186 (feat: close review)" in critical
    assert "b0be39e (task-id)" in critical
    assert "2.12.0 (version)" in critical


def test_css_colours_are_colours_and_url_templates_are_left_out() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        {
            "role": "assistant",
            "content": "Styled it with color: #888 and see issue #42 on http://127.0.0.1:${PORT}/x.",
        },
    ]
    critical = summarize(turns)[0].sections["Critical Context"]
    assert "127.0.0.1:$" not in critical
    assert "- Issues/PRs: #42 (issue)" in critical
    assert "- Colours: #888 (color)" in critical


def test_a_users_should_and_instead_are_constraints() -> None:
    turns = [
        {"role": "user", "content": REQUEST},
        {"role": "assistant", "content": "Which account should I use?"},
        {
            "role": "user",
            "content": "The details should be in my profile. Let's cancel it instead. Thanks!",
        },
    ]
    constraints = summarize(turns)[0].sections["Constraints & Preferences"]
    assert "- The details should be in my profile." in constraints
    assert "- Let's cancel it instead." in constraints
    assert "Thanks" not in constraints


def test_an_error_in_a_tool_result_carried_by_a_user_turn_is_blocked_not_the_users_ask() -> None:
    # SWE-agent text-action runs send each observation as a user turn, which the importer marks
    # as a tool result: its traceback is the failure, never the user's goal or request.
    observation = (
        "Traceback (most recent call last):\n"
        '  File "reproduce.py", line 3, in <module>\n'
        "AttributeError: 'Dataset' object has no attribute 'PixelData'\n"
    )
    turns = [
        {"role": "user", "content": REQUEST},
        {"role": "assistant", "content": "python reproduce.py"},
        {"role": "user", "content": observation, "injected": "tool-result"},
        {"role": "assistant", "content": "The dataset has no pixel data yet."},
    ]
    summary, _ = summarize(turns)
    assert (
        "AttributeError: 'Dataset' object has no attribute 'PixelData'"
        in (summary.sections["Blocked"])
    )
    assert "Traceback" not in summary.sections["Pending User Asks"]
    assert "AttributeError" not in summary.sections["Constraints & Preferences"]


def test_a_success_fixes_only_the_open_failures_of_its_own_command() -> None:
    """Failures are looked up by the succeeding command's key (not by reading every open
    failure): a narrower run fixes the failures of its own targets, the whole suite the rest,
    and another command's failure stays blocked."""
    failing_lint = "Process exited with code 2\nOutput:\nsrc/a.py:3:1: E999 SyntaxError\n"
    turns = [
        {"role": "user", "content": REQUEST},
        *shell("c1", "python -m pytest -q tests/test_signup.py", FAILING_RUN),
        *shell("c2", "python -m pytest -q tests/test_login.py", FAILING_RUN),
        *shell("c3", "ruff check src", failing_lint),
        *shell("c4", "python -m pytest -q tests/test_signup.py", NARROW_PASS),
        *shell("c5", "python -m pytest -q", PASSING_RUN),
    ]
    summary, _ = summarize(turns)
    actions = summary.sections["Completed Actions"]
    # The four runs are one grouped line; both failures are fixed, and the last run fixed the
    # login failure, which the narrower signup run had left open.
    assert "2 failed (2 of them fixed)" in actions
    assert "last -> exit 0" in actions and "fixed the failure of action 2" in actions
    blocked = summary.sections["Blocked"]
    assert blocked.startswith("- `ruff check src` failed (exit 2)") and "pytest" not in blocked
