"""Probe mining on hand-written sessions whose facts are known, and recall when facts go missing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_files as all_corpus_files

from compaction.lab.probes import CATEGORIES, Fact, mine_facts, normalise, recall
from compaction.summary import SUMMARY_PREFIX


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def asst(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": text, "tool_calls": list(calls)}


def tool(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


PYTEST_OUTPUT = """============ test session starts ============
collected 3 items

tests/test_auth.py ..F
E   sqlite3.IntegrityError: UNIQUE constraint failed: users.email
FAILED tests/test_auth.py::test_signup - sqlite3.IntegrityError: UNIQUE constraint failed
=========== 1 failed, 2 passed in 0.31s ===========
"""


def session() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent. You must always be careful."},
        {
            "role": "user",
            "content": "Fix the signup bug in issue #42 "
            "(see https://github.com/acme/app/issues/42). Never modify the migrations folder.\n"
            "Use pytest only, and prefer small commits.",
        },
        asst(call("c1", "terminal", command="pytest tests/test_auth.py -q\necho done")),
        tool("c1", PYTEST_OUTPUT),
        asst(call("c2", "read_file", path="app/models.py")),
        tool("c2", "class User: ...  # pinned to sqlalchemy 2.0.29"),
        asst(
            call("c3", "str_replace_editor", command="str_replace", path="/repo/app/models.py"),
            call("c4", "str_replace_editor", command="view", path="/repo/app/views.py"),
        ),
        tool("c3", "edited"),
        tool("c4", "viewed"),
        asst(call("c5", "Write", file_path="app/emails.py", content="x = 1\n")),
        tool("c5", "ok"),
        asst(
            call(
                "c6",
                "exec_command",
                cmd=["bash", "-lc", "git log --oneline -1 > notes/head.txt"],
            )
        ),
        tool("c6", "Process exited with code 2"),
        asst(call("c7", "apply_patch", input="*** Begin Patch\n*** Update File: app/db.py\n")),
        tool("c7", "Done"),
        {"role": "assistant", "content": "Fixed in commit 3f9a2c1; server on localhost:8080."},
        {
            "role": "user",
            "content": "Thanks.\nNow make sure the email index is case-insensitive, "
            "and don't break the v2.3.1 API.\n"
            "<system-reminder>You must never mention this reminder.</system-reminder>",
        },
    ]


def by_category(facts: list[Fact]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {name: [] for name in CATEGORIES}
    for fact in facts:
        grouped[fact.category].append(fact.text)
    return grouped


def test_each_category_is_mined_exactly() -> None:
    facts = by_category(mine_facts(session()))
    assert facts["latest_request"] == [
        "Now make sure the email index is case-insensitive, and don't break the v2.3.1 API."
    ]
    assert facts["constraints"] == [
        "Now make sure the email index is case-insensitive, and don't break the v2.3.1 API.",
        "Use pytest only, and prefer small commits.",
        "Never modify the migrations folder.",
    ]
    # Written or edited only: the view and the read are not; newest first.
    assert facts["files"] == ["app/db.py", "notes/head.txt", "app/emails.py", "/repo/app/models.py"]
    assert facts["errors"] == [
        "Process exited with code 2",
        "FAILED tests/test_auth.py::test_signup - sqlite3.IntegrityError: UNIQUE constraint failed",
        # pytest's "E   " explanation line, mined without its prefix
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
    ]
    assert facts["commands"] == [
        "git log --oneline -1 > notes/head.txt",
        "pytest tests/test_auth.py -q",
    ]
    assert facts["identifiers"] == [
        "v2.3.1",
        ":8080",
        "3f9a2c1",
        "2.0.29",
        "https://github.com/acme/app/issues/42",
        "#42",
    ]


def test_source_indices_point_at_the_message() -> None:
    facts = mine_facts(session())
    assert {f.text: f.source_index for f in facts if f.category == "files"} == {
        "app/db.py": 13,
        "notes/head.txt": 11,
        "app/emails.py": 9,
        "/repo/app/models.py": 6,
    }


def test_exception_lines_and_long_lines_are_cut_like_phase_one() -> None:
    long_error = "ValueError: " + "x " * 200
    messages = [
        {"role": "user", "content": "go"},
        asst(call("a", "bash", command="python run.py")),
        tool(
            "a", f"Traceback (most recent call last):\n  File 'run.py'\n{long_error}\nexit code 0"
        ),
    ]
    errors = [f.text for f in mine_facts(messages) if f.category == "errors"]
    assert errors == [("ValueError: " + "x " * 200)[:160].rstrip()]
    assert len(errors[0]) <= 160


def test_error_lines_in_json_wrapped_outputs() -> None:
    output = json.dumps({"output": 'ok\nError: port already in use "quoted"', "exit_code": 1})
    messages = [
        {"role": "user", "content": "go"},
        asst(call("a", "terminal", command="serve")),
        tool("a", output),
    ]
    errors = [f.text for f in mine_facts(messages) if f.category == "errors"]
    assert errors == ['Error: port already in use "quoted"']
    assert recall(mine_facts(messages), messages).lost == []


def test_summaries_and_reminders_are_not_user_requests() -> None:
    messages = [
        {"role": "user", "content": "You must use tabs."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": SUMMARY_PREFIX + "\n## Active Task\nNever do X."},
    ]
    facts = by_category(mine_facts(messages))
    assert facts["latest_request"] == ["You must use tabs."]
    assert facts["constraints"] == ["You must use tabs."]


def test_mining_is_deterministic_capped_and_newest_first() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for n in range(80):
        messages.append(asst(call(f"c{n}", "Bash", command=f"make target{n}")))
        messages.append(tool(f"c{n}", "done"))
    first = mine_facts(messages)
    assert first == mine_facts(messages)
    commands = [f.text for f in first if f.category == "commands"]
    assert len(commands) == 50
    assert commands[0] == "make target79" and commands[-1] == "make target30"


def test_input_is_not_mutated() -> None:
    messages = session()
    before = copy.deepcopy(messages)
    mine_facts(messages)
    recall(mine_facts(messages), messages)
    assert messages == before


def test_recall_of_the_original_is_complete() -> None:
    messages = session()
    result = recall(mine_facts(messages), messages)
    assert result.lost == []
    assert result.ratio == 1.0
    assert all(c.found == c.total for c in result.categories.values())


def test_recall_reports_what_was_lost_per_category() -> None:
    messages = session()
    facts = mine_facts(messages)
    compacted = [messages[0], *messages[11:]]  # drop the early turns
    result = recall(facts, compacted)
    lost = {(f.category, f.text) for f in result.lost}
    assert ("errors", facts_text(facts, "errors")[1]) in lost  # the pytest failure
    assert ("constraints", "Never modify the migrations folder.") in lost
    assert ("files", "/repo/app/models.py") in lost
    assert ("files", "app/db.py") not in lost
    files = result.categories["files"]
    assert (files.found, files.total) == (2, 4)
    assert result.categories["latest_request"].ratio == 1.0
    assert result.found + len(result.lost) == result.total == len(facts)
    data = result.to_dict()
    assert data["categories"]["files"] == {"found": 2, "total": 4, "ratio": 0.5}


def test_recall_matches_case_and_whitespace_insensitively_in_arguments() -> None:
    facts = [
        Fact("errors", "ValueError:   Bad   input", 0),
        Fact("commands", 'grep "needle" src', 0),
    ]
    compacted = [
        {"role": "user", "content": "Earlier: VALUEERROR: bad\ninput"},
        asst(call("x", "bash", command='grep "needle" src')),  # quotes escaped in the raw JSON
    ]
    result = recall(facts, compacted)
    assert result.lost == []
    # A fact never matches across two messages.
    split = [{"role": "user", "content": "ValueError:"}, {"role": "user", "content": "bad input"}]
    assert recall(facts[:1], split).lost == facts[:1]


def test_normalise() -> None:
    assert normalise("  A\tB\n\nc ") == "a b c"
    # tau-bench users type "don’t": the fact and the text it came from must still match.
    assert normalise("I don’t have “it”") == normalise('I don\'t have "it"')
    user_turn = {"role": "user", "content": "I don’t have the reservation ID, never cancel it."}
    assert recall(mine_facts([user_turn]), [user_turn]).lost == []


def facts_text(facts: list[Fact], category: str) -> list[str]:
    return [f.text for f in facts if f.category == category]


def test_mines_5000_messages_fast() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for n in range(1250):
        messages.append(
            {"role": "user", "content": f"Please fix #{n}; you must keep API v1.{n}.0."}
        )
        messages.append(asst(call(f"c{n}", "terminal", command=f"pytest tests/test_{n}.py")))
        messages.append(tool(f"c{n}", "ok\n" * 300 + f"FAILED test_{n} - KeyError: 'k{n}'\n"))
        messages.append(asst(call(f"w{n}", "write_file", path=f"src/m{n}.py", content="x\n" * 50)))
    # Speed is measured in benchmarks, not asserted here; this checks the result at scale.
    facts = mine_facts(messages)
    assert {f.category for f in facts} == set(CATEGORIES)
    assert recall(facts, messages[-400:]).total == len(facts)


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def corpus_files() -> list[Path]:
    return all_corpus_files()


@pytest.mark.skipif(not corpus_files(), reason=f"the shared corpus is absent ({CORPUS})")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name[:40])
def test_every_fact_mined_from_a_real_transcript_is_found_in_it(path: Path) -> None:
    from compaction.formats import load_conversations

    for position, conversation in enumerate(load_conversations(path)):
        messages = conversation.messages
        facts = mine_facts(messages)
        assert facts and facts[0].category == "latest_request", position
        result = recall(facts, messages)
        assert result.lost == [], (position, [f.text for f in result.lost])
