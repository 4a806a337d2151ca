"""The extractive summariser's memory: within a CompactionCache, a second run over the same turns
reads every message's facts from the cache (no new misses) and gives the same summary, whatever
ran in between (the cache itself is tested in tests/engine/test_cache.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_extractive import (
    assistant,
    big_session,
    call,
    login_session,
    request_for,
    result,
    summarize,
    user,
)

from compaction.cache import CompactionCache, use_cache
from compaction.summarizers.extractive import ExtractiveSummarizer, facts
from compaction.summarizers.extractive.items import Item
from compaction.tokens import make_counter

CACHE = CompactionCache()
#: The module (the package's `scan` is the function of that name).
scan = sys.modules["compaction.summarizers.extractive.scan"]


@pytest.fixture(autouse=True)
def _current_cache() -> Any:
    """Every test here runs with CACHE current, as a Compactor's run has its own."""
    use_cache(CACHE)
    yield
    use_cache(None)


def totals() -> tuple[int, int]:
    info = CACHE.memo.info()
    return info["hits"], info["misses"]


def cache_info() -> dict[str, int]:
    return CACHE.memo.info()


def details_without_timing(summarizer: ExtractiveSummarizer) -> dict[str, Any]:
    return {k: v for k, v in summarizer.last_details.items() if k != "duration_s"}


def test_second_run_hits_the_cache_and_gives_the_same_summary() -> None:
    turns = big_session(rounds=200) + login_session()
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(request_for(turns, budget=3_000))
    first_details = details_without_timing(summarizer)
    hits, misses = totals()
    second = summarizer.summarize(request_for(turns, budget=3_000))
    assert second == first
    assert details_without_timing(summarizer) == first_details
    hits_after, misses_after = totals()
    assert misses_after == misses, cache_info()
    # every user, assistant text and tool call of the 600+ messages came from the cache
    assert hits_after - hits >= len(turns)


def test_other_budgets_reuse_the_facts() -> None:
    turns = big_session(rounds=120)
    summarizer = ExtractiveSummarizer()
    summarizer.summarize(request_for(turns, budget=4_000))
    _, misses = totals()
    small = summarizer.summarize(request_for(turns, budget=800))
    assert totals()[1] == misses
    assert summarizer.last_details["budget_tokens"] == 800
    assert summarizer.last_details["tokens"] <= 800
    assert small != summarizer.summarize(request_for(turns, budget=4_000))


def test_cached_and_cold_runs_agree_after_runs_that_rewrite_items() -> None:
    """Focus cuts item texts and the merge edits items in place: none of that may leak into
    the cached facts that the next run replays."""
    turns = [
        *big_session(rounds=80),
        user("Why does billing fail? Check src/billing/handler_3.py."),
        assistant(
            "Let me run it.",
            call("x1", "terminal", command="cd /repo && pytest tests/billing -x"),
        ),
        result("x1", "E   ValueError: bad amount\nFAILED tests/billing/test_3.py\nexit code 1"),
    ]
    CACHE.clear()
    cold = ExtractiveSummarizer().summarize(request_for(turns, budget=1_500))
    assert totals()[1] > len(turns) // 2  # the cold run computed the facts
    summarizer = ExtractiveSummarizer()
    focused = summarizer.summarize(request_for(turns, budget=1_500, focus="billing"))
    summarizer.summarize(request_for(turns, budget=1_500, previous=focused))
    warm = summarizer.summarize(request_for(turns, budget=1_500))
    assert warm == cold
    assert "`FAILED tests/billing/test_3.py`" in warm


#: Punctuation, digits and whitespace are where tiktoken's chunk boundaries are decided.
TRICKY = st.text(alphabet=" \n\t\r.,`'[]()-_/:#0123456789abcXYZé你", max_size=40)


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])  # o200k_base, cl100k_base
@settings(max_examples=150, deadline=None)
@given(
    number=st.integers(min_value=1, max_value=99_999),
    text=st.one_of(st.text(max_size=60), TRICKY),
)
def test_a_numbered_line_costs_its_number_plus_its_text(model: str, number: int, text: str) -> None:
    """The fitter counts `N.` and ` text` apart so renumbered actions keep their cached counts;
    with tiktoken that must equal the count of the whole line, for any text."""
    count = make_counter("tiktoken", model).count_text
    item = Item(text, 1.0, 1.0, number=number)
    assert count(f"{number}.") + count(f" {text}") == count(item.line())


def test_one_call_s_arguments_are_read_once_and_each_output_says_its_own() -> None:
    """What a call's arguments say is remembered apart from its output (an agent re-runs the
    same command): the second output still decides its own verb, failure and error lines."""
    write = json.dumps({"path": "src/new.py", "content": "def f(x):\n    return x\n"})
    created = facts.call_facts("write_file", write, "File created successfully", None)
    hits, _ = totals()
    rewritten = facts.call_facts("write_file", write, "Wrote 2 lines to src/new.py", None)
    assert totals()[0] == hits + 1  # the arguments' facts came from the cache
    assert created.touches == (("src/new.py", "created"),)
    assert rewritten.touches == (("src/new.py", "written"),)
    assert created.modified == rewritten.modified == ("src/new.py",)
    run = json.dumps({"command": "pytest -x tests/test_a.py"})
    failing = facts.call_facts("terminal", run, "E   ValueError: bad\nexit code 1", None)
    passing = facts.call_facts("terminal", run, "1 passed\nexit code 0", None)
    assert (failing.failed, passing.failed) == (True, False)
    assert failing.errors == ("ValueError: bad",) and passing.errors == ()
    assert failing.key == passing.key
    assert "tests/test_a.py" in failing.targets and failing.targets == passing.targets


def _defines(names: list[str]) -> str:
    return "".join(f"def {name}(x):\n    return x\n\n" for name in names)


def test_a_file_full_of_definitions_still_leaves_room_for_the_next_file() -> None:
    """A write is read for its definitions only while a file it goes to has room for them: a
    patch to a full file and a new one lists the new file's definitions, the full file keeps
    its first ones."""
    full = [f"first_{n}" for n in range(scan.MAX_DEFINITIONS_PER_FILE + 2)]
    patch = (
        "*** Begin Patch\n*** Update File: src/full.py\n@@\n+def later(x):\n+    return x\n"
        "*** Add File: src/fresh.py\n+def fresh_one(x):\n+    return x\n*** End Patch\n"
    )
    turns = [
        user("Write the helpers."),
        assistant(None, call("w1", "write_file", path="src/full.py", content=_defines(full))),
        result("w1", "File created successfully"),
        assistant(None, call("p1", "apply_patch", input=patch)),
        result("p1", "Success. Updated the following files"),
    ]
    files = summarize(request_for(turns, budget=3_000)).sections["Relevant Files"]
    kept = ", ".join(f"{name}(x)" for name in full[: scan.MAX_DEFINITIONS_PER_FILE])
    assert f"defines {kept}\n" in files + "\n"
    assert "later(x)" not in files
    assert "- src/fresh.py — created; defines fresh_one(x)" in files
