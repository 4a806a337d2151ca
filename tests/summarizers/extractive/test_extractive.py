"""The extractive summariser: each section on a conversation whose content is known, the
iterative merge, focus, the token budget, and the real corpus (recall against head+tail)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_files as all_corpus_files
from corpus_paths import corpus_path

from compaction.compactor import Compactor
from compaction.formats import load_conversations
from compaction.lab.probes import mine_facts, recall
from compaction.lab.strategies import config_for_target, head_tail
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.summarizers.base import SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer, as_stored
from compaction.summarizers.extractive.budget import ACTIVE_TASK_CUT, ACTIVE_TASK_MAX_SHARE
from compaction.summary import SECTION_NAMES, Summary, parse_summary
from compaction.text.redact import redact
from compaction.tokens import make_counter

COUNTER = make_counter("tiktoken", "gpt-4o")
CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
LATEST = "Please also bump the version to 2.1.0 and open the PR."


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def assistant(text: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def result(call_id: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": output}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def login_session() -> list[dict[str, Any]]:
    """A coding session where every section has known content."""
    return [
        user(
            "Fix the failing login test in app/auth.py. Never edit tests/fixtures.json. "
            "Prefer pytest over unittest."
        ),
        assistant(
            "Let me run the tests first.",
            call("c1", "terminal", command="cd /repo && pytest tests/test_auth.py"),
        ),
        result(
            "c1",
            "FAILED tests/test_auth.py::test_login - AssertionError: assert 401 == 200\n"
            "1 failed in 0.12s\nexit code 1",
        ),
        assistant(None, call("c2", "terminal", command="git checkout -b fix/login")),
        result("c2", "Switched to a new branch 'fix/login'\nexit code 0"),
        assistant(None, call("c3", "read_file", path="app/auth.py")),
        result("c3", "def verify_token(token):\n    return token == SECRET\n" * 20),
        assistant(
            "The cause is a plain comparison. I'll use hmac.compare_digest instead of == "
            "because it is constant-time.",
            call("c4", "patch", path="app/auth.py", old="==", new="compare_digest"),
        ),
        result("c4", "The file app/auth.py has been updated successfully."),
        assistant(None, call("c5", "terminal", command="pytest tests/test_auth.py")),
        result("c5", "...\n3 passed in 0.10s\nexit code 0"),
        assistant(None, call("c6", "terminal", command="mypy app")),
        result(
            "c6",
            "app/auth.py:10: error: Incompatible types in assignment [assignment]\n"
            "Found 1 error in 1 file\nexit code 1",
        ),
        assistant(
            None,
            call(
                "c7",
                "TodoWrite",
                todos=[
                    {"content": "Fix login", "status": "completed"},
                    {"content": "Make mypy clean", "status": "pending"},
                ],
            ),
        ),
        result("c7", "Todos have been modified successfully."),
        user("Does this also affect the signup flow? See https://github.com/acme/app/issues/42"),
        assistant(
            "No, signup goes through app/signup.py and never calls verify_token. "
            "The dev server on localhost:5000 shows the same, see PR #17."
        ),
        assistant("Next I will update the changelog in CHANGELOG.md."),
        user("Also, are we still on Flask 3.0.2?"),
    ]


def request_for(
    turns: list[dict[str, Any]],
    budget: int = 2_000,
    previous: str | None = None,
    focus: str | None = None,
    latest: str = LATEST,
    first: str | None = None,
) -> SummaryRequest:
    serialized = serialize_turns(turns)
    return SummaryRequest(
        turns=turns,
        serialized=serialized,
        budget_tokens=budget,
        prompt=build_prompt(serialized, budget, previous, focus),
        previous_summary=previous,
        focus=focus,
        latest_user_request=latest,
        raw_turns=turns,
        first_user_request=first,
    )


def summarize(request: SummaryRequest) -> Summary:
    text = ExtractiveSummarizer().summarize(request)
    parsed = parse_summary(text)
    assert parsed.found_headings == 13
    return parsed


def test_every_section_has_its_known_content() -> None:
    turns = login_session()
    s = summarize(request_for(turns)).sections
    assert s["Active Task"] == LATEST
    assert s["Goal"] == "Fix the failing login test in app/auth.py. Never edit tests/fixtures.json."
    assert "- Never edit tests/fixtures.json." in s["Constraints & Preferences"]
    assert "- Prefer pytest over unittest." in s["Constraints & Preferences"]

    actions = s["Completed Actions"].splitlines()
    assert [line.split(".", 1)[0] for line in actions] == [str(n) for n in range(1, 8)]
    assert "ran `cd /repo && pytest tests/test_auth.py` -> exit 1" in actions[0]
    assert "AssertionError: assert 401 == 200" in actions[0]
    assert "read app/auth.py" in actions[2]
    assert "replace in app/auth.py" in actions[3]
    assert "ran `pytest tests/test_auth.py` -> exit 0" in actions[4]
    assert "plan updated: 1 of 2 steps done" in actions[6]

    state = s["Active State"]
    assert "- Working directory: /repo" in state
    assert "- Branch: fix/login" in state
    assert "- Files modified/created: app/auth.py" in state
    assert "- Last test: `pytest tests/test_auth.py` -> exit 0, 3 passed in 0.10s" in state

    assert s["In Progress"] == "- Next I will update the changelog in CHANGELOG.md."
    blocked = s["Blocked"]
    assert blocked.startswith("- `mypy app` failed (exit 1), not fixed since:")
    assert "`app/auth.py:10: error: Incompatible types in assignment [assignment]`" in blocked
    assert "pytest" not in blocked  # the failing test run was followed by a passing one
    assert (
        "I'll use hmac.compare_digest instead of == because it is constant-time."
        in (s["Key Decisions"])
    )
    resolved = s["Resolved Questions"]
    assert resolved.startswith("- Does this also affect the signup flow?")
    assert "No, signup goes through app/signup.py and never calls verify_token." in resolved
    assert s["Pending User Asks"] == "- Also, are we still on Flask 3.0.2?"
    files = s["Relevant Files"]
    assert "- app/auth.py — mentioned, read, edited" in files
    assert "- tests/fixtures.json — mentioned" in files
    assert "- app/signup.py — mentioned" in files
    assert "- CHANGELOG.md — mentioned" in files
    assert s["Remaining Work"] == "- Make mypy clean (pending)"
    critical = s["Critical Context"]
    assert "https://github.com/acme/app/issues/42" in critical
    assert "#17" in critical and ":5000" in critical and "3.0.2" in critical


def test_deterministic_and_streams_once() -> None:
    request = request_for(login_session())
    tokens: list[str] = []
    first = ExtractiveSummarizer().summarize(request, on_token=tokens.append)
    assert tokens == [first]
    assert ExtractiveSummarizer().summarize(request) == first


def test_empty_sections_say_none_and_goal_comes_from_the_head() -> None:
    turns = [assistant("Done."), user("thanks")]
    s = summarize(request_for(turns, first="Write a haiku about rust. Keep it short.")).sections
    assert s["Goal"] == "Write a haiku about rust. Keep it short."
    for name in ("Completed Actions", "Blocked", "Relevant Files", "Critical Context"):
        assert s[name] == "None."


def test_iterative_update_continues_numbering_and_moves_items() -> None:
    turns = login_session()
    summarizer = ExtractiveSummarizer()
    earlier = summarizer.summarize(request_for(turns))
    new_turns = [
        assistant(
            "Flask 3.0.2 is what requirements.txt pins.",
            call("d1", "terminal", command="mypy app"),
        ),
        result("d1", "Success: no issues found in 4 source files\nexit code 0"),
        assistant(None, call("d2", "terminal", command="git checkout -b release/2.1")),
        result("d2", "Switched to a new branch 'release/2.1'\nexit code 0"),
    ]
    text = summarizer.summarize(request_for(new_turns, previous=earlier, first=turns[0]["content"]))
    s = parse_summary(text).sections
    assert summarizer.last_details["iterative"] is True
    numbers = [int(line.split(".", 1)[0]) for line in s["Completed Actions"].splitlines()]
    assert numbers == list(range(1, 11))  # 7 earlier, the finished In Progress item, 2 new
    lines = s["Completed Actions"].splitlines()
    assert lines[7] == "8. (finished) Next I will update the changelog in CHANGELOG.md."
    assert lines[8].startswith("9. [terminal] ran `mypy app` -> exit 0")
    # The Flask question was answered in the new turns; the mypy blocker was resolved.
    assert s["Pending User Asks"] == "None."
    assert "Also, are we still on Flask 3.0.2? — Flask 3.0.2 is what" in s["Resolved Questions"]
    assert "Does this also affect the signup flow?" in s["Resolved Questions"]
    assert s["Blocked"] == "None."
    assert "- Branch: release/2.1" in s["Active State"]
    assert "- Working directory: /repo" in s["Active State"]  # kept: not shown again
    assert "app/auth.py — mentioned, read, edited" in s["Relevant Files"]
    assert "Never edit tests/fixtures.json." in s["Constraints & Preferences"]
    assert "hmac.compare_digest" in s["Key Decisions"]
    assert "https://github.com/acme/app/issues/42" in s["Critical Context"]
    assert summarizer.last_details["merged"] == {
        "finished_in_progress": 1,
        "answered": 1,
        "resolved_blockers": 1,
    }


def test_iterative_update_folds_earlier_identifiers_into_one_line_per_kind() -> None:
    # The first summary saw two commits; the new turns show a third and one of the first two.
    first_turns = [
        user("Find the commit that broke the build."),
        assistant(None, call("g1", "terminal", command="git log --oneline -2")),
        result("g1", "3e6b7f8 Share the test database\n4c1e9a7 Merge branch 'login'"),
    ]
    summarizer = ExtractiveSummarizer()
    earlier = summarizer.summarize(request_for(first_turns))
    # Each hash says what it is: the commit subject beside it in the log.
    assert (
        "Hashes: 3e6b7f8 (Share the test database), 4c1e9a7 (Merge branch 'login')"
        in parse_summary(earlier).sections["Critical Context"]
    )
    new_turns = [
        assistant(None, call("g2", "terminal", command="git show 4c1e9a7 a41f0c2")),
        result("g2", "commit a41f0c2 Revert the fixture scope\ncommit 4c1e9a7 Merge branch"),
    ]
    text = summarizer.summarize(request_for(new_turns, previous=earlier, first="Find it."))
    critical = parse_summary(text).sections["Critical Context"].splitlines()
    hashes = [line for line in critical if line.startswith("- Hashes: ")]
    assert len(hashes) == 1, critical  # one line, not the old line beside the new one
    values = [v.split(" (", 1)[0] for v in hashes[0].removeprefix("- Hashes: ").split(", ")]
    assert sorted(values) == ["3e6b7f8", "4c1e9a7", "a41f0c2"]
    assert values[0] == "3e6b7f8"  # the earlier values first: the line reads in time order


def big_session(
    modules: tuple[str, ...] = ("billing", "auth"), rounds: int = 60
) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        user("Refactor the services. Always keep the public API stable.")
    ]
    for number in range(rounds):
        module = modules[number % len(modules)]
        path = f"src/{module}/handler_{number}.py"
        turns.append(
            assistant(
                f"Looking at the {module} handler {number}.",
                call(f"r{number}", "read_file", path=path),
                call(f"t{number}", "terminal", command=f"pytest tests/{module}/test_{number}.py"),
            )
        )
        turns.append(result(f"r{number}", f"class Handler{number}:\n    pass\n" * 30))
        turns.append(result(f"t{number}", f"{number} passed in 0.2s\nexit code 0"))
    return turns


def test_focus_gives_the_topic_most_of_the_budget() -> None:
    turns = big_session()
    plain = ExtractiveSummarizer().summarize(request_for(turns, budget=900))
    focused = ExtractiveSummarizer().summarize(request_for(turns, budget=900, focus="billing"))
    assert plain != focused
    assert focused.count("billing") > 2 * focused.count("auth")
    assert focused.count("billing") > plain.count("billing")
    assert COUNTER.count_text(focused) <= 900


@pytest.mark.parametrize("budget", [100, 150, 300, 600, 1_200, 4_000])
def test_budget_is_respected(budget: int) -> None:
    summarizer = ExtractiveSummarizer()
    text = summarizer.summarize(request_for(big_session(rounds=150), budget=budget))
    assert COUNTER.count_text(text) <= budget
    parsed = parse_summary(text)
    assert parsed.found_headings == 13 and parsed.sections["Active Task"] == LATEST
    assert summarizer.last_details["over_budget"] is False
    if budget >= 1_200:
        assert summarizer.last_details["dropped"]["Completed Actions"] > 0  # trimmed, not cut
        # The note says what the left-out actions were, so the gaps in the numbering read.
        assert re.search(
            r"more actions not listed: \d+ (read_file|terminal)",
            parsed.sections["Completed Actions"],
        )


def test_an_oversized_active_task_is_cut_with_a_marker() -> None:
    latest = "Rewrite the parser so that it streams. " * 400
    summarizer = ExtractiveSummarizer()
    text = summarizer.summarize(request_for(login_session(), budget=300, latest=latest))
    assert COUNTER.count_text(text) <= 300
    task = parse_summary(text).sections["Active Task"]
    assert task.endswith(ACTIVE_TASK_CUT) and latest.startswith(task[: -len(ACTIVE_TASK_CUT)])


def test_a_long_task_prompt_leaves_room_for_what_the_middle_did() -> None:
    # SWE-agent's first (and latest) user message is a 4,000-character task prompt; copied whole,
    # it left the Completed Actions two lines. It is cut to its share instead: the anchor keeps
    # the message itself verbatim in the conversation.
    latest = "Solve the issue described below, one tool call per response. " * 60
    budget = 1_000
    summarizer = ExtractiveSummarizer()
    parsed = parse_summary(
        summarizer.summarize(request_for(big_session(rounds=4), budget=budget, latest=latest))
    )
    task = parsed.sections["Active Task"]
    assert task.endswith(ACTIVE_TASK_CUT) and latest.startswith(task[: -len(ACTIVE_TASK_CUT)])
    assert COUNTER.count_text(task) <= budget * ACTIVE_TASK_MAX_SHARE
    assert "(+" not in parsed.sections["Completed Actions"]  # every action listed
    assert summarizer.last_details["active_task_truncated"] is True
    # A request of a few sentences is copied whole even when the budget is small.
    short = parse_summary(ExtractiveSummarizer().summarize(request_for(login_session(), 250)))
    assert short.sections["Active Task"] == LATEST
    assert summarizer.last_details["active_task_truncated"] is True


def test_a_budget_below_the_headings_alone_is_reported() -> None:
    summarizer = ExtractiveSummarizer()
    text = summarizer.summarize(request_for(login_session(), budget=60))
    assert parse_summary(text).found_headings == 13
    assert summarizer.last_details["over_budget"] is True


def test_secrets_are_redacted() -> None:
    turns = [
        user("Deploy it. The key is sk-abcdefghijklmnopqrstuvwxyz123456."),
        assistant(
            None,
            call(
                "s1",
                "terminal",
                command="curl -H 'Authorization: Bearer abc123def456ghi' https://api.example.com",
            ),
        ),
        result("s1", "ok\nexit code 0"),
    ]
    text = ExtractiveSummarizer().summarize(request_for(turns, latest="use password=hunter2 now"))
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text
    assert "abc123def456ghi" not in text and "hunter2" not in text
    assert "[REDACTED]" in text


def test_the_input_is_not_mutated() -> None:
    turns = login_session()
    before = json.dumps(turns, sort_keys=True)
    ExtractiveSummarizer().summarize(request_for(turns, focus="auth"))
    assert json.dumps(turns, sort_keys=True) == before


def test_five_thousand_messages_fit_the_budget() -> None:
    # Its speed is measured by benchmarks/bench_compress.py, never asserted in the suite.
    turns = big_session(rounds=1_700)  # 5,101 messages
    request = request_for(turns, budget=8_000)
    text = ExtractiveSummarizer().summarize(request)
    assert COUNTER.count_text(text) <= 8_000


# -- the real corpus -----------------------------------------------------------------------------

CORPUS_FILES = [p.name for p in all_corpus_files()]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_summaries_and_recall_against_head_tail(name: str) -> None:
    conversations = load_conversations(corpus_path(name))
    for position, conversation in enumerate(conversations):
        messages = conversation.messages
        where = f"{name} #{position}"
        target = COUNTER.count_messages(messages) // 3
        config = config_for_target(target)
        first = Compactor(config).compress(messages, force=True, recorded=conversation.record())
        if first.skipped:
            continue
        if "summarize" not in [phase.name for phase in first.phases]:
            # Phase 1 alone made the rest fit the tail (small sessions): no summary, and the
            # pruned conversation must not be larger than the input.
            assert first.summary is None and first.tokens_after <= first.tokens_before, where
            continue
        assert first.fallback_used is None, where
        details = first.phase("summarize").details
        if details.get("discarded"):
            # A short middle: the summary costs more than it replaces, so the pruned conversation
            # is the result — it must never be larger than the input.
            assert first.summary is None and first.tokens_after <= first.tokens_before, where
        summary = first.summary or parse_summary(details["summary_text"])
        if position < 3:  # deterministic (twice is enough on a few of tau-bench's 200 runs)
            again = Compactor(config).compress(messages, force=True, recorded=conversation.record())
            text = again.phase("summarize").details["summary_text"]
            assert summary.text == parse_summary(text).text, where
        assert list(summary.sections) == list(SECTION_NAMES)
        budget = first.phase("summarize").details["budget_tokens"]
        assert COUNTER.count_text(summary.text) <= budget, where
        latest = as_stored(redact(first.phase("summarize").details["latest_user_request"]))
        task = summary.sections["Active Task"]
        if task.endswith(ACTIVE_TASK_CUT):  # a long task prompt, cut to its share of the budget
            assert latest.startswith(task[: -len(ACTIVE_TASK_CUT)].rstrip()), where
        else:
            assert latest == task, where
        if first.fit is not None and first.fit.cuts:
            # Fit cut the protected head or tail to make the window (issue 21): what it cut
            # away is lost to every strategy that must fit, and head-tail keeps the raw ends.
            continue
        facts = mine_facts(messages)
        ours = recall(facts, first.messages).ratio
        baseline = recall(facts, head_tail(messages, target, COUNTER)).ratio
        assert ours >= baseline, f"{where}: recall {ours:.3f} < head-tail {baseline:.3f}"


def test_a_reused_call_id_keeps_each_calls_own_result_and_error() -> None:
    # tau-bench reuses ids: keyed by id alone, the failed update took the later lookup's result
    # and its error vanished from the summary.
    turns = [
        user("Upgrade reservation M20IZO to business and charge my card ending in 7334."),
        assistant(None, call("dup", "update_reservation_flights", reservation_id="M20IZO")),
        result("dup", "Error: payment method not found"),
        assistant(None, call("dup", "get_user_details", user_id="aarav_ahmed_6699")),
        result("dup", json.dumps({"user_id": "aarav_ahmed_6699", "payment_methods": {}})),
    ]
    summary = parse_summary(ExtractiveSummarizer().summarize(request_for(turns)))
    actions = summary.sections["Completed Actions"]
    update = next(line for line in actions.splitlines() if "update_reservation_flights" in line)
    assert "Error: payment method not found" in update
    assert "Error: payment method not found" in summary.sections["Blocked"]


def test_pruned_tail_outputs_give_identifiers_but_no_actions() -> None:
    turns = login_session()
    request = request_for(turns)
    request.pruned_tail_outputs = ["deployed to https://staging.example.dev/ at build 4f3c2a1d9e"]
    summary = parse_summary(ExtractiveSummarizer().summarize(request))
    assert "https://staging.example.dev/" in summary.sections["Critical Context"]
    plain = parse_summary(ExtractiveSummarizer().summarize(request_for(turns)))
    assert summary.sections["Completed Actions"] == plain.sections["Completed Actions"]


def test_a_pytest_run_with_failures_is_a_failed_action_with_its_failed_lines() -> None:
    # pytest -q prints no "Error:" line and no exit code: its FAILED lines and the "2 failed"
    # verdict are the evidence. Read as "no error seen" before, the failures vanished.
    output = (
        ".F..F.                                   [100%]\n"
        "=================================== FAILURES ===================================\n"
        ">       assert paginate(items, 3) == ([40, 41, 42, 43, 44], 3)\n"
        "E       assert ([], 3) == ([40, 41, 42, 43, 44], 3)\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_pagination.py::test_first_page - assert ([20, 21, 22, 23, 2...\n"
        "FAILED tests/test_pagination.py::test_last_page - assert ([], 3) == ([40, 41], 3)\n"
        "========================= 2 failed, 4 passed in 0.05s =========================="
    )
    turns = [
        user("Fix the pagination helper and run its tests."),
        assistant(None, call("p1", "Bash", command="python -m pytest tests/test_pagination.py -q")),
        result("p1", output),
    ]
    summary = parse_summary(ExtractiveSummarizer().summarize(request_for(turns)))
    action = summary.sections["Completed Actions"]
    assert "-> failed" in action and "no error seen" not in action
    assert "FAILED tests/test_pagination.py::test_last_page" in action
    assert "FAILED tests/test_pagination.py::test_last_page" in summary.sections["Blocked"]


def test_a_bulleted_long_rule_is_kept_whole_with_one_bullet() -> None:
    rule = (
        "never modify the migrations in migrations/ — 0001 and 0002 are already applied in "
        "production, so any schema change would need a new migration and a deploy, and that's "
        "not what this is."
    )
    turns = [
        user(f"Fix the tests. Ground rules:\n- {rule}\n- use `pytest -x` so we stop early."),
        assistant(None, call("t1", "terminal", command="pytest -x")),
        result("t1", "1 failed in 0.2s\nexit code 1"),
    ]
    constraints = summarize(request_for(turns)).sections["Constraints & Preferences"]
    assert f"- {rule}" in constraints.splitlines()  # whole, and "- - " nowhere
    assert "- - " not in constraints
    # The probe's fact is the rule's prefix, so a whole rule keeps it.
    facts = [f for f in mine_facts(turns) if f.category == "constraints"]
    assert facts and all(fact.text in constraints for fact in facts)


def test_the_last_test_verdict_of_a_json_wrapped_output_is_its_own_line() -> None:
    log = "\n".join(f"tests/test_cli.py::test_{n} PASSED [{n}%]" for n in range(400))
    output = json.dumps({"output": log + "\n===== 216 passed in 6.91s =====", "exit_code": 0})
    turns = [
        user("Run the suite."),
        assistant(None, call("t1", "terminal", command="python -m pytest -x -vv")),
        result("t1", output),
    ]
    state = summarize(request_for(turns)).sections["Active State"]
    assert "- Last test: `python -m pytest -x -vv` -> exit 0, 216 passed in 6.91s" in state
    assert "\\n" not in state and "exit_code" not in state
