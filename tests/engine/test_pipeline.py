"""The phase contract (every phase: state in, its own result out), compress as a loop over the
phases, and the two edge cases a real agent loop hits: a request over the window on its own, and
a window that cannot fit for another reason (the text names what fills it)."""

from __future__ import annotations

import inspect

from engine_helpers import assistant, call, calls, coding_session, system, tool, user

from compaction import CompactionConfig, Compactor, compress
from compaction.messages import Message
from compaction.phases import pipeline
from compaction.phases.fit import fit_to_window
from compaction.phases.pipeline import PHASES, CompactionState, Phase, run_phases
from compaction.result import PhaseResult
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.tokens import IMAGE_TOKENS, make_counter

ROUGH = make_counter("rough")


def _state(messages: list[Message], config: CompactionConfig) -> CompactionState:
    counter = make_counter(config.counter, config.model)
    return CompactionState(
        checked=messages,
        input_tokens=[counter.count_message(m) for m in messages],
        marks={},
        config=config,
        counter=counter,
        summarizer=ExtractiveSummarizer(),
        fallback_summarizer=ExtractiveSummarizer(),
    )


def test_every_phase_implements_the_protocol() -> None:
    classes = [
        value
        for value in vars(pipeline).values()
        if inspect.isclass(value) and value.__module__ == pipeline.__name__
        if callable(getattr(value, "run", None)) and value is not Phase
    ]
    assert {type(phase) for phase in PHASES} == set(classes)
    for phase in PHASES:
        assert isinstance(phase, Phase)
        assert list(inspect.signature(phase.run).parameters) == ["state"]
    assert [phase.name for phase in PHASES] == [
        "prune",
        "boundaries",
        "summarize",
        "assemble",
        "cleanup",
        "fit",
    ]


def test_each_phase_reports_its_own_tokens_and_timing_and_chains_to_the_next() -> None:
    messages = coding_session(turns=12)
    config = CompactionConfig(context_length=8_000)
    state = _state(messages, config)
    tokens = state.tokens_before
    for phase in PHASES:
        result = phase.run(state)
        assert isinstance(result, PhaseResult) and result.name == phase.name
        assert result.tokens_before == tokens, phase.name  # where the previous one left it
        assert result.tokens_after == state.tokens
        assert result.duration_s > 0
        assert state.messages is result.messages
        tokens = state.tokens
        state.results.append(result)
    assert state.fit is not None and state.outcome is not None
    # compress() is exactly this loop behind the door.
    same = compress(messages, config)
    assert same.messages == state.messages
    assert [p.name for p in same.phases] == [r.name for r in state.results]


def test_an_empty_middle_skips_the_summary_phases_and_ends_as_skipped() -> None:
    messages = [system(), user("hi"), assistant("hello"), user("what next?")]
    state = run_phases(_state(messages, CompactionConfig(context_length=100_000)))
    assert [r.name for r in state.results] == ["prune", "boundaries", "cleanup"]
    assert state.skip_reason is not None and state.fit is None
    result = compress(messages, CompactionConfig(context_length=100_000))
    assert result.skipped and result.skip_reason == state.skip_reason


def test_a_request_over_the_window_is_reported_once_then_skipped() -> None:
    """Before: three calls, each the whole pipeline at 0% savings (40,052 → 40,052 tokens) and
    none skipped, because over the window anti-thrash always yields. The request cannot fit
    until it changes; the first compaction says so and counts as ineffective, and automatic
    compaction then skips with the reason, until the user sends another request."""
    request = "Explain this log:\n" + "log line\n" * 6_000
    messages = [system(), user("hi"), assistant("hello"), user("x " * 400), assistant("ok")]
    messages += [user(request), assistant("Reading.")]
    config = CompactionConfig(context_length=2_000, counter="rough")
    compactor = Compactor(config)
    assert compactor.should_compress(messages)
    first = compactor.compress(messages)
    assert not first.skipped and first.fit is not None and first.fit.request_exceeds_window
    assert first.suggestion is not None  # a new session, or a shorter request
    assert compactor.ineffective_count >= config.max_ineffective
    # The agent goes on with the same request: nothing to gain, nothing re-run.
    going_on = [*first.messages, assistant("Still reading.")]
    assert not compactor.should_compress(going_on)
    second = compactor.compress(going_on)
    assert second.skipped and "latest user request alone is over the window" in (
        second.skip_reason or ""
    )
    assert second.phases == []
    # A manual compaction still runs; a new request is compacted again.
    assert not compactor.compress(going_on, force=True).skipped
    shorter = [*going_on, user("Never mind: summarise the first ten lines only.")]
    assert compactor.should_compress(shorter)
    assert not compactor.compress(shorter).skipped


def test_the_request_over_the_window_names_what_fills_it() -> None:
    prompt = "You are a coding agent. " * 700
    messages = [system(prompt), user("hi"), assistant("hello"), user("Fix it. " * 300)]
    _, report = fit_to_window(messages, [0, 1, 2, 3], 1_000, ROUGH)
    text = report.cannot_fit or ""
    system_tokens = ROUGH.count_message(messages[0])
    request_tokens = ROUGH.count_message(messages[3])
    assert f"system prompt {system_tokens:,} tokens" in text
    assert f"latest request {request_tokens:,} tokens" in text
    assert "images" not in text


def test_a_window_filled_by_the_system_prompt_and_images_says_so() -> None:
    """Before: "images and the per-message overhead cannot be cut" whatever filled the window,
    when a 15K-token system prompt was what filled a 16K one."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    prompt = "Rules of the house. " * 2_400
    messages: list[Message] = [system(prompt)]
    for n in range(3):
        messages += [
            {"role": "user", "content": [{"type": "text", "text": f"screen {n}"}, image]},
            assistant(f"seen {n}"),
        ]
    messages += [calls(call("r", "read")), tool("r", "o" * 400), user("and now?")]
    system_tokens = ROUGH.count_message(messages[0])
    window = system_tokens + 2 * IMAGE_TOKENS  # the three images cannot all fit beside it
    output, report = fit_to_window(messages, list(range(len(messages))), window, ROUGH)
    text = report.cannot_fit or ""
    assert not report.fits and not report.request_exceeds_window and output == messages
    assert f"system prompt {system_tokens:,} tokens" in text
    assert f"3 image(s) elsewhere {3 * IMAGE_TOKENS:,} tokens" in text
    assert "other message(s) at their floor" in text
