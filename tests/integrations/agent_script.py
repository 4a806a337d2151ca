"""The model side of a real agent run against the loopback server: an agent asked to read N
pages of a long log calls `read_page` once a turn (each page ~1,600 characters), then answers.

The script keeps its own count (not the context's: compaction folds old tool results into a
summary, and a script that counted them would loop). A request that is the compaction's own
summary call (the LLM summariser's system prompt) gets a summary with the 13 headings.
`check_requests` asserts what the engine guarantees on every request the agent's model was sent:
under the window, every tool call paired with its result, the latest user message verbatim.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from llm_server import DEFAULT_SUMMARY, RecordedRequest

from compaction import CompactionConfig, make_counter, validate
from compaction.messages import content_text
from compaction.summarizers.llm import SYSTEM_PROMPT
from compaction.summary import SUMMARY_PREFIX

PAGES = 14
REQUEST = f"Read pages 1 to {PAGES} of the build log with read_page, then say which test failed."
WINDOW = 4_000
#: Small budgets, so that a handful of pages crosses the threshold several times.
CONFIG = CompactionConfig(
    context_length=WINDOW,
    threshold_ratio=0.5,
    summary_min_tokens=200,
    summary_max_tokens=600,
    protect_first_n=2,
)
FULL_SUMMARY = DEFAULT_SUMMARY + "\n\n## Pending Tasks\nRead the remaining pages."


def page_text(page: int) -> str:
    """A page of the build log: ~1,600 characters, distinct per page."""
    lines = [
        f"[page {page} line {n:02d}] tests/test_api.py::test_case_{page}_{n} PASSED in 0.{n:02d}s"
        for n in range(24)
    ]
    if page == PAGES:
        lines.append("tests/test_api.py::test_login FAILED: AssertionError: 401 != 200")
    return "\n".join(lines)


def latest_request(messages: list[dict[str, Any]]) -> str:
    """The latest user request: the last user message that is not a compaction's summary (the
    engine keeps the request verbatim, in the tail, pinned after the summary, or in the head
    when it opened the conversation)."""
    for message in reversed(messages):
        text = content_text(message)
        if message.get("role") == "user" and not text.startswith(SUMMARY_PREFIX):
            return text
    return ""


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and messages[0].get("content") == SYSTEM_PROMPT


class AgentScript:
    """`respond(body)`: the next assistant message of the page-reading agent."""

    def __init__(self, pages: int = PAGES) -> None:
        self.pages = pages
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._request: str | None = None
        self._issued = 0
        self.summaries = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if is_summary_request(body):
            self.summaries += 1
            return {"content": FULL_SUMMARY}
        messages = body.get("messages") or []
        latest = latest_request(messages)
        with self._lock:
            if latest != self._request:
                self._request, self._issued = latest, 0
            if self._issued >= self.pages:
                return {"content": "Done: tests/test_api.py::test_login failed (401 != 200)."}
            self._issued += 1
            page, call = self._issued, next(self._ids)
        return {
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{call}",
                    "type": "function",
                    "function": {"name": "read_page", "arguments": f'{{"page": {page}}}'},
                }
            ],
        }


def agent_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if "messages" in r.body and not is_summary_request(r.body)]


def check_requests(
    requests: list[RecordedRequest],
    request_text: str = REQUEST,
    window: int = WINDOW,
    minimum: int = PAGES + 1,
) -> list[int]:
    """Assert the engine's guarantees on every agent request; return each request's tokens."""
    counter = make_counter("tiktoken", "gpt-4o")
    sent = agent_requests(requests)
    assert len(sent) >= minimum, f"the agent made {len(sent)} model calls"
    tokens = []
    for number, request in enumerate(sent):
        messages = request.body["messages"]
        errors = [p for p in validate(messages, "openai") if p.severity == "error"]
        assert errors == [], f"request {number}: {errors}"
        count = counter.count_messages(messages)
        assert count <= window, f"request {number}: {count} tokens over the window {window}"
        assert latest_request(messages) == request_text, f"request {number}: not verbatim"
        tokens.append(count)
    return tokens


def uncompacted_tokens(pages: int = PAGES) -> int:
    """What the tool outputs alone would weigh without compaction (more than the window)."""
    counter = make_counter("tiktoken", "gpt-4o")
    return sum(
        counter.count_message({"role": "tool", "content": page_text(p)})
        for p in range(1, pages + 1)
    )
