"""Summary cards show each section item once, as plain text, however its text begins."""

from __future__ import annotations

from compaction.ui.summary_view import section_lines


def test_quoted_list_items_get_one_bullet_not_two() -> None:
    body = "- - never modify the migrations\n- use `pytest -x`\n\n  continued\n-\n1. ran tests"
    assert section_lines(body) == [
        "• never modify the migrations",
        "• use `pytest -x`",
        "continued",
        "1. ran tests",
    ]


def test_html_in_a_section_is_kept_verbatim_for_plain_text_display() -> None:
    assert section_lines("- show <script>alert(1)</script> as text") == [
        "• show <script>alert(1)</script> as text"
    ]
