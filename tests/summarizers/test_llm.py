"""The LLM summariser through the real litellm against the loopback OpenAI-compatible server.

Every branch of the failure policy is driven by what the server answers, so the tests prove how
litellm's real exceptions are classified, not how a mock was told to behave.
"""

from __future__ import annotations

import json
import socket
from datetime import datetime
from typing import Any

import pytest
from llm_server import DEFAULT_SUMMARY, LLMServer

from compaction.errors import ConfigError, SummarizationError, SummarizerUnavailable
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.summarizers.base import StaticSummarizer, SummaryRequest
from compaction.summarizers.extractive import ExtractiveSummarizer
from compaction.summarizers.factory import make_summarizer
from compaction.summarizers.llm import LLMSummarizer
from compaction.summarizers.llm_errors import classify_error, error_message
from compaction.summary import SECTION_NAMES, parse_summary, render_summary
from compaction.text.redact import REDACTED

API_KEY = "test-key"
DETAIL_KEYS = {
    "error_class",
    "message",
    "model",
    "attempts",
    "cooldown_until",
    "cooldown_until_iso",
    "retried_with_main_model",
}

TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "The login test fails; please fix auth/login.py."},
    {
        "role": "assistant",
        "content": "Running the tests first.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "pytest tests/auth"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "FAILED test_login_redirect - 302 != 200",
    },
]


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_request(
    turns: list[dict[str, Any]] | None = None,
    budget: int = 1234,
    previous_summary: str | None = None,
    focus: str | None = None,
) -> SummaryRequest:
    turns = TURNS if turns is None else turns
    serialized = serialize_turns(turns)
    return SummaryRequest(
        turns=turns,
        serialized=serialized,
        budget_tokens=budget,
        prompt=build_prompt(serialized, budget, previous_summary=previous_summary, focus=focus),
        previous_summary=previous_summary,
        focus=focus,
        latest_user_request=str(turns[0]["content"]),
        raw_turns=turns,
    )


def make_llm(server: LLMServer, **kwargs: Any) -> LLMSummarizer:
    kwargs.setdefault("timeout", 10)
    return LLMSummarizer(
        kwargs.pop("model", "openai/main"), api_base=server.base_url, api_key=API_KEY, **kwargs
    )


def failure(llm: LLMSummarizer, request: SummaryRequest | None = None) -> SummarizationError:
    with pytest.raises(SummarizationError) as info:
        llm.summarize(request or make_request())
    assert info.value.details.keys() >= DETAIL_KEYS
    return info.value


# -- success path --------------------------------------------------------------------------------


def test_prompt_sent_has_turns_budget_and_headings(llm_server: LLMServer) -> None:
    llm = make_llm(llm_server, summary_model="openai/summ")
    text = llm.summarize(make_request(budget=1234))

    assert len(llm_server.requests) == 1
    sent = llm_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.model == "summ"  # litellm strips the provider prefix
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.body.get("stream") in (None, False)
    prompt = sent.prompt_text
    assert "[USER]: The login test fails; please fix auth/login.py." in prompt
    assert "FAILED test_login_redirect - 302 != 200" in prompt
    assert "pytest tests/auth" in prompt
    assert "1,234 tokens" in prompt
    for name in SECTION_NAMES:
        assert f"## {name}" in prompt
    # The answer comes back normalised: all 13 sections, in order, missing ones "None."
    assert text == render_summary(parse_summary(DEFAULT_SUMMARY))
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(SECTION_NAMES)
    assert "Fix the failing login test." in text


def test_focus_and_iterative_prompts_reach_the_server(llm_server: LLMServer) -> None:
    llm = make_llm(llm_server)
    llm.summarize(make_request(previous_summary="## Goal\nShip v2.", focus="the auth module"))
    prompt = llm_server.requests[0].prompt_text
    assert "PREVIOUS SUMMARY:\n## Goal\nShip v2." in prompt
    assert "NEW TURNS TO INCORPORATE:" in prompt
    assert "FOCUS TOPIC: the auth module" in prompt


