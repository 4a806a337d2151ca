"""The message list and the message detail pane, built to stay fast at thousands of messages.

The browser pays for every element: 2,000 chat bubbles take seconds to render and each click
re-renders them. So the list is one dataframe (virtualised by the browser) and only the selected
message is drawn in full. Message text is untrusted: it is shown with `st.code` / `st.text`
(always plain text), never as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from compaction.messages import Message, call_arguments, call_name, content_text, tool_calls
from compaction.ui.charts import PICK, preview
from compaction.ui.palette import FATE_LABELS, REGION_EMOJI
from compaction.ui.text_views import folded_text, render_tool_output
from compaction.ui.tool_pairs import pretty_arguments
from compaction.ui.untrusted import md_code, md_escape

SELECTED_KEY = "inspect_open"
#: The preview column's width: about 55 characters; the table scrolls sideways for the rest.
PREVIEW_PX = 400


def call_index(messages: Sequence[Message]) -> dict[str, tuple[int, str]]:
    """tool_call_id -> (index of the assistant message that made the call, tool name)."""
    found: dict[str, tuple[int, str]] = {}
    for index, message in enumerate(messages):
        for call in tool_calls(message):
            call_id = call.get("id")
            if isinstance(call_id, str) and call_id not in found:
                found[call_id] = (index, call_name(call))
    return found


def message_frame(
    messages: Sequence[Message],
    tokens: Sequence[int],
    labels: Sequence[str],
    fates: dict[int, str] | None = None,
    origins: Sequence[int | None] | None = None,
) -> dict[str, list[Any]]:
    """Columns of the overview table: one row per message, its region as a coloured square."""
    rows: dict[str, list[Any]] = {
        "#": list(range(len(messages))),
        "region": region_column(labels),
        "role": [str(m.get("role", "?")) for m in messages],
        "tokens": list(tokens),
        "preview": [preview(m) for m in messages],
    }
    if origins is not None:
        rows["from input #"] = [None if o is None else int(o) for o in origins]
    if fates is not None:
        rows["fate"] = [FATE_LABELS.get(fates.get(i, "kept"), fates.get(i, "")) for i in rows["#"]]
    return rows


def region_column(labels: Sequence[str]) -> list[str]:
    """Each message's region (or part) as a coloured square and its name."""
    return [f"{REGION_EMOJI.get(label, '')} {label}" for label in labels]


def _select_from_table(key: str, shown: Sequence[int] | None) -> None:
    state = st.session_state.get(key)
    rows = getattr(getattr(state, "selection", None), "rows", None) or []
    if rows:
        row = int(rows[0])
        # A filtered table's row N is message shown[N], not message N.
        st.session_state[SELECTED_KEY] = int(shown[row]) if shown is not None else row


def select_from_chart(key: str) -> Callable[[], None]:
    """A callback opening the message of the clicked bar (its selection holds the bar's first
    message, `{"pick": [{"start": N}]}`; see charts.message_chart)."""

    def callback() -> None:
        state = st.session_state.get(key)
        selection = getattr(state, "selection", None) or {}
        picked = selection.get(PICK) if hasattr(selection, "get") else None
        if picked and isinstance(picked, list) and "start" in picked[0]:
            st.session_state[SELECTED_KEY] = int(picked[0]["start"])

    return callback


def message_table(frame: dict[str, list[Any]], key: str, height: int = 320) -> None:
    """The table; selecting a row opens the message its "#" column names (the table may hold a
    filtered subset of the conversation)."""
    shown = [int(index) for index in frame["#"]] if "#" in frame else None
    st.dataframe(
        frame,
        key=key,
        hide_index=True,
        height=height,
        on_select=lambda: _select_from_table(key, shown),
        selection_mode="single-row",
        # The short columns as narrow as their content allows, so the preview gets the rest
        # of the table's width (at 1024 px it had five characters).
        column_config={
            "#": st.column_config.NumberColumn(width="small"),
            "region": st.column_config.TextColumn(width="small"),
            "role": st.column_config.TextColumn(width="small"),
            "tokens": st.column_config.NumberColumn(format="%d", width="small"),
            "preview": st.column_config.TextColumn(width=PREVIEW_PX),
        },
    )


def render_message(
    message: Message,
    index: int,
    label: str,
    calls: dict[str, tuple[int, str]],
    fate: str | None = None,
    messages: Sequence[Message] | None = None,
    results: dict[str, int] | None = None,
) -> None:
    """One message in full: role, region, its text; a tool call with its result beside it (and a
    result with the call it answers) as one unit, when `messages` and `results` are given."""
    role = str(message.get("role", "?"))
    parts = [f"**#{index} · {md_escape(role)}**", f"{REGION_EMOJI.get(label, '')} {label}"]
    if fate:
        parts.append(f"fate: {FATE_LABELS.get(fate, fate)}")
    st.markdown(" · ".join(parts))
    if role == "tool":
        call_id = str(message.get("tool_call_id", ""))
        made = calls.get(call_id)
        where = (
            f"call #{made[0]} ({md_escape(made[1])})"
            if made
            else "a call that is not in the conversation"
        )
        st.caption(f"Tool result for {md_code(call_id)} — answers {where}")
        if made and messages is not None and made[0] < len(messages):
            for call in tool_calls(messages[made[0]]):
                if call.get("id") == call_id:
                    st.code(
                        pretty_arguments(call_arguments(call)), language="json", wrap_lines=True
                    )
    text = content_text(message)
    if text and role == "tool":
        render_tool_output(text, f"detail_{index}")
    elif text:
        # People's and the model's prose as plain text. (st.text also spares the first view the
        # 1.5 MB syntax highlighter that st.code loads: the message shown first is the system
        # prompt.)
        folded_text(text, f"fold_{index}", monospace=False)
    for call in tool_calls(message):
        call_id = str(call.get("id", "?"))
        answer = (results or {}).get(call_id)
        with st.container(border=True):
            heading = f"🔧 tool call {md_code(call_name(call))} · id {md_code(call_id)}"
            if results is not None:
                heading += " · " + (f"result #{answer}" if answer is not None else "no result")
            st.caption(heading)
            st.code(pretty_arguments(call_arguments(call)), language="json", wrap_lines=True)
            if answer is not None and messages is not None:
                render_tool_output(content_text(messages[answer]), f"detail_{index}_{call_id}")


def open_message_input(count: int) -> int:
    """The 'open message #' box: the single source of truth for the detail pane."""
    if st.session_state.get(SELECTED_KEY, 0) >= count:
        st.session_state[SELECTED_KEY] = 0
    st.session_state.setdefault(SELECTED_KEY, 0)
    value = st.number_input(
        "Open message #", min_value=0, max_value=max(count - 1, 0), step=1, key=SELECTED_KEY
    )
    return int(value)
