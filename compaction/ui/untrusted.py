"""Untrusted text (titles, labels, messages, summaries, tool names, errors) inside Markdown.

Streamlit renders `st.markdown`, `st.caption`, `st.info`/`st.warning`, `st.subheader` and the
labels of expanders, tabs, metrics and buttons as GitHub-flavoured Markdown with LaTeX and
colour directives: a conversation title such as `Fix ![p](http://host/t.png)` would make the
browser fetch that URL. Every piece of conversation-derived text that goes into one of those is
passed through `md_escape` (or `md_code` inside a code span), so it shows as the characters it
holds. Plain-text elements (`st.text`, `st.code`, dataframe cells) need nothing.
"""

from __future__ import annotations

import re

# Characters that make Markdown wherever they stand: emphasis and strikethrough (`*`, `_`, `~`),
# links and images (`[`, `]`; `![…](…)` and `[…](…)` need the brackets), code (`` ` ``), LaTeX
# (`$`), HTML and autolinks (`<`, `>`, `&`), e-mail autolinks (`@`), tables (`|`), Streamlit's
# `:colour[…]` directives (the bracket again) and the backslash itself. All are ASCII
# punctuation, which CommonMark lets a backslash escape.
_INLINE = re.compile(r"([\\`*_\[\]<>~$|&@])")
# GFM turns a bare `https://…` or `www.…` into a link: an escape inside the marker stops it.
_BARE_LINK = re.compile(r"(?<=[A-Za-z0-9])(:)(?=//)|(?<![A-Za-z0-9])(www)(\.)", re.IGNORECASE)
# Characters that make a block only at the start of a line (a heading, list, quote, rule): the
# text is folded to one line, so only its own start can be a line start.
_BLOCK_START = re.compile(r"^(\s*)([#+\-=>]|\d{1,9}[.)])")
_LINE_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029\x0b\x0c\x85]+\s*")


def md_escape(text: object) -> str:
    """`text` as Markdown that renders exactly its characters, on one line: every character
    that could make a link, image, emphasis, code, HTML, LaTeX or a directive backslash-escaped,
    line breaks folded to a space, and a leading block marker (`#`, `-`, `1.`) escaped, so no
    heading, list or quote can start, and no bare URL becomes a link. Ordinary prose (`Fix the
    login test (auth.py).`) passes unchanged."""
    folded = _LINE_BREAKS.sub(" ", str(text))
    escaped = _BARE_LINK.sub(_escape_bare_link, _INLINE.sub(r"\\\1", folded))
    return _BLOCK_START.sub(_escape_block_start, escaped, count=1)


def _escape_bare_link(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\:"
    return match.group(2) + "\\."


def _escape_block_start(match: re.Match[str]) -> str:
    marker = match.group(2)
    if marker[0].isdigit():  # `1.` / `1)`: escape the punctuation after the number
        return match.group(1) + marker[:-1] + "\\" + marker[-1]
    return match.group(1) + "\\" + marker


def md_code(text: object) -> str:
    """`text` as an inline code span that no backtick in it can close early (the fence is one
    backtick longer than its longest run), on one line."""
    body = _LINE_BREAKS.sub(" ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {body} {fence}"