def test_usage_and_details_are_reported(llm_server: LLMServer) -> None:
    llm = make_llm(llm_server, summary_model="openai/summ", temperature=0.2, max_tokens=900)
    llm.summarize(make_request())
    body = llm_server.requests[0].body
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 900
    details = llm.last_details
    assert llm_server.last_usage is not None
    assert details["prompt_tokens"] == llm_server.last_usage["prompt_tokens"]
    assert details["completion_tokens"] == llm_server.last_usage["completion_tokens"]
    assert details["prompt_tokens"] > 100  # the prompt really was the long one
    assert details["model"] == "openai/summ"
    assert details["attempts"] == 1
    assert details["retried_with_main_model"] is False
    assert details["streamed"] is False
    assert details["cost"] is None  # a loopback model has no price in litellm's map
    assert details["cooldown_active"] is False
    assert 0 <= details["duration_s"] < 10
    assert API_KEY not in json.dumps(details, default=str)
    assert API_KEY not in repr(llm)


def test_streaming_delivers_chunks_in_order(llm_server: LLMServer) -> None:
    llm = make_llm(llm_server)
    tokens: list[str] = []
    text = llm.summarize(make_request(), on_token=tokens.append)

    body = llm_server.requests[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert len(llm_server.last_chunks) > 3
    assert tokens == llm_server.last_chunks
    assert "".join(tokens) == DEFAULT_SUMMARY
    assert text == render_summary(parse_summary(DEFAULT_SUMMARY))
    details = llm.last_details
    assert details["streamed"] is True
    assert llm_server.last_usage is not None
    assert details["prompt_tokens"] == llm_server.last_usage["prompt_tokens"]
    assert details["completion_tokens"] == llm_server.last_usage["completion_tokens"]


def test_loosely_formatted_answer_is_normalised(llm_server: LLMServer) -> None:
    llm_server.answer("**Active Task:**\nShip it.\n\n1. Goal\nRelease v2.\n\n### blocked\nCI red.")
    text = make_llm(llm_server).summarize(make_request())
    summary = parse_summary(text)
    assert summary.found_headings == 13
    assert summary.sections["Active Task"] == "Ship it."
    assert summary.sections["Goal"] == "Release v2."
    assert summary.sections["Blocked"] == "CI red."
    assert summary.sections["Key Decisions"] == "None."


# -- redaction -----------------------------------------------------------------------------------

SECRETS = [
    "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "AKIA" + "IOSFODNN7EXAMPLE",
    "xoxb-" + "123456789012-AbCdEfGhIjKlMnOp",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w",
    "hunter2-correct-horse",
    "dbpass123",
]


@pytest.mark.parametrize("stream", [False, True])
def test_no_secret_reaches_the_server(llm_server: LLMServer, stream: bool) -> None:
    turns = [
        {"role": "user", "content": f"Use OPENAI_API_KEY={SECRETS[0]} and push with {SECRETS[1]}"},
        {
            "role": "assistant",
            "content": "Checking the environment.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "bash",
                        "arguments": json.dumps(
                            {"command": f"curl -H 'Authorization: Bearer {SECRETS[4]}' x"}
                        ),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": f'aws_access_key_id={SECRETS[2]}\nSLACK={SECRETS[3]}\n{{"password": '
            f'"{SECRETS[5]}"}}\npostgres://app:{SECRETS[6]}@db:5432/app',
        },
    ]
    llm = make_llm(llm_server)
    llm.summarize(make_request(turns), on_token=(lambda _t: None) if stream else None)
    sent = json.dumps(llm_server.requests[0].body)
    for secret in SECRETS:
        assert secret not in sent
    assert sent.count(REDACTED) >= len(SECRETS)
    assert "postgres://[REDACTED]@db:5432/app" in sent  # the context around stays readable


# -- failure policy ------------------------------------------------------------------------------


def test_missing_summary_model_retries_once_with_main_model(llm_server: LLMServer) -> None:
    llm_server.fail(404, model="summ")
    llm = make_llm(llm_server, summary_model="openai/summ")
    text = llm.summarize(make_request())
    assert [r.model for r in llm_server.requests] == ["summ", "main"]
    assert parse_summary(text).found_headings == 13
    assert llm.last_details["retried_with_main_model"] is True
    assert llm.last_details["attempts"] == 2
    assert llm.last_details["model"] == "openai/main"


def test_missing_model_on_both_is_unavailable_after_exactly_two_requests(
    llm_server: LLMServer,
) -> None:
    llm_server.fail(404)
    llm = make_llm(llm_server, summary_model="openai/summ")
    error = failure(llm)
    assert error.kind == "unavailable"
    assert [r.model for r in llm_server.requests] == ["summ", "main"]
    assert error.details["retried_with_main_model"] is True
    assert error.details["attempts"] == 2
    assert error.details["model"] == "openai/main"
    assert error.details["error_class"] == "NotFoundError"
    assert "does not exist" in str(error.details["message"])
    assert not llm.cooldown_active()


def test_missing_model_without_a_different_main_model_is_not_retried(
    llm_server: LLMServer,
) -> None:
    llm_server.fail(404)
    error = failure(make_llm(llm_server))
    assert error.kind == "unavailable"
    assert len(llm_server.requests) == 1
    assert error.details["retried_with_main_model"] is False


@pytest.mark.parametrize(
    ("status", "error_class"),
    [(429, "RateLimitError"), (500, "InternalServerError"), (503, "ServiceUnavailableError")],
)
def test_transient_errors_start_a_cooldown(
    llm_server: LLMServer, status: int, error_class: str
) -> None:
    clock = FakeClock()
    llm_server.fail(status)
    llm = make_llm(llm_server, clock=clock, cooldown_seconds=60)
    error = failure(llm)
    assert error.kind == "transient"
    assert not isinstance(error, SummarizerUnavailable)
    assert len(llm_server.requests) == 1  # num_retries=0: the SDK did not retry behind our back
    assert error.details["error_class"] == error_class
    assert error.details["status_code"] == status
    assert error.details["cooldown_until"] == 1060.0
    assert llm.cooldown_until == 1060.0
    assert llm.cooldown_active()
    iso = datetime.fromisoformat(str(error.details["cooldown_until_iso"]))
    assert iso.tzinfo is not None


def test_no_request_during_cooldown_and_calls_resume_after(llm_server: LLMServer) -> None:
    clock = FakeClock()
    llm_server.fail(429)
    llm = make_llm(llm_server, clock=clock, cooldown_seconds=60)
    failure(llm)
    llm_server.answer(DEFAULT_SUMMARY)  # the server has recovered; we must not ask yet

    for advance in (0.0, 30.0, 29.9):
        clock.now += advance
        with pytest.raises(SummarizerUnavailable) as info:
            llm.summarize(make_request(), on_token=lambda _t: None)
        assert info.value.kind == "cooldown"
        assert info.value.details.keys() >= DETAIL_KEYS
        assert info.value.details["attempts"] == 0
        assert info.value.details["cooldown_until"] == 1060.0
        assert llm.last_details["cooldown_active"] is True
    assert len(llm_server.requests) == 1  # only the failing call ever reached the server

    clock.now = 1060.0
    assert not llm.cooldown_active()
    text = llm.summarize(make_request())
    assert parse_summary(text).found_headings == 13
    assert len(llm_server.requests) == 2
    assert llm.last_details["cooldown_active"] is False


@pytest.mark.parametrize("stream", [False, True])
def test_timeout_is_transient(llm_server: LLMServer, stream: bool) -> None:
    llm_server.hang(5)
    llm = make_llm(llm_server, timeout=1, clock=FakeClock())
    with pytest.raises(SummarizationError) as info:
        llm.summarize(make_request(), on_token=(lambda _t: None) if stream else None)
    error = info.value
    assert error.kind == "transient"
    assert error.details["error_class"] == "Timeout"
    assert float(error.details["duration_s"]) < 4  # type: ignore[arg-type]
    assert llm.cooldown_active()
    assert len(llm_server.requests) == 1


def test_unreachable_server_is_transient() -> None:
    with socket.socket() as sock:  # a port nobody listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = LLMSummarizer(
        "openai/main", api_base=f"http://127.0.0.1:{port}/v1", api_key=API_KEY, timeout=5
    )
    error = failure(llm)
    assert error.kind == "transient"
    assert llm.cooldown_active()


