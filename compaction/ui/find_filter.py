"""Find in the conversation and filter it by role, tool, region or fate (as Langfuse filters a
trace), with the message table showing only the matching messages.

The search text of each message (its text, a tool output decoded, its calls' names and
arguments) is built once per conversation and lower-cased, so a keystroke costs one substring
test per message: linear, no regular expressions, nothing quadratic.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import streamlit as st

from compaction.messages import Message, call_arguments, call_name, content_text, tool_calls
from compaction.text.tool_output import format_tool_output
from compaction.ui.palette import FATE_LABELS, REGION_LABELS

QUERY_KEY = "find_query"
ROLES_KEY = "find_roles"
TOOLS_KEY = "find_tools"
REGIONS_KEY = "find_regions"
FATES_KEY = "find_fates"


@dataclass(frozen=True)
class MessageFilter:
    """What to show: messages containing `query` (case-insensitive) and, for each non-empty set,
    whose role / tool / region / fate is in it."""

    query: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)
    tools: frozenset[str] = field(default_factory=frozenset)
    regions: frozenset[str] = field(default_factory=frozenset)
    fates: frozenset[str] = field(default_factory=frozenset)

    @property
    def active(self) -> bool:
        return bool(self.query.strip() or self.roles or self.tools or self.regions or self.fates)


def message_tools(messages: Sequence[Message]) -> list[frozenset[str]]:
    """The tools each message involves: its calls' names, or for a result, its call's name."""
    by_call: dict[str, str] = {}
    found: list[frozenset[str]] = []
    for message in messages:
        names = set()
        for call in tool_calls(message):
            name = call_name(call)
            names.add(name)
            if isinstance(call.get("id"), str):
                by_call[call["id"]] = name
        if message.get("role") == "tool":
            answered = by_call.get(str(message.get("tool_call_id", "")))
            if answered:
                names.add(answered)
            elif isinstance(message.get("name"), str):
                names.add(message["name"])
        found.append(frozenset(names))
    return found


def search_texts(messages: Sequence[Message]) -> list[str]:
    """Each message's searchable text, case-folded: text (tool output decoded), calls."""
    texts: list[str] = []
    for message in messages:
        text = content_text(message)
        if message.get("role") == "tool":
            text = format_tool_output(text)
        parts = [text]
        for call in tool_calls(message):
            parts.append(call_name(call))
            parts.append(call_arguments(call))
        texts.append("\n".join(parts).casefold())
    return texts


def filter_messages(
    flt: MessageFilter,
    roles: Sequence[str],
    texts: Sequence[str],
    tools: Sequence[Collection[str]],
    regions: Sequence[str],
    fates: Sequence[str] | None = None,
) -> list[int]:
    """Indices of the messages `flt` lets through, in order (all of them when it is inactive)."""
    needle = flt.query.strip().casefold()
    shown: list[int] = []
    for index in range(len(roles)):
        if flt.roles and roles[index] not in flt.roles:
            continue
        if flt.regions and regions[index] not in flt.regions:
            continue
        if flt.fates and (fates is None or fates[index] not in flt.fates):
            continue
        if flt.tools and flt.tools.isdisjoint(tools[index]):
            continue
        if needle and needle not in texts[index]:
            continue
        shown.append(index)
    return shown


def filter_controls(
    roles: Sequence[str],
    tools: Sequence[Collection[str]],
    regions: Sequence[str],
    fates: Sequence[str] | None,
) -> MessageFilter:
    """The find box and the four filters; their options are the values the conversation has."""
    query = st.text_input(
        "Find in the conversation",
        key=QUERY_KEY,
        placeholder="text, a tool output, a tool name or its arguments…",
    )
    columns = st.columns(4 if fates is not None else 3)
    role_options = sorted(set(roles))
    tool_options = sorted({name for names in tools for name in names})
    region_options = [r for r in REGION_LABELS if r in set(regions)]
    # A filter picked for another conversation may name a value this one lacks: drop it.
    for key, options in (
        (ROLES_KEY, role_options),
        (TOOLS_KEY, tool_options),
        (REGIONS_KEY, region_options),
    ):
        _keep_valid(key, options)
    picked_roles = columns[0].multiselect("Role", role_options, key=ROLES_KEY)
    picked_tools = columns[1].multiselect("Tool", tool_options, key=TOOLS_KEY)
    picked_regions = columns[2].multiselect(
        "Region", region_options, key=REGIONS_KEY, format_func=lambda r: REGION_LABELS.get(r, r)
    )
    picked_fates: list[str] = []
    if fates is not None:
        fate_options = [f for f in FATE_LABELS if f in set(fates)]
        _keep_valid(FATES_KEY, fate_options)
        picked_fates = columns[3].multiselect(
            "Fate", fate_options, key=FATES_KEY, format_func=lambda f: FATE_LABELS.get(f, f)
        )
    return MessageFilter(
        query=query or "",
        roles=frozenset(picked_roles) & frozenset(role_options),
        tools=frozenset(picked_tools) & frozenset(tool_options),
        regions=frozenset(picked_regions) & frozenset(region_options),
        fates=frozenset(picked_fates),
    )


def _keep_valid(key: str, options: Sequence[str]) -> None:
    chosen = st.session_state.get(key)
    if isinstance(chosen, list) and any(value not in options for value in chosen):
        st.session_state[key] = [value for value in chosen if value in options]


def subset(frame: dict[str, list[object]], shown: Sequence[int]) -> dict[str, list[object]]:
    """The table's columns restricted to the rows `shown` (row i of the frame is message i)."""
    return {name: [column[i] for i in shown] for name, column in frame.items()}
