"""The structural measure's probe-type categories (lab/structural/): paths found missing, early
errors, definitions, skills and decisions, each mined from a hand-made transcript whose facts are
known exactly, kept or lost by contexts that hold or lack them, and split by where they sat."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction.lab.structural import (
    CATEGORIES,
    POSITIONS,
    StructuralFact,
    mine,
    position_of,
    structural_recall,
)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def assistant(text: str = "", *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def summary(text: str) -> dict[str, Any]:
    return {"role": "user", "content": "This session is being continued from a summary.\n" + text}


def facts_of(messages: list[dict[str, Any]], category: str) -> list[StructuralFact]:
    return [fact for fact in mine(messages) if fact.category == category]


def texts(messages: list[dict[str, Any]], category: str) -> list[str]:
    return [fact.text for fact in facts_of(messages, category)]


# -- missing_paths ----------------------------------------------------------------------------

MISSING = [
    {"role": "user", "content": "Find the config."},
    assistant("", call("m1", "Bash", command="cat src/settings.py")),
    result("m1", "cat: src/settings.py: No such file or directory\nExit code: 1"),
    assistant("", call("m2", "Read", file_path="/repo/config.toml")),
    result("m2", "Error: <tool_use_error>File does not exist.</tool_use_error>"),
    assistant("", call("m3", "shell_command", command="Get-Content C:\\Users\\me\\notes.txt")),
    result(
        "m3",
        "Exit code: 1\nGet-Content : Cannot find path 'C:\\Users\\me\\notes.txt' because it "
        "does not exist.",
    ),
    assistant("", call("m4", "execute_bash", command="cd /w && make")),
    result("m4", "/bin/sh: 1: cd: can't cd to /w/build/release\nmake: *** Error 2"),
    # Not missing paths: a program not found, and a file whose text says "not found".
    assistant("", call("m5", "execute_bash", command="ponyc test.pony")),
    result("m5", "bash: ponyc: command not found"),
    assistant("", call("m6", "Read", file_path="src/errors.py")),
    result("m6", "\n".join(f"{n}: line {n}" for n in range(9)) + "\n9: raise KeyError(key.json)"),
    assistant("", call("m7", "Read", file_path="docs/notes.md")),
    result("m7", "\n".join(f"line {n}" for n in range(8)) + "\nconfig.json not found, falls back"),
]


def test_missing_paths_are_the_paths_a_result_says_do_not_exist() -> None:
    assert texts(MISSING, "missing_paths") == [
        "/w/build/release",
        "C:\\Users\\me\\notes.txt",
        "/repo/config.toml",  # the result names no path: the call's one path
        "src/settings.py",
    ]


def test_a_missing_path_is_kept_where_the_context_says_it_is_missing() -> None:
    facts = facts_of(MISSING, "missing_paths")
    said = summary(
        "- `src/settings.py` does not exist\n- /repo/config.toml: missing\n"
        "- Files read: C:\\Users\\me\\notes.txt, /w/build/release"
    )
    kept = structural_recall(facts, [said])
    assert kept.found == {"missing_paths": 2}
    assert {fact.text for fact in kept.lost} == {"C:\\Users\\me\\notes.txt", "/w/build/release"}
    # The failed call kept with its result keeps the path its result did not name.
    assert structural_recall(facts, MISSING[3:5]).found == {"missing_paths": 1}
    # The result alone does not say which file.
    assert structural_recall(facts, MISSING[4:5]).found == {}
    assert structural_recall(facts, MISSING).ratio == 1.0


# -- early_errors -----------------------------------------------------------------------------


def failing(call_id: str, error: str) -> list[dict[str, Any]]:
    return [
        assistant("", call(call_id, "Bash", command="pytest -q")),
        result(call_id, f"Exit code: 1\n{error}"),
    ]


EARLY = [
    {"role": "user", "content": "Make the tests pass."},
    *failing("e1", "ImportError: cannot import name 'load'"),  # 1-2
    *failing("e2", "AssertionError: 3 != 4"),  # 3-4
    assistant("Looking."),  # 5
    {"role": "user", "content": "Go on."},  # 6
    *failing("e3", "TypeError: late failure"),  # 7-8
    assistant("Done."),  # 9
]


def test_early_errors_are_the_first_halfs_failures_oldest_first() -> None:
    assert texts(EARLY, "early_errors") == [
        "ImportError: cannot import name 'load'",
        "AssertionError: 3 != 4",
    ]
    assert texts(EARLY, "errors") == [
        "TypeError: late failure",
        "AssertionError: 3 != 4",
        "ImportError: cannot import name 'load'",
    ]
    kept = structural_recall(mine(EARLY), [summary("Fixed: AssertionError: 3 != 4")])
    assert kept.found == {"early_errors": 1, "errors": 1}


def test_an_error_line_is_keyed_without_a_logs_timestamp_prefix_and_rules() -> None:
    messages = [
        {"role": "user", "content": "Why is CI red?"},
        *failing(
            "c1",
            "test Run tests 2024-06-03T08:12:52.4425203Z ERROR tests/t.py::a - ValueError: x\n"
            "========== 1 failed, 7 passed in 0.94s ==========",
        ),
    ]
    errors = facts_of(messages, "errors")
    assert [(fact.text, fact.key) for fact in errors] == [
        (
            "========== 1 failed, 7 passed in 0.94s ==========",
            "1 failed, 7 passed in 0.94s",
        ),
        (
            "test Run tests 2024-06-03T08:12:52.4425203Z ERROR tests/t.py::a - ValueError: x",
            "error tests/t.py::a - valueerror: x",
        ),
    ]
    quoted = summary("- Last test: 1 failed, 7 passed in 0.94s\n- ERROR tests/t.py::a")
    assert structural_recall(errors, [quoted]).found == {"errors": 1}
    quoted = summary("- ERROR tests/t.py::a - ValueError: x (1 failed, 7 passed in 0.94s)")
    assert structural_recall(errors, [quoted]).found == {"errors": 2}


# -- definitions ------------------------------------------------------------------------------

MODULE = '''"""Loads the importer's settings from a TOML file."""

