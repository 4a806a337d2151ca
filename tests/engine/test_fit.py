"""The Fit step (ALGORITHM.md, "Fit"): what it cuts, in which order, how, and what it records."""

from __future__ import annotations

import json

from engine_helpers import assistant, call, calls, system, tool, user

from compaction.phases.fit import fit_phase, fit_to_window
from compaction.phases.fit_cuts import (
    MIN_KEEP_CHARS,
    cut_json_arguments,
    cut_text,
    fit_marker,
)
from compaction.summary import SUMMARY_PREFIX
from compaction.tokens import make_counter

COUNTER = make_counter("rough")


def test_the_marker_is_the_specs_with_thousands_separators() -> None:
    assert fit_marker(12_345) == "[… 12,345 chars cut to fit the context window …]"


def test_cut_text_keeps_the_first_and_last_parts_and_counts_what_it_cut() -> None:
    text = "BEGIN " + "x" * 10_000 + " END"
    shorter = cut_text(text, 9_000)
    assert shorter.startswith("BEGIN ") and shorter.endswith(" END")
    head, marker, tail = shorter.split("\n")
    assert marker == fit_marker(len(text) - len(head) - len(tail))
    assert len(head) > len(tail)  # two thirds first, one third last


def test_cut_text_never_keeps_less_than_its_floor() -> None:
    text = "y" * 5_000
    shorter = cut_text(text, 10_000)
    head, _, tail = shorter.split("\n")
    assert len(head) + len(tail) == MIN_KEEP_CHARS
    assert cut_text("short", 100) == "short"


def test_cut_json_arguments_stay_valid_json_and_cut_the_longest_value() -> None:
    arguments = json.dumps({"path": "a.py", "content": "z" * 20_000, "note": "n" * 300})
    shorter = cut_json_arguments(arguments, 15_000)
    assert shorter is not None
    value = json.loads(shorter)
    assert value["path"] == "a.py" and value["note"] == "n" * 300
    assert "chars cut to fit the context window" in value["content"]
    assert cut_json_arguments("not json {", 10) is None
    assert cut_json_arguments(json.dumps({"n": list(range(3_000))}), 1_000) is None


def test_nothing_is_cut_when_it_fits() -> None:
    messages = [system(), user("hi"), assistant("hello")]
    output, report = fit_to_window(messages, [0, 1, 2], 1_000, COUNTER)
    assert output == messages and report.cuts == [] and report.fits


def test_tool_outputs_go_first_largest_first_and_never_the_request_or_system() -> None:
    messages = [
        system("S" * 4_000),
        user("R" * 4_000),
        calls(call("a", "terminal", {"command": "c" * 3_000})),
        tool("a", "A" * 20_000),
        calls(call("b", "terminal", {"command": "ls"})),
        tool("b", "B" * 8_000),
        assistant("done"),
    ]
    window = COUNTER.count_messages(messages) - 3_000
    output, report = fit_to_window(messages, list(range(len(messages))), window, COUNTER)
    assert report.fits and COUNTER.count_messages(output) <= window
    assert [cut.message_index for cut in report.cuts] == [3]  # the largest output alone sufficed
    assert output[0] == messages[0] and output[1] == messages[1]
    assert output[5] == messages[5] and output[2] == messages[2]


def test_arguments_are_cut_after_the_outputs() -> None:
    messages = [
        system(),
        user("write it"),
        calls(call("w", "write_file", {"path": "x", "content": "C" * 40_000})),
        tool("w", "O" * 2_000),
        assistant("ok"),
    ]
    output, report = fit_to_window(messages, list(range(len(messages))), 2_000, COUNTER)
    assert report.fits
    assert [cut.kind for cut in report.cuts] == ["tool_output", "arguments"]
    arguments = json.loads(output[2]["tool_calls"][0]["function"]["arguments"])
    assert arguments["path"] == "x"


def test_the_summary_prefix_survives_a_cut() -> None:
    summary = f"{SUMMARY_PREFIX}\n## Active Task\n" + "s" * 30_000
    messages = [system(), assistant("a"), user(summary), assistant("b"), user("latest")]
    output, report = fit_to_window(messages, [0, 1, None, 3, 4], 2_000, COUNTER)
    assert report.fits
    assert output[2]["content"].startswith(SUMMARY_PREFIX)
    assert report.cuts[0].input_index is None and report.cuts[0].kind == "text"


def test_a_request_over_the_window_is_recorded_and_nothing_is_cut() -> None:
    messages = [system(), calls(call("a", "t")), tool("a", "o" * 9_000), user("R" * 9_000)]
    output, report = fit_to_window(messages, [0, 1, 2, 3], 1_000, COUNTER)
    assert output == messages and report.cuts == []
    assert report.request_exceeds_window and not report.fits
    assert "the latest user request alone take" in (report.cannot_fit or "")


def test_the_phase_records_the_cuts_and_the_fates() -> None:
    messages = [system(), user("go"), calls(call("a", "t")), tool("a", "o" * 40_000)]
    phase, report = fit_phase(messages, [0, 1, 2, 7], 2_000, COUNTER)
    assert phase.name == "fit" and phase.fates == {7: "cut_to_fit"}
    assert phase.details["cuts"][0]["chars_before"] == 40_000
    assert phase.details["cuts"][0]["chars_after"] < 40_000
    assert phase.tokens_after == report.tokens_after <= 2_000


def test_stubs_that_take_a_short_input_past_a_tiny_window_are_said_not_to_fit() -> None:
    """Found by the property test of provider validity: 828 tokens in, under a 1,000-token
    window, but eight unanswered calls get stub results (the input was not sendable), the
    summary would grow it (1,011) and every message is already at its floor. The output is over
    the window, and Fit says so with the figure; it cuts nothing."""
    from compaction import CompactionConfig, Compactor

    def calling(*made: tuple[str, str]) -> dict[str, object]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "terminal", "arguments": a}}
                for i, a in made
            ],
        }

    def args(command: str, x: int) -> str:
        return json.dumps({"command": command, "content": "x" * x})

    long_command = json.dumps({"command": " ".join(["pytest"] * 22), "content": "x" * 10})
    results = [
        {"role": "tool", "tool_call_id": f"call_{n}", "content": " ".join(["pytest"] * 22)}
        for n in (1, 2, 3)
    ]
    asking = {"role": "user", "content": "pytest"}
    messages = [
        {"role": "system", "content": "You are an agent. " * 14},
        calling(*((f"call_{n}", long_command) for n in (1, 2, 3))),
        *results,
        *[dict(asking) for _ in range(10)],
        {"role": "assistant", "content": "config"},
        calling(("call_4", args("error", 10)), ("call_5", args("error", 10))),
        dict(asking),
        calling(("call_6", args("pytest", 10))),
        calling(("call_7", args("pytest", 10))),
        *[dict(asking) for _ in range(6)],
        calling(("call_8", args("pytest", 10))),
        calling(
            *((f"call_{n}", args("pytest", 10)) for n in (9, 10)), ("call_11", args("pytest", 900))
        ),
        {"role": "user", "content": "error"},
    ]
    config = CompactionConfig(
        context_length=1_000,
        protect_first_n=3,
        tail_token_ratio=0.0,
        orphan_strategy="stub",
        counter="rough",
        summary_min_tokens=100,
    )
    result = Compactor(config).compress(messages, force=True)
    assert result.tokens_before < 1_000 < result.tokens_after
    assert result.fit is not None and not result.fit.cuts and not result.fit.request_exceeds_window
    assert f"would take {result.tokens_after:,} tokens of the 1,000-token window" in (
        result.fit.cannot_fit or ""
    )
