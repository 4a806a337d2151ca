"""Untrusted text is shown as text: a conversation whose title, messages, tool names and summary
hold Markdown images, links and LaTeX renders none of them (issue 20 item 11).

AppTest holds each element's Markdown source, so the assertions are on that source: the
payloads appear only in escaped form (or in plain-text elements: st.text, st.code, dataframes).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas  # noqa: F401  (see below)
from app_helpers import ROOT, click, open_app
from streamlit.testing.v1 import AppTest

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.formats.conversation import Conversation
from compaction.formats.titles import readable_title
from compaction.history import History
from compaction.ui.untrusted import md_code, md_escape

# pandas is imported here, before any page runs: the loader's warm-up thread imports it in the
# background (loader._warm_up), and an AppTest run that reaches pandas while that import is
# half done fails with "partially initialized module 'pandas'".

HOST = "127.0.0.1:9"
IMAGE = f"![p](http://{HOST}/t.png)"
LINK = f"[docs](http://{HOST}/look-alike)"
LATEX = "$x^2 + \\frac{1}{2}$"
HTML = f'<img src="http://{HOST}/h.png">'
TOOL = "fetch"
CALL_ID = f"call_{IMAGE}"
WINDOW = "8000"  # tokens: the conversation (~4,000) is then over the threshold


def hostile_conversation(rounds: int = 8) -> list[dict[str, Any]]:
    """A session full of Markdown: the first user message (the title), prose, tool calls and
    results, long enough that the middle is summarised (the summary quotes it)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"You are a coding agent. {LINK}"},
        {"role": "user", "content": f"Fix {IMAGE} and {LINK} where {LATEX} {HTML}"},
    ]
    for turn in range(rounds):
        call_id = CALL_ID if turn == 0 else f"call_{turn}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {turn}: reading {IMAGE} per {LINK}. " + "detail " * 60,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": TOOL,
                            "arguments": json.dumps({"url": f"http://{HOST}/{turn}.png"}),
                        },
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": f"Error: {IMAGE} failed {LATEX}\n" + "output line\n" * 80,
            }
        )
        messages.append({"role": "user", "content": f"Also {LINK} and {IMAGE} ({LATEX})."})
    messages.append({"role": "user", "content": f"Finally: fix {IMAGE} now {LATEX}."})
    return messages


# Unescaped forms that would render: an image or link (`![`/`[…](`), a bare URL (GFM autolinks
# `http://…`), LaTeX between dollars, an HTML tag.
_RENDERS = [
    re.compile(r"(?<!\\)!(?<!\\)\[(?<!\\)"),
    re.compile(r"(?<!\\)\]\("),
    re.compile(r"(?<![\\`])http://"),
    re.compile(r"(?<!\\)\$x"),
    re.compile(r"(?<!\\)<img"),
]


# The loader's panel (compaction/ui/loader.py) labels its expander with the raw title: checked
# apart, in test_loader_label_shows_the_title_as_text.
LOADER_LABEL = "Loaded: "


def markdown_sources(at: AppTest, loader: bool = False) -> list[str]:
    """The Markdown source of every element that Streamlit renders as Markdown."""
    sources: list[str] = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "subheader"):
        sources += [str(element.value) for element in getattr(at, kind)]
    sources += [
        str(element.label)
        for element in at.expander
        if loader or not str(element.label).startswith(LOADER_LABEL)
    ]
    sources += [str(element.label) for element in at.metric]
    sources += [str(element.label) for element in at.tabs]
    sources += [str(getattr(element, "label", "")) for element in at.button]
    return sources


def assert_no_markdown_payload(at: AppTest, loader: bool = False) -> list[str]:
    """No Markdown element carries a payload that would render; returns those that hold one
    (escaped), so a test can check that the untrusted text was shown at all."""
    holding = []
    for source in markdown_sources(at, loader):
        if HOST not in source and "x^2" not in source:
            continue
        holding.append(source)
        code_spans = re.sub(r"(`+) .*? \1", "", source)  # md_code's spans are literal
        for pattern in _RENDERS:
            assert not pattern.search(code_spans), (pattern.pattern, source)
    return holding


