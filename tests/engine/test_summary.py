"""The summary's exact strings (prefix, system note, static marker) and parse/render of the 13
sections."""

from __future__ import annotations

from compaction.summary import (
    SECTION_NAMES,
    SUMMARY_PREFIX,
    SYSTEM_NOTE,
    Summary,
    parse_summary,
    render_summary,
    static_marker,
    summary_message_body,
)


def test_summary_prefix_is_exact() -> None:
    assert SUMMARY_PREFIX == (
        "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary "
        "below. This is a handoff from a previous context window — treat it as background "
        "reference, NOT as active instructions. Do NOT answer questions or fulfill requests "
        "mentioned in this summary; they were already addressed. Your current task is identified "
        "in the '## Active Task' section — resume exactly from there. Respond ONLY to the latest "
        "user message that appears AFTER this summary."
    )


def test_system_note_is_exact() -> None:
    assert SYSTEM_NOTE == (
        "[Note: Some earlier conversation turns have been compacted into a handoff summary to "
        "preserve context space. The current session state may still reflect earlier work, so "
        "build on that summary and state rather than re-doing work.]"
    )


def test_static_marker_carries_the_real_count() -> None:
    assert static_marker(42) == (
        "[CONTEXT COMPACTION] 42 conversation turns were removed to free context space but "
        "could not be summarized."
    )
    assert static_marker(7).startswith("[CONTEXT COMPACTION] 7 conversation turns")


def test_thirteen_sections_in_order() -> None:
    assert SECTION_NAMES == (
        "Active Task",
        "Goal",
        "Constraints & Preferences",
        "Completed Actions",
        "Active State",
        "In Progress",
        "Blocked",
        "Key Decisions",
        "Resolved Questions",
        "Pending User Asks",
        "Relevant Files",
        "Remaining Work",
        "Critical Context",
    )


def test_render_fills_missing_sections_with_none() -> None:
    text = render_summary({"Goal": "Ship it", "Blocked": "  "})
    assert text.startswith("## Active Task\nNone.\n\n## Goal\nShip it\n\n## Constraints")
    assert text.count("## ") == 13
    assert text.endswith("## Critical Context\nNone.")
    assert Summary({"Goal": "x"}).text == render_summary({"Goal": "x"})


def test_parse_round_trips_a_rendered_summary() -> None:
    sections = {name: f"body of {name}\n- item" for name in SECTION_NAMES}
    parsed = parse_summary(render_summary(sections))
    assert parsed.found_headings == 13
    assert parsed.sections == sections
    assert list(parsed.sections) == list(SECTION_NAMES)


def test_parse_is_forgiving_about_heading_style() -> None:
    text = (
        "Preamble the model wrote.\n"
        "1. **Active Task**\nFix the login bug\n"
        "### goal:\nUsers can log in\n"
        "**Next Steps**\nRun the tests\n"
    )
    parsed = parse_summary(text)
    assert parsed.found_headings == 3
    assert parsed.sections["Active Task"] == "Fix the login bug"
    assert parsed.sections["Goal"] == "Users can log in"
    assert parsed.sections["Remaining Work"] == "Run the tests"
    assert parsed.sections["Critical Context"] == "Preamble the model wrote."
    assert parsed.is_empty("Blocked")
    assert not parsed.is_empty("Goal")


def test_text_without_headings_is_not_a_summary() -> None:
    assert parse_summary("just some prose, no headings").found_headings == 0


def test_summary_message_body() -> None:
    assert summary_message_body(f"{SUMMARY_PREFIX}\n## Goal\nx") == "## Goal\nx"
    assert summary_message_body("## Goal\nx") is None
