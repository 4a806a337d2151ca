"""Message text on the page: long text folded behind an expander, tool output decoded.

Always plain text (`st.text`, `st.code`), never Markdown or HTML: message text is untrusted. A
tool output goes through the engine's decoder (compaction/tool_output.py), so a JSON-wrapped
terminal result reads as the lines it printed, with a page-wide formatted/raw toggle.
"""

from __future__ import annotations

import streamlit as st

from compaction.text.tool_output import parse_tool_output
from compaction.ui.untrusted import md_escape

FOLD_CHARS = 3_000  # content longer than this is folded behind an expander


FORMATTED_KEY = "tool_output_formatted"


def render_tool_output(text: str, key: str) -> None:
    """A tool's output: decoded (a JSON wrapper's text, other JSON pretty-printed) or as stored,
    per the page's formatted/raw toggle; with its exit status and metadata when it holds them."""
    parsed = parse_tool_output(text)
    formatted = bool(st.session_state.get(FORMATTED_KEY, True))
    if parsed.wrapped or parsed.is_json:
        facts = ["decoded from JSON" if parsed.wrapped else "JSON, formatted"]
        if parsed.exit_code is not None:
            facts.append(f"exit {parsed.exit_code}")
        facts += [
            f"{md_escape(name)} {md_escape(value)}" for name, value in parsed.metadata.items()
        ]
        if not formatted:
            facts = ["shown as stored (raw)"]
        st.caption(" · ".join(facts))
    shown = parsed.formatted
    if formatted and parsed.is_json and shown.startswith(("{", "[")):
        folded_text(shown, key, monospace=True, language="json")
    else:
        folded_text(parsed.formatted if formatted else parsed.raw, key, monospace=True)


def tool_output_toggle() -> bool:
    """The formatted/raw switch for every tool output on the page (one session key)."""
    return bool(
        st.toggle(
            "Formatted tool output",
            value=True,
            key=FORMATTED_KEY,
            help='Decode JSON-wrapped outputs (`{"output": "…\\n…"}`) into their text and '
            "pretty-print other JSON; off shows each output exactly as stored.",
        )
    )


def folded_text(text: str, key: str, monospace: bool, language: str | None = None) -> None:
    def show(body: str) -> None:
        if monospace:
            st.code(body, language=language, wrap_lines=True)
        else:
            st.text(body)

    if len(text) <= FOLD_CHARS:
        show(text)
        return
    show(text[:FOLD_CHARS] + "\n…")
    with st.expander(f"Show all {len(text):,} characters"):
        show(text)
