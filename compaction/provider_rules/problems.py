"""What a provider check reports: rule ids with their meaning, and one Problem per finding.

Shared by rules.py (roles, contents, alternation) and calls.py (tool calls and their
results), and public through `compaction.provider_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Provider = Literal["openai", "anthropic"]
Severity = Literal["error", "warning"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")

#: Every rule id with what it means (the UI and the CLI's help show these).
RULES: dict[str, str] = {
    "empty-conversation": "the request has no messages",
    "system-only": "only system messages: Anthropic's messages list would be empty",
    "invalid-message": "an entry is not a message object with a known role",
    "invalid-content": "content that is not a string, null or a list of content-part objects",
    "tool-calls-not-list": "tool_calls that is not a list of calls",
    "system-not-first": "a system (or developer) message that is not the first message",
    "first-not-user": "the first message after the system prompt is not a user message",
    "consecutive-same-role": "two turns of the same side in a row (the provider merges them)",
    "empty-user": "a user message with no text and no image",
    "empty-assistant": "an assistant message with neither content nor tool calls",
    "tool-call-missing-id": "a tool call without an id",
    "tool-call-missing-name": "a tool call without a function name",
    "tool-arguments-invalid-json": "tool-call arguments that are not valid JSON",
    "tool-arguments-not-object": "tool-call arguments that are JSON but not an object",
    "duplicate-tool-call-id": "the same tool-call id on more than one call",
    "tool-call-unanswered": "a tool call with no tool result",
    "tool-result-missing-id": "a tool result without a tool_call_id",
    "tool-result-without-call": "a tool result whose call appears nowhere",
    "tool-result-before-call": "a tool result that comes before its call",
    "tool-result-not-adjacent": "a tool result separated from the assistant message of its call",
    "duplicate-tool-result": "a second tool result for the same call",
    "unknown-field": "a message field the provider's API does not take",
    "summary-as-system": "the compaction summary sent as a system message after the first",
    "summary-breaks-alternation": "the compaction summary would be merged into a neighbouring turn",
}


@dataclass(frozen=True)
class Problem:
    """One thing the provider would reject (error) or silently change (warning)."""

    index: int | None  # the message's position in the list; None for the list itself
    rule: str
    message: str
    severity: Severity = "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
        }

    def __str__(self) -> str:
        where = f"message {self.index}" if self.index is not None else "conversation"
        return f"{where}: {self.severity} [{self.rule}] {self.message}"


def errors(problems: Sequence[Problem]) -> list[Problem]:
    """Only the problems the provider would reject."""
    return [problem for problem in problems if problem.severity == "error"]


def is_valid(problems: Sequence[Problem]) -> bool:
    """True when no problem is an error (warnings do not make a request invalid)."""
    return not errors(problems)