@pytest.mark.parametrize(
    ("status", "error_class"), [(401, "AuthenticationError"), (400, "BadRequestError")]
)
def test_client_errors_fail_without_cooldown(
    llm_server: LLMServer, status: int, error_class: str
) -> None:
    llm_server.fail(status, message="invalid api key" if status == 401 else "bad parameter")
    llm = make_llm(llm_server, summary_model="openai/summ")
    error = failure(llm)
    assert error.kind == "failed"
    assert error.details["error_class"] == error_class
    assert len(llm_server.requests) == 1  # not retried with the main model
    assert error.details["cooldown_until"] is None
    assert not llm.cooldown_active()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "answer", ["", "   \n", "Sure! The user wanted to fix a test and I summarised it."]
)
def test_useless_answers_fail(llm_server: LLMServer, answer: str, stream: bool) -> None:
    llm_server.answer(answer)
    llm = make_llm(llm_server)
    with pytest.raises(SummarizationError) as info:
        llm.summarize(make_request(), on_token=(lambda _t: None) if stream else None)
    assert info.value.kind == "failed"
    assert info.value.details["error_class"] == "InvalidSummary"
    assert info.value.details["attempts"] == 1
    assert not llm.cooldown_active()


def test_constructor_validates_settings() -> None:
    with pytest.raises(ConfigError, match="model"):
        LLMSummarizer("")
    with pytest.raises(ConfigError, match="fallback"):
        LLMSummarizer("gpt-4o-mini", fallback="magic")
    with pytest.raises(ConfigError, match="timeout"):
        LLMSummarizer("gpt-4o-mini", timeout=0)