import tomllib


def load(
    path,
    strict=False,
):
    return tomllib.loads(path.read_text())


class Settings:
    pass
'''
PATCH = """*** Begin Patch
*** Add File: src/parse.rs
+// Parses a session file into canonical messages.
+pub fn parse(path: &Path) -> Result<Session> {
+    todo!()
+}
*** Update File: src/lib.rs
@@
+pub fn version() -> &'static str {
*** End Patch"""
DEFINED = [
    {"role": "user", "content": "Write the loader."},
    assistant("", call("d1", "Write", file_path="src/settings.py", content=MODULE)),
    result("d1", "File created"),
    assistant(
        "",
        call(
            "d2",
            "Edit",
            file_path="web/app.js",
            old_string="x",
            new_string="export async function fetchRuns(limit = 10) {\n  return [];\n}",
        ),
    ),
    result("d2", "ok"),
    assistant("", call("d3", "apply_patch", input=PATCH)),
    result("d3", "Done"),
]


def test_definitions_are_the_signatures_and_doc_lines_written() -> None:
    found = {(fact.text, fact.key) for fact in facts_of(DEFINED, "definitions")}
    assert found == {
        ("src/settings.py: def load(", "load(path, strict=false)"),
        ("src/settings.py: class Settings:", "class settings"),
        (
            "src/settings.py: Loads the importer's settings from a TOML file.",
            "loads the importer's settings from a toml file.",
        ),
        ("web/app.js: export async function fetchRuns(limit = 10) {", "fetchruns(limit = 10)"),
        ("src/parse.rs: pub fn parse(path: &Path) -> Result<Session> {", "parse(path: &path)"),
        (
            "src/parse.rs: Parses a session file into canonical messages.",
            "parses a session file into canonical messages.",
        ),
        ("src/lib.rs: pub fn version() -> &'static str {", "version()"),
    }


def test_a_definition_is_kept_by_its_signature_not_its_name() -> None:
    facts = facts_of(DEFINED, "definitions")
    named = structural_recall(facts, [summary("Wrote load, fetchRuns, parse and version.")])
    assert named.found == {}
    signed = structural_recall(
        facts,
        [summary("- src/settings.py: `load(path, strict=False)`; fetchRuns(limit = 10)")],
    )
    assert signed.found == {"definitions": 2}
    # A context that still holds the write keeps the multi-line signature as written.
    assert structural_recall(facts, DEFINED).ratio == 1.0


# -- skills -----------------------------------------------------------------------------------

SKILL_TEXT = (
    "Launching skill: apply-grant\n\nBase directory for this skill: "
    "/home/u/.claude/skills/apply-grant\n\nFirst run `bash "
    "~/.claude/skills/apply-grant/export-session.sh .` and read README.md."
)
SKILLS = [
    {"role": "user", "content": "Apply for the grant."},
    assistant("", call("s1", "Skill", skill="apply-grant")),
    result("s1", SKILL_TEXT),
    assistant("", call("s2", "Read", file_path=".agents/skills/preflight/SKILL.md")),
    result("s2", "---\nname: preflight\n---\nRun scripts/check.sh first."),
]


def test_skills_are_the_skills_loaded_and_the_files_under_their_folder() -> None:
    # Newest first, as every category: the SKILL.md read, then the skill's text, then the call.
    assert texts(SKILLS, "skills") == [
        ".agents/skills/preflight/SKILL.md",
        "~/.claude/skills/apply-grant/export-session.sh",
        "/home/u/.claude/skills/apply-grant",
        "apply-grant",
    ]
    kept = structural_recall(
        facts_of(SKILLS, "skills"),
        [summary("Skill apply-grant: run ~/.claude/skills/apply-grant/export-session.sh")],
    )
    assert kept.found == {"skills": 2}


# -- decisions --------------------------------------------------------------------------------

DECIDING = [
    {"role": "user", "content": "Store the runs."},
    assistant(
        "I'll use SQLite instead of Postgres because the tests run offline. Running them now.\n"
        "```python\n# we use x because y\n```\n"
        "- Used `Result<T, E>` instead of raising exceptions.\n"
        "It failed because the port was taken. I'll run the tests.\n"
        "Please let me know if you need more, so I can help."
    ),
]


def test_decisions_are_sentences_with_a_choice_and_its_reason() -> None:
    # Newest first; the commented code, the reason without a choice, the choice without a
    # reason and a request ("let me know… so I can") are not decisions.
    assert texts(DECIDING, "decisions") == [
        "Used `Result<T, E>` instead of raising exceptions.",
        "I'll use SQLite instead of Postgres because the tests run offline.",
    ]
    kept = structural_recall(
        facts_of(DECIDING, "decisions"),
        [
            summary(
                "## Key Decisions\n"
                "- I'll use SQLite instead of Postgres because the tests run offline."
            )
        ],
    )
    assert kept.found == {"decisions": 1}


# -- where the facts sat ----------------------------------------------------------------------


def test_positions_are_thirds_of_the_conversation() -> None:
    assert [position_of(index, 9) for index in range(9)] == [
        *["early"] * 3,
        *["middle"] * 3,
        *["late"] * 3,
    ]
    assert position_of(0, 1) == "early" and position_of(4, 5) == "late"


def test_recall_is_split_by_the_third_a_fact_came_from() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    for index in range(1, 9):
        messages.append(assistant(f"See https://example.com/page-{index} now."))
    facts = mine(messages)
    assert [(fact.source_index, fact.position) for fact in facts] == [
        (8, "late"),
        (7, "late"),
        (6, "late"),
        (5, "middle"),
        (4, "middle"),
        (3, "middle"),
        (2, "early"),
        (1, "early"),
    ]
    kept = structural_recall(facts, [messages[0], messages[1], *messages[6:]])
    assert kept.position_tally("early").to_dict() == {"found": 1, "total": 2}
    assert kept.position_tally("middle").to_dict() == {"found": 0, "total": 3}
    assert kept.position_tally("late").to_dict() == {"found": 3, "total": 3}
    assert kept.position_ratio("middle") == 0.0
    assert kept.position_ratio("early", "constraints") is None
    detail = kept.to_dict()
    assert detail["positions"] == {
        "early": {"found": 1, "total": 2},
        "middle": {"found": 0, "total": 3},
        "late": {"found": 3, "total": 3},
    }
    assert detail["categories"]["urls"]["positions"]["middle"] == {"found": 0, "total": 3}
    assert list(detail["categories"]) == list(CATEGORIES)
    assert [fact["position"] for fact in detail["lost"]] == ["middle"] * 3 + ["early"]


def test_every_lost_fact_says_where_it_sat() -> None:
    kept = structural_recall(mine(EARLY), [EARLY[0]])
    assert {fact.position for fact in kept.lost} <= set(POSITIONS)
    assert all(fact.to_dict()["position"] for fact in kept.lost)


def test_lost_where_kept_is_what_one_context_lost_and_the_other_kept() -> None:
    facts = mine(EARLY)
    ours = structural_recall(facts, [summary("TypeError: late failure")])
    theirs = structural_recall(facts, EARLY[:3])
    # The first error, in both of its categories.
    assert {(fact.category, fact.text) for fact in ours.lost_where_kept(theirs)} == {
        ("errors", "ImportError: cannot import name 'load'"),
        ("early_errors", "ImportError: cannot import name 'load'"),
    }
    assert theirs.lost_where_kept(ours) == [
        fact for fact in theirs.lost if fact.text == "TypeError: late failure"
    ]


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_is_reported_even_without_facts(category: str) -> None:
    detail = structural_recall([], []).to_dict()
    assert detail["categories"][category] == {
        "found": 0,
        "total": 0,
        "positions": {position: {"found": 0, "total": 0} for position in POSITIONS},
    }
