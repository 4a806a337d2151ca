"""Pins in the app: "keep this" from the message list, rules in the sidebar, pins in the URL.

Pinning is the control users ask for most: a message (a decision, the user's own words) or a
kind of message (the user's turns, the instruction files agents lose after compaction) that
compaction must keep verbatim. The engine's rules are `Pins` (phases/pins.py); the app keeps them
as their short texts (`Pins.specs()`: `12`, `role:user`, `tool:Bash`, `text:REGEX`, `user`,
`instructions`) in one multiselect bound to the URL, so a shared link carries its pins, and a
run stored in the history carries them in its config (`CompactionConfig.to_dict()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from compaction.errors import ConfigError
from compaction.messages import ROLES, Message, call_name, tool_calls
from compaction.phases.pins import PinnedMessages, Pins
from compaction.ui.untrusted import md_escape

PINS_KEY = "p_pins"  # the widget's key and the URL's query parameter (repeated, one per pin)
MAX_TOOLS_OFFERED = 40
RULE_CHOICES = ("user", "instructions", *(f"role:{role}" for role in ROLES))


def pin_specs() -> list[str]:
    """The pins in force, as their short texts."""
    return [str(spec) for spec in st.session_state.get(PINS_KEY) or []]


def seed_pins_from_url() -> None:
    """Put the URL's pins into session state before the config is built: a bound widget takes
    the URL's value only when it is drawn, below the config on a link's first run."""
    if PINS_KEY in st.session_state:
        return
    found = [str(value) for value in st.query_params.get_all(PINS_KEY) if str(value)]
    if found:
        st.session_state[PINS_KEY] = found


PENDING_PINS_KEY = "_pending_pins"  # the pins to put in the widget before it is drawn


KEEP_PINS_KEY = "_keep_pins_once"  # the next conversation is the one the pins were made on


def keep_pins_for_next_conversation() -> None:
    """The next conversation opened is the one the pins in force name (a stored run's)."""
    st.session_state[KEEP_PINS_KEY] = True


def forget_message_pins() -> None:
    """Another conversation is on view: its message numbers name other messages, so pins by
    number go (the rules stay). Applied before the sidebar is drawn (`apply_pending_pins`)."""
    if st.session_state.pop(KEEP_PINS_KEY, False):
        return
    specs = pin_specs()
    rules = [spec for spec in specs if not spec.isdigit()]
    if rules != specs:
        st.session_state[PENDING_PINS_KEY] = rules


def apply_pending_pins() -> None:
    if PENDING_PINS_KEY in st.session_state:
        st.session_state[PINS_KEY] = st.session_state.pop(PENDING_PINS_KEY)


def pins_of(specs: Iterable[str]) -> Pins:
    """The Pins the texts name (a ConfigError says which one cannot be read)."""
    return Pins.from_specs(list(specs))


@st.cache_data(max_entries=8, show_spinner=False)
def called_tools(content_hash: str, _messages: list[Message]) -> list[str]:
    """The tool names the conversation calls, most called first (the `tool:` pins offered)."""
    counts: dict[str, int] = {}
    for message in _messages:
        for call in tool_calls(message):
            name = call_name(call)
            if name:
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: (-counts[name], name))[:MAX_TOOLS_OFFERED]


def _number_first(spec: str) -> tuple[int, int | str]:
    return (0, int(spec)) if spec.isdigit() else (1, spec)


def render_pins_control(tool_names: Iterable[str]) -> None:
    """The sidebar's pins: the rules to choose from, the loaded conversation's tools, and every
    pin in force (a message pinned from the list appears here as its number)."""
    chosen = pin_specs()
    options = list(dict.fromkeys([*RULE_CHOICES, *(f"tool:{name}" for name in tool_names)]))
    options += [spec for spec in chosen if spec not in options]
    st.multiselect(
        "Pinned: kept verbatim",
        sorted(options, key=_number_first),
        key=PINS_KEY,
        bind="query-params",
        accept_new_options=True,
        placeholder="a message number, user, instructions, role:…, tool:…, text:…",
        help=(
            "Compaction never summarises, cuts or drops what is pinned. A message number "
            "(or 📌 on the open message), `user` (the user's own messages), `instructions` "
            "(AGENTS.md, CLAUDE.md… as the harness sent them), `role:ROLE`, `tool:NAME` (its "
            "calls with their results) or `text:REGEX` (type it and press Enter)."
        ),
    )


def _toggle_pin(index: int) -> None:
    # A callback: it runs before the sidebar's widget is drawn, so it may change its value.
    specs = pin_specs()
    spec = str(index)
    st.session_state[PINS_KEY] = (
        [s for s in specs if s != spec] if spec in specs else [*specs, spec]
    )


def pin_button(index: int, pinned: PinnedMessages) -> None:
    """📌 on the open message: pin it by number, or unpin it (a rule's pin says which rule)."""
    by_number = str(index) in pin_specs()
    if index in pinned and not by_number:
        st.caption(f"📌 {md_escape(pinned.reasons[index])}: kept verbatim")
        return
    st.button(
        f"Unpin #{index}" if by_number else f"📌 Pin #{index}",
        key="pin_open_message",
        on_click=_toggle_pin,
        args=(index,),
        help="Pinned messages are kept verbatim: run the phases again to see it kept.",
    )


def render_pinned_summary(pinned: PinnedMessages) -> None:
    """Beside the region bar: which messages the pins keep, and the pins that keep nothing."""
    if pinned:
        numbers = ", ".join(f"#{index}" for index in sorted(pinned.indexes)[:30])
        more = f" and {len(pinned.indexes) - 30:,} more" if len(pinned.indexes) > 30 else ""
        st.caption(
            f"📌 **{len(pinned.indexes):,} pinned** (kept verbatim, never summarised or cut): "
            f"{numbers}{more}; ▼ marks each on the chart"
        )
    for problem in pinned.unresolved:
        st.caption(f"📌 not kept: {md_escape(problem)}")


def run_pin_specs(config: Mapping[str, Any]) -> list[str]:
    """The pins of a stored run's config, as short texts ([] when it had none or they are
    unreadable: a run stored by a later version must still open)."""
    try:
        return Pins.of(config.get("pins")).specs()
    except ConfigError:
        return []