# -- factory -------------------------------------------------------------------------------------


def test_factory_builds_each_kind() -> None:
    assert isinstance(make_summarizer("extractive"), ExtractiveSummarizer)
    assert isinstance(make_summarizer("static"), StaticSummarizer)
    llm = make_summarizer(
        "llm",
        model="openai/main",
        summary_model="openai/summ",
        api_base="http://127.0.0.1:9/v1",
        fallback="extractive",
        timeout=7,
    )
    assert isinstance(llm, LLMSummarizer)
    assert (llm.model, llm.summary_model, llm.api_base) == (
        "openai/main",
        "openai/summ",
        "http://127.0.0.1:9/v1",
    )
    assert llm.fallback == "extractive"
    assert llm.timeout == 7


def test_factory_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        make_summarizer("llm")
    with pytest.raises(ConfigError, match="unknown summarizer 'gpt'"):
        make_summarizer("gpt")
    with pytest.raises(ConfigError, match="unknown fallback"):
        make_summarizer("extractive", fallback="none")


@pytest.mark.parametrize("stream", [False, True])
def test_cost_is_litellm_estimate_for_a_priced_model(llm_server: LLMServer, stream: bool) -> None:
    import litellm  # already imported by the summariser; used here only to read the price map

    llm = make_llm(llm_server, model="openai/gpt-4o-mini")
    llm.summarize(make_request(), on_token=(lambda _t: None) if stream else None)
    details = llm.last_details
    price = litellm.get_model_info("gpt-4o-mini")
    expected = (
        details["prompt_tokens"] * price["input_cost_per_token"]
        + details["completion_tokens"] * price["output_cost_per_token"]
    )
    assert details["cost"] == pytest.approx(expected)
    assert details["cost"] > 0


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (TimeoutError("read timed out"), "transient"),
        (ConnectionRefusedError("refused"), "transient"),
        (ValueError("model 'llama9' not found, try pulling it first"), "unavailable"),
        (ValueError("unexpected JSON in response"), "failed"),
    ],
)
def test_errors_outside_http_are_classified(error: Exception, kind: str) -> None:
    assert classify_error(error) == kind


def test_error_messages_in_details_are_redacted_and_bounded() -> None:
    message = error_message(RuntimeError(f"bad key {SECRETS[0]} " + "x" * 2000))
    assert SECRETS[0] not in message
    assert len(message) <= 500


def test_an_error_in_the_token_callback_is_not_a_model_failure(llm_server: LLMServer) -> None:
    def broken(_piece: str) -> None:
        raise KeyError("ui state gone")

    llm = make_llm(llm_server, clock=FakeClock())
    with pytest.raises(KeyError, match="ui state gone"):
        llm.summarize(make_request(), on_token=broken)
    assert not llm.cooldown_active()


def test_a_missing_key_is_a_failure_not_a_transient_error() -> None:
    # The OpenAI SDK reports a missing key as a 500-class error; a cooldown cannot fix it.
    class InternalServerError(Exception):
        status_code = 500

    error = InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`")
    assert classify_error(error) == "failed"


def test_a_local_server_needs_no_key(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    summarizer = LLMSummarizer("openai/local", api_base=llm_server.base_url, timeout=10)
    assert "## Active Task" in summarizer.summarize(make_request())
    assert len(llm_server.requests) == 1
