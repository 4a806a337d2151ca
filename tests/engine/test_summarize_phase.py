"""Phase 3: serialisation (with the 4,000 + 1,500 cut), the first-time and iterative prompts,
the focus block, previous-summary detection, and the fallbacks."""

from __future__ import annotations

from typing import Any

from engine_helpers import assistant, call, calls, system, tool, user

from compaction.config import CompactionConfig
from compaction.errors import SummarizationError
from compaction.phases.summarize import summarize_phase
from compaction.phases.summary_prompt import (
    TRUNCATION_MARK,
    build_prompt,
    cut_content,
    serialize_turns,
)
from compaction.result import Fate
from compaction.summarizers.base import OnToken, StaticSummarizer, SummaryRequest
from compaction.summary import SECTION_NAMES, SUMMARY_PREFIX, render_summary, static_marker

CONFIG = CompactionConfig(context_length=1_000)


class Recording:
    """A real summariser that returns a fixed 13-section summary and keeps the request."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        self.requests.append(request)
        return render_summary({"Goal": "recorded goal"})


class Failing:
    name = "failing"

    def __init__(self, fallback: str = "static") -> None:
        self.fallback = fallback

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        raise SummarizationError("the model is down", kind="transient", details={"status": 503})


class Prose:
    name = "prose"

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        return "I could not follow the format."


def test_cut_content_at_6000() -> None:
    assert TRUNCATION_MARK == "\n...[truncated]...\n"
    exact = "a" * 6_000
    assert cut_content(exact) == exact
    text = "h" * 4_000 + "m" * 1_001 + "t" * 1_500
    assert cut_content(text) == "h" * 4_000 + "\n...[truncated]...\n" + "t" * 1_500


def test_serialize_turns_blocks() -> None:
    messages = [
        user("please list files"),
        calls(
            call("c1", "terminal", {"command": "ls"}),
            call("c2", "read_file", {"path": "a"}),
            text="Listing.",
        ),
        tool("c1", "a.py\nb.py"),
        assistant("Two files."),
    ]
    assert serialize_turns(messages) == (
        "[USER]: please list files\n\n"
        "[ASSISTANT]: Listing.\n"
        '[Tool calls: terminal({"command": "ls"}), read_file({"path": "a"})]\n\n'
        "[TOOL RESULT c1]: a.py\nb.py\n\n"
        "[ASSISTANT]: Two files."
    )
    long = "x" * 7_000
    assert serialize_turns([user(long)]) == "[USER]: " + cut_content(long)


def test_first_time_prompt() -> None:
    prompt = build_prompt("[USER]: hi", 2_000)
    assert "Create a structured summary" in prompt
    assert "at most 2,000 tokens" in prompt
    headings = "\n".join(f"## {name}" for name in SECTION_NAMES)
    assert headings in prompt
    assert "verbatim" in prompt
    assert prompt.endswith("TURNS TO SUMMARIZE:\n[USER]: hi")
    assert "PREVIOUS SUMMARY:" not in prompt
    assert "FOCUS TOPIC" not in prompt


def test_iterative_prompt() -> None:
    prompt = build_prompt("[USER]: more", 3_500, previous_summary="## Goal\nold")
    assert "PREVIOUS SUMMARY:\n## Goal\nold\n\nNEW TURNS TO INCORPORATE:\n[USER]: more" in prompt
    for rule in (
        "Keep all existing information that is still relevant.",
        "continuing the numbering",
        "Move In Progress items that are now finished to Completed Actions.",
        "Move questions that have been answered to Resolved Questions.",
        "Update Active State",
        "Remove only information that is clearly obsolete.",
    ):
        assert rule in prompt
    assert "at most 3,500 tokens" in prompt


def test_focus_block() -> None:
    prompt = build_prompt("[USER]: hi", 2_000, focus="the auth module refactor")
    assert "\n\nFOCUS TOPIC: the auth module refactor\n" in prompt
    assert "60–70% of the token budget" in prompt


def conversation() -> list[dict[str, Any]]:
    return [
        system(),
        user("first request"),
        assistant("ok"),
        user("middle question"),
        calls(call("c1", "terminal", {"command": "make"})),
        tool("c1", "built"),
        assistant("middle answer"),
        user("latest request"),
        assistant("working"),
    ]


def test_phase_builds_the_request_and_fates() -> None:
    messages = conversation()
    summarizer = Recording()
    phase, outcome, taken_out = summarize_phase(
        messages, messages, 3, 7, 1_000, CONFIG, summarizer, focus="make"
    )
    request = summarizer.requests[0]
    assert request.turns == messages[3:7]
    assert request.raw_turns == messages[3:7]
    assert request.serialized == serialize_turns(messages[3:7], [3, 4, 5, 6])
    assert request.budget_tokens == 2_000
    assert request.latest_user_request == "latest request"
    assert request.first_user_request == "first request"
    assert request.focus == "make"
    latest = (request.latest_user_index, "latest request")
    assert request.prompt == build_prompt(request.serialized, 2_000, None, "make", latest)
    assert "THE USER'S LATEST REQUEST" in request.prompt  # in the tail: the model is shown it
    assert not request.iterative
    assert taken_out == set()
    assert phase.fates == {
        3: Fate.FOLDED_INTO_SUMMARY,
        4: Fate.FOLDED_INTO_SUMMARY,
        5: Fate.FOLDED_INTO_SUMMARY,
        6: Fate.FOLDED_INTO_SUMMARY,
    }
    assert outcome.fallback_used is None
    assert outcome.summary is not None and outcome.summary.sections["Goal"] == "recorded goal"
    assert phase.details["turns"] == 4
    assert phase.details["iterative"] is False


def test_previous_summary_is_taken_out_and_makes_the_update_iterative() -> None:
    messages = conversation()
    old = f"{SUMMARY_PREFIX}\n## Goal\nearlier goal"
    messages.insert(3, {"role": "user", "content": old})
    summarizer = Recording()
    phase, _, taken_out = summarize_phase(messages, messages, 3, 8, 1_000, CONFIG, summarizer)
    request = summarizer.requests[0]
    assert taken_out == {3}
    assert request.previous_summary == "## Goal\nearlier goal"
    assert request.iterative
    assert "PREVIOUS SUMMARY:\n## Goal\nearlier goal" in request.prompt
    assert "NEW TURNS TO INCORPORATE:" in request.prompt
    assert old not in request.serialized
    assert phase.fates[3] == Fate.PREVIOUS_SUMMARY_REPLACED
    assert phase.details["previous_summary_indices"] == [3]


def test_failure_falls_back_to_the_static_marker() -> None:
    messages = conversation()
    phase, outcome, _ = summarize_phase(messages, messages, 3, 7, 1_000, CONFIG, Failing())
    assert outcome.text == static_marker(4)
    assert outcome.summary is None
    assert outcome.fallback_used == "static"
    assert outcome.fallback_reason == "transient: the model is down"
    assert phase.details["error"] == {
        "kind": "transient",
        "message": "the model is down",
        "status": 503,
        "error_class": "SummarizationError",
    }


def test_failure_falls_back_to_extractive_when_asked() -> None:
    messages = conversation()
    _, outcome, _ = summarize_phase(
        messages,
        messages,
        3,
        7,
        1_000,
        CONFIG,
        Failing("extractive"),
        fallback_summarizer=Recording(),
    )
    assert outcome.fallback_used == "extractive"
    assert outcome.summary is not None and outcome.summary.sections["Goal"] == "recorded goal"


def test_a_summary_without_headings_becomes_the_static_marker() -> None:
    messages = conversation()
    _, outcome, _ = summarize_phase(messages, messages, 3, 7, 1_000, CONFIG, Prose())
    assert outcome.text == static_marker(4)
    assert outcome.fallback_reason == "failed: the summary had none of the 13 section headings"


def test_static_summarizer_is_not_a_fallback() -> None:
    messages = conversation()
    _, outcome, _ = summarize_phase(messages, messages, 3, 7, 1_000, CONFIG, StaticSummarizer())
    assert outcome.text == static_marker(4)
    assert outcome.fallback_used is None
