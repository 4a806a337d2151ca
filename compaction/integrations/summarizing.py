"""The LLM summary written by the framework's own model (what the user already configured:
its provider, key, retries and tracing), instead of litellm.

`FrameworkSummarizer` is a `Summarizer` (compaction.summarizers.base) around one call: the
adapter module gives it a function that sends the system prompt and the summary prompt to the
framework's model and returns its text. The prompt is the engine's (Phase 3's 13 sections,
ALGORITHM.md), redacted before it leaves the machine, as the litellm summariser does. A failing
call raises `SummarizationError`: the Compactor falls back to the extractive summary and says so
(`result.fallback_used`).

Frameworks whose models are async (Pydantic AI, the Agents SDK) run the compaction in a worker
thread; the summariser then runs its call on the agent's event loop (`loop`), so the model
client stays on the loop it was made for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from compaction.errors import SummarizationError
from compaction.summarizers.base import OnToken, SummaryRequest
from compaction.summarizers.llm import SYSTEM_PROMPT
from compaction.summary import parse_summary, render_summary
from compaction.text.redact import redact

Complete = Callable[[str, str], str]
CompleteAsync = Callable[[str, str], Awaitable[str]]


class FrameworkSummarizer:
    """A Summarizer that calls `complete(system, prompt) -> text` (or, for an async framework,
    `complete_async`, run on `loop` when the compaction runs in a worker thread)."""

    def __init__(
        self,
        name: str,
        complete: Complete | None = None,
        complete_async: CompleteAsync | None = None,
        timeout: float = 120.0,
    ) -> None:
        if (complete is None) == (complete_async is None):
            raise ValueError("give exactly one of complete and complete_async")
        self.name = name
        self._complete = complete
        self._complete_async = complete_async
        self.timeout = timeout
        #: The event loop the agent runs on, set by the adapter before compacting off it.
        self.loop: asyncio.AbstractEventLoop | None = None
        self.last_details: dict[str, Any] = {}

    def summarize(self, request: SummaryRequest, on_token: OnToken | None = None) -> str:
        prompt = redact(request.prompt)
        started = time.perf_counter()
        try:
            text = self._call(prompt)
        except Exception as exc:  # any framework's error: the Compactor falls back and says so
            self.last_details = {
                "summarizer": self.name,
                "error_class": type(exc).__name__,
                "message": str(exc)[:500],
                "duration_s": round(time.perf_counter() - started, 3),
            }
            raise SummarizationError(
                f"{self.name}: the framework's model failed: {type(exc).__name__}: {exc}"
            ) from exc
        self.last_details = {
            "summarizer": self.name,
            "duration_s": round(time.perf_counter() - started, 3),
        }
        # The same check as the litellm summariser's: an answer with none of the 13 headings
        # is no summary (the Compactor falls back and says why).
        parsed = parse_summary(text)
        if not text.strip() or parsed.found_headings == 0:
            problem = "returned no text" if not text.strip() else "answered with no section"
            self.last_details["error_class"] = "InvalidSummary"
            raise SummarizationError(f"{self.name}: the framework's model {problem}")
        rendered = render_summary(parsed)
        if on_token is not None:
            on_token(rendered)
        return rendered

    def _call(self, prompt: str) -> str:
        if self._complete is not None:
            return self._complete(SYSTEM_PROMPT, prompt)
        assert self._complete_async is not None
        return run_coroutine(self._complete_async(SYSTEM_PROMPT, prompt), self.loop, self.timeout)


def run_coroutine(
    awaitable: Awaitable[str], loop: asyncio.AbstractEventLoop | None, timeout: float
) -> str:
    """Run `awaitable` to its result from synchronous code: on `loop` when that loop runs in
    another thread (the agent's, while the compaction runs in a worker), else on a loop of its
    own."""

    async def wrapped() -> str:
        return await awaitable

    coroutine: Coroutine[Any, Any, str] = wrapped()
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)
    return asyncio.run(coroutine)
