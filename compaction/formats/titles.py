"""A conversation's title as a person reads it, from the first thing the user wrote.

A session file rarely records a title, so the importers take the user's first message; its first
line is often Markdown (`**Fix** the \\`login\\` test`, `# Task`), a link, a Windows path written
with its backslashes doubled (pasted from a JSON string or a log), or nothing but a URL. The app
shows titles as plain text (escaped), so all of that showed as markup. Here the line loses its
markup (the words stay), a doubled backslash in a path becomes one, and a line that is only a URL
gives way to the next line of the message, or, when there is none, to the URL without its scheme.
"""

from __future__ import annotations

import re

TITLE_LIMIT = 80

_URL_ONLY = re.compile(r"^<?(?:https?|file)://\S+>?$|^www\.\S+$", re.IGNORECASE)
_SCHEME = re.compile(r"^<?(?:https?|file)://(?:www\.)?", re.IGNORECASE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_BLOCK_MARKER = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,3}[.)]\s+)+")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_CODE = re.compile(r"`+([^`]*)`+")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\\\")
_DOUBLED_BACKSLASH = re.compile(r"\\\\")


def readable_title(text: str, limit: int = TITLE_LIMIT) -> str | None:
    """The title `text` (a user's message) gives: its first line that is not only a URL, without
    its Markdown, on one line and at most `limit` characters; None when it has no words."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    words = next((line for line in lines if not _URL_ONLY.match(line)), None)
    # Nothing but a link: the place it names, without its scheme.
    bare = _SCHEME.sub("", lines[0]).rstrip(">").rstrip("/")
    title = " ".join((bare if words is None else _plain(words)).split())
    if not title:
        return None
    return title if len(title) <= limit else title[: limit - 1] + "…"


def _plain(line: str) -> str:
    """`line` without Markdown: block markers, emphasis, code spans and link syntax (the link's
    words stay), and a Windows path's doubled backslashes made single."""
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _BLOCK_MARKER.sub("", line)
    line = _CODE.sub(r"\1", line)
    line = _EMPHASIS.sub(r"\2", line)
    line = _STAR.sub(r"\1", line)
    if _WINDOWS_PATH.search(line):
        line = _DOUBLED_BACKSLASH.sub(lambda _: "\\", line)
    return line.strip() or line
