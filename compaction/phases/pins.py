"""Pins: what the user asks compaction to keep, and which messages of a conversation that is.

"Keep this" is the control users ask for most across agents' issue trackers: project
instructions (AGENTS.md, CLAUDE.md) that an agent loses after compaction, the user's own words
verbatim, a decision. `Pins` is the rule set a `CompactionConfig` carries (message numbers, roles,
tool names, text patterns, the user's messages, instruction files); `resolve_pins` turns it into
the input indexes it pins, once, at the Compactor's door. The phases then never summarise, cut or
drop a pinned message: Prune leaves it alone, Boundaries keeps a pinned middle message verbatim
after the summary (as the latest request is kept when it is pinned), and Fit treats it as
protected and says what it could not cut because of it.

A tool call and its results travel together: a pinned result pins the assistant message that
made its call, and a pinned assistant message pins the results of all its calls, so a pin never
leaves a provider an orphan to reject.

An earlier compaction's summary is never pinned: the new summary carries what it said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction.errors import ConfigError
from compaction.messages import (
    ROLES,
    Marks,
    Message,
    call_arguments,
    call_name,
    content_text,
    is_summary_message,
    is_user_request,
    mark_of,
    tool_calls,
)
from compaction.text.patterns import injected_kind

#: The rule names, as `Pins.to_dict()` writes them and `Pins.of()` reads them.
PIN_FIELDS = ("messages", "roles", "tools", "patterns", "user_messages", "instruction_files")

#: The instruction files agents' harnesses send the model as context, by name.
INSTRUCTION_FILE_NAMES = (
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "QWEN.md",
    "copilot-instructions.md",
    ".cursorrules",
    ".clinerules",
    ".windsurfrules",
)
_FILE = "|".join(re.escape(name) for name in INSTRUCTION_FILE_NAMES)
#: How a harness frames an instruction file it sends (checked on the start of its text only):
#: Codex's "# AGENTS.md instructions for <dir>" (OBSERVED_FORMATS.md 2.2), Claude Code's
#: "Contents of <path>/CLAUDE.md (project instructions…)" inside a system reminder, and Codex's
#: older `<user_instructions>` block, which holds the AGENTS.md text.
_FRAMINGS = (
    re.compile(rf"\A\s*#\s*(?P<file>{_FILE}) instructions\b"),
    re.compile(rf"Contents of (?P<path>[^\s(]*?(?P<file>{_FILE}))\s*\("),
    re.compile(r"\A\s*<user_instructions>"),
)
#: How far into a message the framing is looked for: a reminder opens with a line or two.
_FRAMING_REACH = 600


#: The prefixed forms of `Pins.specs()`, and the rule each fills.
_SPEC_RULES = {"role": "roles", "tool": "tools", "text": "patterns"}


@dataclass(frozen=True)
class Pins:
    """What compaction must keep verbatim. Every rule adds messages; none removes one.

    - `messages`: input message indexes (the numbers the app and `compaction inspect` show).
    - `roles`: every message of these roles ("system", "developer", "user", "assistant", "tool").
    - `tools`: every call to a tool of these names, with its results.
    - `patterns`: every message whose text (or a tool call's name and arguments) a regular
      expression of these finds (Python `re.search`; `(?i)` for case-insensitive).
    - `user_messages`: every turn the user wrote (a slash command they invoked included), not
      the text their agent's harness sent as a user turn.
    - `instruction_files`: every instruction file a harness sent (AGENTS.md, CLAUDE.md…,
      recognised by the harness's framing of it; see INSTRUCTION_FILE_NAMES).
    """

    messages: tuple[int, ...] = ()
    roles: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    user_messages: bool = False
    instruction_files: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", _indexes(self.messages))
        object.__setattr__(self, "roles", _names("roles", self.roles, allowed=ROLES))
        object.__setattr__(self, "tools", _names("tools", self.tools))
        object.__setattr__(self, "patterns", _patterns(self.patterns))
        for name in ("user_messages", "instruction_files"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"pins.{name} must be true or false, got {getattr(self, name)!r}")

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in PIN_FIELDS)

    @classmethod
    def of(cls, value: Any) -> Pins:
        """`value` as Pins: Pins itself, None (no pins), or a mapping of the rule names (what
        `to_dict()` writes; a missing rule is empty). A ConfigError names what is wrong."""
        if value is None:
            return cls()
        if isinstance(value, Pins):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(
                "pins must be a mapping such as {'messages': [12], 'tools': ['Bash'], "
                f"'user_messages': True}} (or None), got {type(value).__name__}"
            )
        unknown = sorted(set(value) - set(PIN_FIELDS))
        if unknown:
            raise ConfigError(
                f"unknown pin rule(s): {', '.join(map(str, unknown))} "
                f"(the rules are {', '.join(PIN_FIELDS)})"
            )
        return cls(**{name: value[name] for name in PIN_FIELDS if name in value})

    def to_dict(self) -> dict[str, Any]:
        """The rules that are set, JSON-ready (lists for tuples); `Pins.of` reads it back."""
        data: dict[str, Any] = {}
        for name in PIN_FIELDS:
            value = getattr(self, name)
            if value:
                data[name] = list(value) if isinstance(value, tuple) else value
        return data

    def specs(self) -> list[str]:
        """The rules as short texts, one per pin (`compaction compress --pin`, the app's
        link): `12`, `role:user`, `tool:Bash`, `text:REGEX`, `user`, `instructions`."""
        found = [str(index) for index in self.messages]
        found += [f"role:{role}" for role in self.roles]
        found += [f"tool:{tool}" for tool in self.tools]
        found += [f"text:{pattern}" for pattern in self.patterns]
        found += ["user"] if self.user_messages else []
        found += ["instructions"] if self.instruction_files else []
        return found

    @classmethod
    def from_specs(cls, specs: Iterable[str]) -> Pins:
        """Pins from the texts `specs()` writes; a ConfigError names one it cannot read."""
        rules: dict[str, Any] = {"messages": [], "roles": [], "tools": [], "patterns": []}
        for spec in specs:
            kind, separator, value = spec.partition(":")
            if spec.strip().lstrip("#").isdigit():
                rules["messages"].append(int(spec.strip().lstrip("#")))
            elif spec == "user":
                rules["user_messages"] = True
            elif spec == "instructions":
                rules["instruction_files"] = True
            elif separator and kind in _SPEC_RULES and value:
                rules[_SPEC_RULES[kind]].append(value)
            else:
                raise ConfigError(
                    f"pin {spec!r}: expected a message number, role:ROLE, tool:NAME, "
                    "text:REGEX, user or instructions"
                )
        return cls.of(rules)

    def with_messages(self, indexes: Iterable[int]) -> Pins:
        """A copy pinning exactly `indexes` by number (the other rules unchanged)."""
        return Pins(**{**self._fields(), "messages": tuple(indexes)})

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in PIN_FIELDS}

    def describe(self) -> list[str]:
        """Each rule in plain words, for reports and the app."""
        lines = []
        if self.messages:
            lines.append("messages " + ", ".join(f"#{i}" for i in self.messages))
        if self.roles:
            lines.append("every " + ", ".join(self.roles) + " message")
        if self.tools:
            lines.append("every call to " + ", ".join(self.tools) + " with its results")
        lines += [f"text matching /{pattern}/" for pattern in self.patterns]
        if self.user_messages:
            lines.append("the user's messages")
        if self.instruction_files:
            lines.append("instruction files (AGENTS.md, CLAUDE.md…)")
        return lines


def _indexes(value: Any) -> tuple[int, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ConfigError(f"pins.messages must be a list of message numbers, got {value!r}")
    found = set()
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise ConfigError(
                f"pins.messages holds {item!r}: a message number is a whole number from 0"
            )
        found.add(item)
    return tuple(sorted(found))


def _names(rule: str, value: Any, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, Iterable):
        raise ConfigError(f"pins.{rule} must be a list of names, got {value!r}")
    names: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"pins.{rule} holds {item!r}: a name is non-empty text")
        if allowed is not None and item not in allowed:
            raise ConfigError(f"pins.{rule} holds {item!r}: the roles are {', '.join(allowed)}")
        if item not in names:
            names.append(item)
    return tuple(names)


def _patterns(value: Any) -> tuple[str, ...]:
    patterns = _names("patterns", value)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"pins.patterns holds {pattern!r}, which is no regular expression: {exc}"
            ) from exc
    return patterns


# -- which messages they pin --------------------------------------------------------------------


@dataclass
class PinnedMessages:
    """The input indexes a conversation's pins keep, each with why (`reasons`), and the pins
    that kept nothing it could keep (`unresolved`: a number past the end, an earlier summary)."""

    reasons: dict[int, str] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)

    @property
    def indexes(self) -> frozenset[int]:
        return frozenset(self.reasons)

    def __contains__(self, index: object) -> bool:
        return index in self.reasons

    def __bool__(self) -> bool:
        return bool(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pinned": {str(index): why for index, why in sorted(self.reasons.items())},
            "unresolved": list(self.unresolved),
        }


def instruction_file(message: Message, mark: str | None) -> str | None:
    """The instruction file `message` carries ("AGENTS.md", or the path Claude Code names), or
    None. Only text a harness sent counts (a marked user turn, a system or developer message,
    a user turn opening as a harness's does: text.patterns.INJECTED_PREFIXES): a user who
    pastes their AGENTS.md in their own words is speaking, and that message is theirs to pin."""
    start = content_text(message)[:_FRAMING_REACH]
    sent_by_harness = (
        message.get("role") in ("system", "developer")
        or mark is not None
        or injected_kind(start) is not None
    )
    if not sent_by_harness:
        return None
    for framing in _FRAMINGS:
        found = framing.search(start)
        if found is not None:
            names = found.groupdict()
            return names.get("path") or names.get("file") or "<user_instructions> (AGENTS.md)"
    return None


def resolve_pins(
    messages: Sequence[Message], pins: Pins, marks: Marks | None = None
) -> PinnedMessages:
    """The input indexes `pins` keep in `messages` (`marks`: which user turns the harness sent),
    each with its reason; a tool call and its results are pinned together."""
    if not pins:
        return PinnedMessages()
    reasons: dict[int, str] = {}
    unresolved: list[str] = []
    compiled = [re.compile(pattern) for pattern in pins.patterns]
    tools = set(pins.tools)
    roles = set(pins.roles)
    for index in pins.messages:
        if index >= len(messages):
            unresolved.append(f"#{index}: the conversation has {len(messages):,} messages")
        else:
            reasons[index] = f"pinned #{index}"
    for index, message in enumerate(messages):
        if index in reasons:
            continue
        why = _rule_reason(message, mark_of(message, index, marks), pins, roles, tools, compiled)
        if why is not None:
            reasons[index] = why
    orphans = _pin_pairs(messages, reasons)
    for index in sorted(reasons):
        why = None
        if is_summary_message(messages[index]):
            why = "an earlier compaction's summary (the new summary carries it)"
        elif index in orphans:
            why = (
                "a tool result whose call is not before it in the conversation (a provider "
                "rejects it, so Phase 5 removes it)"
            )
        if why is not None:
            del reasons[index]
            unresolved.append(f"#{index}: {why}")
    return PinnedMessages(dict(sorted(reasons.items())), unresolved)


def _rule_reason(
    message: Message,
    mark: str | None,
    pins: Pins,
    roles: set[str],
    tools: set[str],
    patterns: Sequence[re.Pattern[str]],
) -> str | None:
    role = message.get("role")
    if role in roles:
        return f"role {role}"
    calls = tool_calls(message)
    named = [call_name(call) for call in calls if call_name(call) in tools]
    if named:
        return f"tool {named[0]}"
    if pins.user_messages and is_user_request(message, mark):
        return "the user's message"
    if pins.instruction_files:
        found = instruction_file(message, mark)
        if found is not None:
            return f"instruction file {found}"
    if patterns:
        text = content_text(message)
        if calls:
            text += "\n" + "\n".join(f"{call_name(c)} {call_arguments(c)}" for c in calls)
        for pattern in patterns:
            if pattern.search(text):
                return f"text matching /{pattern.pattern}/"
    return None


def _pin_pairs(messages: Sequence[Message], reasons: dict[int, str]) -> set[int]:
    """Close `reasons` over tool-call pairs: a pinned result pins its call's message, a pinned
    call message pins all its results (and so, through them, nothing more: a result answers
    one message). A tool rule names the tool: its results are pinned for it too. Returns the
    results that answer no earlier call (orphans, which no pin can keep)."""
    owner: dict[str, int] = {}  # call id -> the latest assistant message that made it
    results: dict[int, list[int]] = {}  # assistant message -> its results
    answered_by: dict[int, int] = {}  # result -> its call's message
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            made_by = owner.get(str(message.get("tool_call_id")))
            if made_by is not None:
                results.setdefault(made_by, []).append(index)
                answered_by[index] = made_by
            continue
        for call in tool_calls(message):
            owner[str(call.get("id"))] = index
    orphans = {
        index
        for index, message in enumerate(messages)
        if message.get("role") == "tool" and index not in answered_by
    }
    for index in sorted(reasons):
        if index in orphans:
            continue
        call_message = answered_by.get(index, index)
        group = [call_message, *results.get(call_message, [])]
        for member in group:
            if member not in reasons:
                reasons[member] = (
                    f"with #{index}, {reasons[index]}: a call and its results stay together"
                )
    return orphans
