"""The LLM summariser: the 13-section summary written by any model litellm can reach.

Why it owns a failure policy instead of relying on litellm's retries: a compaction must finish
even when the model does not. So retries are ours and deliberately few (ALGORITHM.md Phase 3):
- the summary model is unavailable (404, "model not found") and differs from the main model →
  one retry with the main model;
- a transient failure (timeout, 429, connection error, 5xx) → a cooldown (60 s by default) during
  which no call is made at all, so an agent loop does not hammer a struggling provider;
- anything else (401, 400, an empty answer, an answer with none of the 13 headings) → failure.
The summariser only raises `SummarizationError`; the Compactor applies the fallback.

The prompt is redacted before it leaves the machine. litellm is imported lazily (it costs seconds
and hundreds of MB) with the bundled cost map, so the import never touches the network.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from compaction.errors import ConfigError, SummarizationError, SummarizerUnavailable
from compaction.litellm_loader import load_litellm
from compaction.summarizers.base import OnToken, SummaryRequest
from compaction.summarizers.llm_errors import classify_error, error_message
from compaction.summary import parse_summary, render_summary
from compaction.text.redact import redact

SYSTEM_PROMPT = (
    "You write handoff summaries of agent conversations. Answer with the summary only, using "
    "exactly the markdown headings the user message asks for."
)

FALLBACKS = ("static", "extractive")


class _CallbackError(Exception):
    """Carries an exception raised by the caller's on_token out of the classification: a bug in
    the UI callback must surface as itself, not be mistaken for a model failure."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


