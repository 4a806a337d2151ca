"""The Learn page's material: the seed's worked example as live arithmetic, and a tiny session.

The worked example is computed from a CompactionConfig, so it follows the sidebar; with the
defaults it reproduces the seed's numbers (64K trigger, 12.8K tail, 49.2K middle, 9.84K summary
clamped to 8K). The tiny conversation is small enough to read whole at every phase.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from compaction.config import CompactionConfig, whole_tokens
from compaction.messages import Message

SEED_HEAD_TOKENS = 2_000  # the seed's "first 3 messages: system + the opening exchange ≈ 2K"
SEED_SUMMARY_SAID = 9_800  # what the seed's table prints, forgetting its own 2K-8K clamp


@dataclass(frozen=True)
class WorkedExample:
    window: int
    trigger: int
    head: int
    tail: int
    middle: int
    summary_raw: int
    summary: int
    after: int

    @property
    def clamped(self) -> bool:
        return self.summary != self.summary_raw

    @property
    def savings_pct(self) -> float:
        return (self.trigger - self.after) / self.trigger * 100 if self.trigger else 0.0


def worked_example(config: CompactionConfig, head_tokens: int = SEED_HEAD_TOKENS) -> WorkedExample:
    """A conversation exactly at the trigger, split by the config's budgets."""
    trigger = config.threshold_tokens
    tail = min(config.tail_budget_tokens, max(trigger - head_tokens, 0))
    middle = max(trigger - head_tokens - tail, 0)
    summary_raw = whole_tokens(middle * config.summary_ratio)
    summary = config.summary_budget(middle)
    return WorkedExample(
        window=config.context_length,
        trigger=trigger,
        head=head_tokens,
        tail=tail,
        middle=middle,
        summary_raw=summary_raw,
        summary=summary,
        after=head_tokens + summary + tail,
    )


#: A config sized for the tiny conversation so every phase has something to do.
TINY_CONFIG = CompactionConfig(
    context_length=2_000,
    threshold_ratio=0.5,
    protect_first_n=3,
    tail_token_ratio=0.1,
    summary_min_tokens=100,
    summary_max_tokens=400,
    prune_min_chars=200,
)

_TEST_LOG = "\n".join(
    [f"tests/test_users.py::test_case_{n} PASSED" for n in range(12)]
    + [
        "tests/test_users.py::test_signup_duplicate FAILED",
        "E   sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
        "=== 1 failed, 12 passed in 0.84s ===",
    ]
)
_FILE = "\n".join(
    ["import sqlite3", "", "def create_user(db, email):"]
    + [f"    # step {n}: validate and normalise the address" for n in range(10)]
    + ["    db.execute('INSERT INTO users (email) VALUES (?)', (email,))"]
)


def _call(call_id: str, name: str, arguments: dict[str, str]) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def tiny_conversation() -> list[Message]:
    """Fourteen messages: a failing test, a file read twice, a fix, and a new request."""
    return [
        {"role": "system", "content": "You are a coding agent. Run tests with pytest -x."},
        {"role": "user", "content": "The signup test fails. Find out why and fix it."},
        {"role": "assistant", "content": "I'll run the tests first."},
        _call("call_1", "terminal", {"command": "pytest -x tests/test_users.py"}),
        {"role": "tool", "tool_call_id": "call_1", "content": _TEST_LOG},
        _call("call_2", "read_file", {"path": "app/users.py"}),
        {"role": "tool", "tool_call_id": "call_2", "content": _FILE},
        _call("call_3", "read_file", {"path": "app/users.py"}),
        {"role": "tool", "tool_call_id": "call_3", "content": _FILE},
        {
            "role": "assistant",
            "content": "create_user inserts without checking for an existing e-mail; "
            "I'll return the existing user instead of failing.",
        },
        _call("call_4", "patch", {"path": "app/users.py", "mode": "replace"}),
        {"role": "tool", "tool_call_id": "call_4", "content": "patched app/users.py"},
        {"role": "user", "content": "Good. Now commit it on a branch called fix-signup."},
        _call(
            "call_5", "terminal", {"command": "git checkout -b fix-signup && git commit -am fix"}
        ),
    ]


#: Why each rule exists, in the order the phases apply them.
WHY: list[tuple[str, str]] = [
    (
        "Prune tool outputs first, without an LLM",
        "Tool outputs are most of an agent's context and age fastest: a file read twenty turns "
        "ago is stale and a test log matters for its verdict. Deduplicating and cutting them to "
        "one line is free, keeps the error evidence, and makes the summary call cheaper.",
    ),
    (
        "The tail is a token budget, not a message count",
        "Ten huge tool outputs or ten one-word replies are both 'ten messages'. Budgeting tokens "
        "keeps the recent work that fits, whatever its shape.",
    ),
    (
        "Never split a tool group; orphaned tool calls break provider APIs",
        "OpenAI and Anthropic reject a tool result without its call, and a call without its "
        "result, with an HTTP 400. Boundaries move to whole groups, and Phase 5 repairs any "
        "orphan that remains (a stub result, or the stray result removed).",
    ),
    (
        "The last user message must survive verbatim",
        "It is what the agent is working on now. If the tail walk would summarise it, the cut "
        "moves back to keep it, and the summary's Active Task copies it word for word.",
    ),
    (
        "The summary is 'reference only'",
        "A summary mentions requests that were already handled. Without the prefix the model "
        "answers them again; the prefix says: background, not instructions — respond only to "
        "the latest message after it.",
    ),
    (
        "The summary's role is chosen against its neighbours",
        "Two user (or two assistant) turns in a row are merged or rejected by providers, so the "
        "summary speaks as whichever role fits between head and tail, or merges into the first "
        "tail message when neither does.",
    ),
    (
        "Stop when compaction stops helping",
        "If two compactions in a row free under 10%, compacting again only burns calls; the "
        "agent should suggest a new session (/new) instead of thrashing.",
    ),
]