def load_hostile(at: AppTest) -> AppTest:
    payload = json.dumps(hostile_conversation()).encode()
    at.file_uploader(key="load_upload").set_value(("hostile.json", payload, "application/json"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_md_escape_leaves_no_markdown() -> None:
    assert md_escape(IMAGE) == "!\\[p\\](http\\://127.0.0.1:9/t.png)"
    assert md_escape(LATEX) == "\\$x^2 + \\\\frac{1}{2}\\$"
    assert md_escape(HTML) == '\\<img src="http\\://127.0.0.1:9/h.png"\\>'
    assert md_escape("# heading\n- item\n> quote") == "\\# heading - item \\> quote"
    assert md_escape("1. first") == "1\\. first"
    assert md_escape("**bold** _it_ ~~s~~ `c` :red[x] a|b") == (
        "\\*\\*bold\\*\\* \\_it\\_ \\~\\~s\\~\\~ \\`c\\` :red\\[x\\] a\\|b"
    )
    assert md_escape("www.example.com bob@example.com") == "www\\.example.com bob\\@example.com"
    plain = "Fix the failing login test (auth/login.py): 3 of 12 pass."
    assert md_escape(plain) == plain  # ordinary prose is unchanged
    assert md_code("a `b` c") == "`` a `b` c ``"
    assert md_code("x\ny") == "` x y `"


def test_inspect_shows_the_hostile_conversation_as_text() -> None:
    at = load_hostile(open_app(p_context_length=WINDOW))
    holding = assert_no_markdown_payload(at)
    # The title loses the Markdown at import (formats/titles.py) and what is left is escaped.
    title = readable_title(f"Fix {IMAGE} and {LINK} where {LATEX} {HTML}")
    assert title is not None and IMAGE not in title
    assert any(md_escape(title) in source for source in holding)

    # The tool call and its result, opened in the detail pane: call id and tool name captions.
    at.session_state["inspect_open"] = 2
    at.run()
    holding = assert_no_markdown_payload(at)
    assert any(md_code(CALL_ID) in source for source in holding)
    at.session_state["inspect_open"] = 3
    at.run()
    assert any(md_code(CALL_ID) in source for source in assert_no_markdown_payload(at))

    # Every phase's view after Run all (a small window, so the middle really is summarised).
    click(at, "step_all")
    assert "Before → after" in [str(element.value) for element in at.subheader]
    assert not [w for w in at.warning if "skipped" in str(w.value)]
    for view in range(0, 7):  # the Result view (0), then each phase
        at.session_state["phase_view"] = view
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert_no_markdown_payload(at)
    # The summary quotes the conversation; its cards show it as plain text.
    assert any(IMAGE in str(element.value) for element in at.text) or any(
        IMAGE in str(element.value) for element in at.code
    )


def test_compare_shows_stored_titles_and_labels_as_text() -> None:
    messages = hostile_conversation()
    conversation = Conversation(messages=messages, format="openai", title=f"Fix {IMAGE} {LATEX}")
    with History() as history:
        ids = [
            history.record(
                conversation,
                Compactor(CompactionConfig(tail_token_ratio=ratio)).compress(messages, force=True),
                label=f"label {LINK} {LATEX}",
            )
            for ratio in (0.2, 0.4)
        ]
    at = open_app(ROOT / "app_pages" / "compare.py", compare_a=str(ids[0]), compare_b=str(ids[1]))
    holding = assert_no_markdown_payload(at)
    assert any(md_escape(f"Fix {IMAGE}") in source for source in holding)
    assert any(md_escape(f"label {LINK}") in source for source in holding)


def test_loader_label_shows_the_title_as_text() -> None:
    at = load_hostile(open_app())
    assert_no_markdown_payload(at, loader=True)


def test_viewer_views_show_the_hostile_conversation_as_text() -> None:
    """The tool-call pairs, the find box, the composition and the side-by-side transcript (issue
    17): the tool name, call id, outputs and messages appear escaped or in plain-text elements."""
    at = load_hostile(open_app(p_context_length=WINDOW))
    at.text_input(key="find_query").input("Fix")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert_no_markdown_payload(at)
    at.session_state["overview_tabs"] = "Tool calls"
    at.session_state["tool_pair_open"] = 0  # the call whose id and output carry the payloads
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    holding = assert_no_markdown_payload(at)
    assert any(md_code(TOOL) in source for source in markdown_sources(at))  # the pair's heading
    assert any(md_code(CALL_ID) in source for source in holding)  # the pair's call id caption
    click(at, "step_all")
    at.session_state["final_tabs"] = "Side by side"
    at.run()
    holding = assert_no_markdown_payload(at)
    # The side-by-side rows: conversation text in st.text, labels escaped.
    texts = [str(element.value) for element in at.text]
    assert any(IMAGE in text for text in texts)
    labels = [
        str(b.label) for b in at.button if str(getattr(b, "key", "")).startswith("side_by_side")
    ]
    assert labels and all(HOST not in label for label in labels)
    # A row's diff opens as a code block (plain text) with the payload inside.
    summary = next(
        str(b.key)
        for b in at.button
        if str(b.key).startswith("side_by_side_right_") and "summarised span" in str(b.label)
    )
    click(at, summary)
    assert any(IMAGE in str(code.value) for code in at.code if "+++ compacted" in str(code.value))
    assert_no_markdown_payload(at)
