"""A model's summary cites `[#N]` after each item; the phase reads the citations back, takes them
out of the text the agent reads, and checks each against the messages it summarised.

Through the real litellm and the loopback OpenAI-compatible server: the server's answer holds
right citations, wrong ones (a message outside the summarised middle, one the conversation does
not have, one that does not hold the item's path, a tool result cited for a user's rule), an
unreadable one and none at all. None of them may fail the run: each becomes a flag on its item.
"""

from __future__ import annotations

import json
from typing import Any

from llm_server import LLMServer

from compaction import CompactionConfig, Compactor
from compaction.result import CompactionResult
from compaction.summarizers.llm import LLMSummarizer
from compaction.summary import SUMMARY_PREFIX

CONFIG = CompactionConfig(context_length=3_000, protect_first_n=2, tail_token_ratio=0.15)


def _call(call_id: str, command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})},
            }
        ],
    }


def _conversation() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the login redirect in auth/login.py."},
        {"role": "assistant", "content": "Looking at the auth module first."},
        {"role": "user", "content": "Never push to main; open a branch."},
    ]
    for step in range(8):
        messages.append(_call(f"c{step}", f"pytest tests/auth/test_login.py -k case{step}"))
        body = f"case{step}: checking auth/login.py\n" + "ok line\n" * 120
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": body})
    messages.append({"role": "assistant", "content": "The redirect now returns 200."})
    messages.append({"role": "user", "content": "Good, now add a regression test."})
    messages.append({"role": "assistant", "content": "Adding it."})
    return messages


def _bounds(messages: list[dict[str, Any]]) -> tuple[int, int]:
    details = Compactor(CONFIG).compress(messages, force=True).phase("boundaries").details
    return int(details["head_end"]), int(details["tail_start"])


def _run(llm_server: LLMServer, answer: str) -> CompactionResult:
    llm_server.answer(answer)
    summarizer = LLMSummarizer(
        "openai/main", api_base=llm_server.base_url, api_key="test-key", timeout=10
    )
    return Compactor(CONFIG, summarizer).compress(_conversation(), force=True)


def test_the_turns_are_numbered_and_the_model_is_asked_to_cite(llm_server: LLMServer) -> None:
    messages = _conversation()
    head_end, _ = _bounds(messages)
    _run(llm_server, "## Active Task\nAdd a regression test.")
    prompt = llm_server.requests[0].prompt_text
    assert f"[#{head_end}] [USER]: Never push to main; open a branch." in prompt
    assert "End every item you write (each line of a section) with the numbers" in prompt


def test_citations_become_sources_and_leave_the_text(llm_server: LLMServer) -> None:
    messages = _conversation()
    head_end, tail_start = _bounds(messages)
    rule, call, result = head_end, head_end + 1, head_end + 2
    answer = "\n".join(
        [
            "## Active Task",
            "Good, now add a regression test.",
            "## Goal",
            "Fix the login redirect. [#0]",
            "## Constraints & Preferences",
            f"- Never push to main; open a branch. [#{rule}]",
            f"- Always run the whole suite. [#{result}]",  # a tool result is no user's rule
            "## Completed Actions",
            f"1. Ran `pytest tests/auth/test_login.py -k case0`: checks pass [#{call}, #{result}]",
            f"2. Ran `pytest tests/auth/test_login.py -k case0` again [#{tail_start + 1}]",
            f"3. Read `auth/session.py` [#{call}]",  # the cited call never names it
            "4. Deployed the fix [#9999]",  # a message the conversation does not have
            "5. Reviewed the diff [#abc]",
            "6. Talked to the team",
            "## Relevant Files",
            f"- auth/login.py — tested [#{call}-#{result}]",
        ]
    )
    result_run = _run(llm_server, answer)
    assert result_run.fallback_used is None  # no citation, however wrong, fails the run
    summary = result_run.summary
    assert summary is not None
    assert "[#" not in summary.text
    summary_message = next(m for m in result_run.messages if "Ran `pytest" in str(m.get("content")))
    assert "[#" not in str(summary_message["content"])

    def item(section: str, start: str) -> Any:
        return next(i for i in summary.section_items(section) if i.text.startswith(start))

    assert item("Active Task", "Good").sources == (len(messages) - 2,)
    assert item("Goal", "Fix").sources == (0,) and item("Goal", "Fix").flags == ()
    assert item("Constraints & Preferences", "- Never").sources == (rule,)
    assert item("Constraints & Preferences", "- Never").flags == ()
    assert any(
        "takes the user's own words" in flag
        for flag in item("Constraints & Preferences", "- Always").flags
    )
    assert item("Completed Actions", "1.").sources == (call, result)
    assert item("Completed Actions", "1.").flags == ()
    assert any("outside what was summarised" in f for f in item("Completed Actions", "2.").flags)
    assert item("Completed Actions", "3.").flags == (f"`auth/session.py` is not in #{call}",)
    assert item("Completed Actions", "4.").flags == (
        "cites #9999, which is not a message of this conversation",
    )
    assert item("Completed Actions", "5.").flags == (
        "unreadable citation [#abc]",
        "no source cited",
    )
    assert item("Completed Actions", "6.").flags == ("no source cited",)
    assert item("Relevant Files", "- auth/login.py").sources == (call, result)
    provenance = result_run.phase("summarize").details["provenance"]
    assert provenance["flagged"] == 6
    report = result_run.to_dict()["summary_items"]
    assert report["Completed Actions"][3]["flags"] == [
        "cites #9999, which is not a message of this conversation"
    ]


def test_an_item_kept_from_the_previous_summary_needs_no_citation(
    llm_server: LLMServer,
) -> None:
    messages = _conversation()
    previous = "## Key Decisions\n- Keep the session cookie name unchanged."
    messages.insert(2, {"role": "user", "content": f"{SUMMARY_PREFIX}\n{previous}"})
    llm_server.answer("## Key Decisions\n- Keep the session cookie name unchanged.")
    summarizer = LLMSummarizer(
        "openai/main", api_base=llm_server.base_url, api_key="test-key", timeout=10
    )
    result = Compactor(CONFIG, summarizer).compress(messages, force=True)
    assert result.summary is not None
    kept = result.summary.section_items("Key Decisions")[0]
    assert kept.origin is not None and kept.origin.startswith("carried from the previous summary")
    assert kept.flags == ()
