"""Which messages may feed each section of the summary: the sections' definitions, as code.

A section's name is a promise about where its lines come from. "Constraints & Preferences" are
rules the *user* set: a line taken from a tool's output, a file the agent read or a skill's body
breaks that promise even when its words sound like a rule. So every message is classified by
what it can supply (the user's own words, the assistant's prose, a tool call, a tool result,
harness text, a system notice), and each section lists the kinds it may take. The extractive
summariser reads only those kinds for each section, and the provenance check (check.py) flags any
item, from any summariser, that cites a message of another kind.

Where a section may reach outside the summarised middle is said here too: Active Task quotes the
latest request wherever it is (usually the tail), Goal and Constraints read the opening request
(usually in the head), and Critical Context, Relevant Files and Blocked may take facts from the
tail's tool outputs that Phase 1 cut to one line (they leave the context as surely as the middle).
"""

from __future__ import annotations

from enum import Enum

from compaction.messages import INJECTED_KEY, Message, content_text, is_user_request, tool_calls


class Kind(Enum):
    """What a message can supply to a summary."""

    USER_WORDS = "the user's own words"
    ASSISTANT_TEXT = "the assistant's text"
    TOOL_CALL = "a tool call"
    TOOL_RESULT = "a tool result"
    HARNESS = "text the agent's harness sent in a user turn"
    SYSTEM = "a system message"
    SUMMARY = "an earlier summary"


_ALL = frozenset(Kind)
#: The kinds each section may take its lines from.
SECTION_KINDS: dict[str, frozenset[Kind]] = {
    "Active Task": frozenset({Kind.USER_WORDS}),
    "Goal": frozenset({Kind.USER_WORDS}),
    "Constraints & Preferences": frozenset({Kind.USER_WORDS}),
    "Completed Actions": frozenset({Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.SYSTEM}),
    "Active State": frozenset({Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.SYSTEM}),
    "In Progress": frozenset({Kind.TOOL_CALL, Kind.ASSISTANT_TEXT}),
    "Blocked": frozenset({Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.USER_WORDS, Kind.HARNESS}),
    "Key Decisions": frozenset({Kind.ASSISTANT_TEXT}),
    "Resolved Questions": frozenset({Kind.USER_WORDS, Kind.ASSISTANT_TEXT}),
    "Pending User Asks": frozenset({Kind.USER_WORDS}),
    "Relevant Files": _ALL,
    "Remaining Work": frozenset({Kind.ASSISTANT_TEXT, Kind.TOOL_CALL}),
    "Critical Context": _ALL,
}

#: Where, besides the summarised middle, a section may cite: "anywhere" (the latest request),
#: "opening" (the first request, usually in the head) or "pruned" (tail tool outputs Phase 1
#: or Fit cut to one line).
SECTION_REACH: dict[str, str] = {
    "Active Task": "anywhere",
    "Goal": "opening",
    "Constraints & Preferences": "opening",
    "Blocked": "pruned",
    "Relevant Files": "pruned",
    "Critical Context": "pruned",
}

#: Injected kinds (messages.INJECTED_KINDS) that carry a tool's output or a failure verdict.
_RESULT_CARRIERS = ("tool-result",)


def message_kinds(message: Message, mark: str | object | None = ...) -> frozenset[Kind]:
    """What `message` can supply. An assistant message with text and calls supplies both; a
    tool result carried in a user turn (old SWE-agent observations) is a tool result. `mark` is
    the message's mark (messages.Marks); left out, its own `injected` key."""
    kind = message.get(INJECTED_KEY) if mark is ... else mark
    role = message.get("role")
    if role == "tool":
        return frozenset({Kind.TOOL_RESULT})
    if role == "assistant":
        kinds = set()
        if content_text(message).strip():
            kinds.add(Kind.ASSISTANT_TEXT)
        if tool_calls(message):
            kinds.add(Kind.TOOL_CALL)
        return frozenset(kinds or {Kind.ASSISTANT_TEXT})
    if role in ("system", "developer"):
        return frozenset({Kind.SYSTEM})
    if role == "user":
        if is_user_request(message, kind):
            return frozenset({Kind.USER_WORDS})
        if kind in _RESULT_CARRIERS:
            return frozenset({Kind.TOOL_RESULT, Kind.HARNESS})
        if kind:
            return frozenset({Kind.HARNESS})
        return frozenset({Kind.SUMMARY})
    return frozenset()


def allowed(section: str, message: Message, mark: str | object | None = ...) -> bool:
    """Whether `section` may take a line from `message` (`mark`: as for message_kinds)."""
    return bool(SECTION_KINDS.get(section, _ALL) & message_kinds(message, mark))


def describe_kinds(section: str) -> str:
    """`the user's own words` / `a tool call or a tool result`, for a flag's text."""
    kinds = [kind.value for kind in Kind if kind in SECTION_KINDS.get(section, _ALL)]
    return kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]


_REACH_WORDS = {
    "anywhere": "anywhere in the conversation",
    "opening": "the summarised middle and the opening request",
    "pruned": "the summarised middle and the tool outputs Phase 1 or Fit cut in the head or tail",
}


def rules_table() -> str:
    """The section rules as a markdown table (docs/summary.md holds it; a test keeps it true)."""
    rows = ["| section | may take its lines from | may cite |", "|---|---|---|"]
    for section, kinds in SECTION_KINDS.items():
        taken = "any message" if kinds == _ALL else ", ".join(k.value for k in Kind if k in kinds)
        reach = _REACH_WORDS.get(SECTION_REACH.get(section, ""), "the summarised middle")
        rows.append(f"| {section} | {taken} | {reach} |")
    return "\n".join(rows)