class LLMSummarizer:
    """Summarise through `litellm.completion` with the failure policy above.

    `model` is the conversation's model and the retry target; `summary_model` (default: `model`)
    is the one asked first. `clock` is injectable so tests can move time through a cooldown.
    """

    name = "llm"

    def __init__(
        self,
        model: str,
        summary_model: str | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120,
        temperature: float | None = None,
        fallback: str = "static",
        cooldown_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_tokens: int | None = None,
    ) -> None:
        if not model or not model.strip():
            raise ConfigError("LLMSummarizer needs a model name (for example 'gpt-4o-mini').")
        if fallback not in FALLBACKS:
            raise ConfigError(f"fallback must be one of {', '.join(FALLBACKS)}, not {fallback!r}.")
        if timeout <= 0:
            raise ConfigError(f"timeout must be positive seconds, not {timeout!r}.")
        if cooldown_seconds < 0:
            raise ConfigError(f"cooldown_seconds must be >= 0, not {cooldown_seconds!r}.")
        if max_tokens is not None and max_tokens <= 0:
            raise ConfigError(f"max_tokens must be positive, not {max_tokens!r}.")
        self.model = model.strip()
        self.summary_model = (summary_model or "").strip() or self.model
        self.api_base = api_base or None
        # Kept in memory only: never part of last_details, errors, repr or anything stored.
        self._api_key = api_key or None
        self.timeout = float(timeout)
        self.temperature = temperature
        self.fallback = fallback
        self.cooldown_seconds = float(cooldown_seconds)
        self.clock = clock
        self.max_tokens = max_tokens
        self.last_details: dict[str, Any] = {}
        # The prompt of the last call as the model gets it (redacted): the summarize phase
        # reports this one, not the raw prompt, so a report shows what left the machine.
        self.last_prompt: str | None = None
        self._cooldown_until: float | None = None

    def __repr__(self) -> str:
        return (
            f"LLMSummarizer(model={self.model!r}, summary_model={self.summary_model!r}, "
            f"api_base={self.api_base!r}, fallback={self.fallback!r})"
        )

    # -- cooldown --------------------------------------------------------------------------------
    @property
    def cooldown_until(self) -> float | None:
        """The `clock()` time the current cooldown ends, or None when none is active."""
        if self._cooldown_until is not None and self.clock() >= self._cooldown_until:
            self._cooldown_until = None
        return self._cooldown_until

    def cooldown_active(self) -> bool:
        return self.cooldown_until is not None

    def _cooldown_state(self) -> dict[str, Any]:
        until = self.cooldown_until
        if until is None:
            return {"cooldown_active": False, "cooldown_until": None, "cooldown_until_iso": None}
        remaining = max(0.0, until - self.clock())
        wall = datetime.now(UTC) + timedelta(seconds=remaining)
        return {
            "cooldown_active": True,
            "cooldown_until": until,
            "cooldown_until_iso": wall.isoformat(timespec="seconds"),
            "cooldown_remaining_s": round(remaining, 3),
        }

    # -- summarize -------------------------------------------------------------------------------
    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        started = time.perf_counter()
        self.last_prompt = prompt = redact(request.prompt)
        base: dict[str, Any] = {
            "summarizer": self.name,
            "model": self.summary_model,
            "summary_model": self.summary_model,
            "main_model": self.model,
            "attempts": 0,
            "retried_with_main_model": False,
            "streamed": on_token is not None,
            "prompt_tokens": None,
            "completion_tokens": None,
            "cost": None,
        }
        if self.cooldown_active():
            details = {**base, **self._cooldown_state(), "error_class": "Cooldown"}
            details["message"] = (
                f"summary calls paused after a transient failure; retrying after "
                f"{details['cooldown_until_iso']}"
            )
            details["duration_s"] = 0.0
            self.last_details = details
            raise SummarizerUnavailable(str(details["message"]), kind="cooldown", details=details)

        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
        ]
        attempts = 0
        model = self.summary_model
        retried = False
        while True:
            attempts += 1
            try:
                text, usage_details = self._call(model, messages, on_token)
                break
            except _CallbackError as exc:
                raise exc.original from None
            except Exception as exc:  # litellm raises many classes; classify_error sorts them
                kind = classify_error(exc)
                if kind == "unavailable" and not retried and model != self.model:
                    model, retried = self.model, True
                    continue
                if kind == "transient":
                    self._cooldown_until = self.clock() + self.cooldown_seconds
                details = {
                    **base,
                    "model": model,
                    "attempts": attempts,
                    "retried_with_main_model": retried,
                    "error_class": type(exc).__name__,
                    "message": error_message(exc),
                    "status_code": getattr(exc, "status_code", None),
                    **self._cooldown_state(),
                    "duration_s": round(time.perf_counter() - started, 3),
                }
                self.last_details = details
                raise SummarizationError(
                    f"summary model {model} failed ({details['error_class']}): "
                    f"{details['message']}",
                    kind=kind,
                    details=details,
                ) from exc

        details = {
            **base,
            **usage_details,
            "model": model,
            "attempts": attempts,
            "retried_with_main_model": retried,
            **self._cooldown_state(),
            "duration_s": round(time.perf_counter() - started, 3),
        }
        self.last_details = details
        return self._validated(text, details)

    def _validated(self, text: str, details: dict[str, Any]) -> str:
        """The normalised summary, or SummarizationError(kind="failed") for a useless answer."""
        problem = None
        if not text.strip():
            problem = "the model returned an empty answer"
        else:
            parsed = parse_summary(text)
            if parsed.found_headings == 0:
                problem = "the answer has none of the 13 section headings"
        if problem is not None:
            details = {**details, "error_class": "InvalidSummary", "message": problem}
            details["answer_chars"] = len(text)
            self.last_details = details
            raise SummarizationError(
                f"summary model {details['model']}: {problem}", kind="failed", details=details
            )
        return render_summary(parsed)

    # -- the litellm call ------------------------------------------------------------------------
    def _kwargs(self, model: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "timeout": self.timeout,
            "num_retries": 0,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_base and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama...) take no key, but the
            # OpenAI SDK refuses to send a request without one.
            kwargs["api_key"] = "no-key-needed"
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs

    def _call(
        self, model: str, messages: list[dict[str, str]], on_token: OnToken | None
    ) -> tuple[str, dict[str, Any]]:
        litellm = load_litellm()
        kwargs = self._kwargs(model, messages)
        if on_token is None:
            response = litellm.completion(**kwargs)
            return _response_text(response), _usage(litellm, response)
        stream = litellm.completion(**kwargs, stream=True, stream_options={"include_usage": True})
        chunks: list[Any] = []
        pieces: list[str] = []
        for chunk in stream:
            chunks.append(chunk)
            choices = getattr(chunk, "choices", None) or []
            delta = getattr(choices[0], "delta", None) if choices else None
            piece = getattr(delta, "content", None) if delta is not None else None
            if piece:
                pieces.append(piece)
                try:
                    on_token(piece)
                except Exception as exc:
                    raise _CallbackError(exc) from exc
        text = "".join(pieces)
        usage: dict[str, Any] = {"prompt_tokens": None, "completion_tokens": None, "cost": None}
        if chunks:
            try:
                built = litellm.stream_chunk_builder(chunks, messages=messages)
            except Exception:  # usage is a report, never a reason to lose the summary
                built = None
            if built is not None:
                usage = _usage(litellm, built)
        return text, usage


def _response_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None) if message is not None else None
    return content if isinstance(content, str) else ""


def _usage(litellm: Any, response: Any) -> dict[str, Any]:
    usage = getattr(response, "usage", None)
    prompt_tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
    completion_tokens = getattr(usage, "completion_tokens", None) if usage is not None else None
    cost: float | None
    try:
        cost = float(litellm.completion_cost(completion_response=response))
    except Exception:  # unknown models have no price: the cost is then "not known", not 0
        cost = None
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "cost": cost}
