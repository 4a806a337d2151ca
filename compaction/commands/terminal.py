"""Untrusted text on the terminal: control characters shown, never obeyed.

Conversation text, session titles and history labels come from files nobody on this machine
wrote. Printed raw, an escape sequence in them is obeyed by the terminal: OSC 52 writes the
clipboard, OSC 0 sets the window title, CSI sequences move the cursor and hide lines. Every
command prints such text through `printable`, which keeps newlines and tabs where they are
layout and shows every other control character as a Python-style escape (`\\x1b`).
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and the C1 controls (U+0080–U+009F), which some
# terminals also obey (U+009B is a one-character CSI).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# A lone surrogate cannot be encoded at all: printed, it ends the command in a traceback. The
# messages had theirs replaced at input; a title or a file name can still hold one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """`text` safe to print: control characters and lone surrogates escaped; with
    `newlines=False` (a table cell, a one-line preview) newlines and tabs are escaped too."""
    escaped = _SURROGATE.sub(_escape_surrogate, _CONTROL.sub(_escape, text))
    if not newlines:
        escaped = escaped.replace("\n", "\\n").replace("\t", "\\t")
    return escaped
