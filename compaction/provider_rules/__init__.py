"""Would the provider accept this request? The rules of OpenAI and Anthropic for a message list.

`validate(messages, provider)` lists every `Problem` (rules.py: roles, contents, alternation;
calls.py: tool calls and their results; problems.py: the Problem type and the rule table).
"""

from compaction.provider_rules.problems import (
    PROVIDERS,
    RULES,
    Problem,
    Provider,
    Severity,
    errors,
    is_valid,
)
from compaction.provider_rules.rules import is_summary, request_messages, validate

__all__ = [
    "PROVIDERS",
    "RULES",
    "Problem",
    "Provider",
    "Severity",
    "errors",
    "is_summary",
    "is_valid",
    "request_messages",
    "validate",
]
