"""The provenance check reads a cited message with its tool group, and looks a claim up in the
message's own text first: a claim there needs no more; one only in the group's tool output is
found there; one in neither is flagged (summary/check.py)."""

from __future__ import annotations

import json
from typing import Any

from compaction.summary import Summary
from compaction.summary.check import SummaryScope, check_summary
from compaction.summary.items import SummaryItem

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the failing signup test."},
    {
        "role": "assistant",
        "content": "Running the tests.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -q"})},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "E   KeyError: 'user_id'\n1 failed"},
    {"role": "assistant", "content": "The fix goes in src/app/views.py."},
]
SCOPE = SummaryScope(total=len(MESSAGES), summarised=frozenset({1, 2, 3}), opening=0)


def _flags(section: str, text: str, sources: tuple[int, ...]) -> tuple[str, ...]:
    summary = Summary(items={section: [SummaryItem(text, sources)]})
    return check_summary(summary, MESSAGES, SCOPE, verbatim=True).items[section][0].flags


def test_a_claim_in_the_cited_message_s_own_text_holds() -> None:
    assert _flags("Key Decisions", "- The fix goes in src/app/views.py.", (3,)) == ()
    assert _flags("Completed Actions", "1. ran `pytest -q`", (1,)) == ()


def test_a_claim_only_in_the_call_s_output_is_found_in_its_tool_group() -> None:
    assert _flags("Completed Actions", "1. ran `pytest -q` -> `KeyError: 'user_id'`", (1,)) == ()


def test_a_claim_in_neither_is_flagged_after_the_ones_that_hold() -> None:
    text = "1. ran `pytest -q` -> `KeyError: 'user_id'`, then `NameError: nope`"
    assert _flags("Completed Actions", text, (1,)) == ("`NameError: nope` is not in #1",)
    assert _flags("Key Decisions", "- Edit src/app/models.py.", (3,)) == (
        "`src/app/models.py` is not in #3",
    )
