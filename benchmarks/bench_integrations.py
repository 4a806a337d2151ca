"""Benchmark: what each agent-framework adapter costs per model call, against the framework's own
compaction on the same scripted run (issue 32).

The run is the real-agent tests' build-log task, longer: a request, then TURNS turns of one
`read_page` tool call and its ~1,600-character result, in each framework's own message types.
Before each model call the framework hands its hook the conversation as the framework holds it
(LangChain's middleware and the Agents SDK's input filter: the whole history every call;
Pydantic AI's history processor: what it returned last time plus what the run appended), and the
hook's time is measured (CPU seconds of this process, no network, no model: the model's own
summary time is not compaction's cost). Each framework's hooks run on the same turns:

- LangChain: `CompactionMiddleware.compact_request` against `trim_messages` (last
  TRIM_TOKENS by `count_tokens_approximately`) and `SummarizationMiddleware.before_model`
  (trigger at the same threshold, keep the last 20 messages, the summary by a scripted chat
  model), whose state update is applied as the agent would;
- Pydantic AI: `CompactionProcessor.compact` against the keep-the-recent-messages history
  processor of Pydantic AI's documentation (it has no compaction of its own apart from the
  providers' server-side ones);
- Agents SDK: `CompactionFilter.filter` against its own session trimming, a `SQLiteSession` in
  memory that stores each turn's items and reads back the last SESSION_LIMIT
  (`SessionSettings(limit=...)`), as a session-backed runner does.

Ours runs twice: with the offline extractive summary (the default) and with the summary stubbed
(the static marker, like the scripted model on the other side: the summary text costs nothing).
Its time is split into the framework's messages converted (encode/decode), `should_compress`,
`compress`, and the rest of the hook. Ratios are ours / theirs, from one run.

Each framework's rows run once on 40 turns first, untimed: imports and the encoding's first load
are a process's one-off costs, not a model call's.

Run: `.venv/bin/python -m benchmarks.bench_integrations` (`--turns 300` for a longer run,
`--repeats 3` keeps each row's fastest).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TURNS = 200
WINDOW = 32_000
THRESHOLD = 0.5
TRIM_TOKENS = 12_000
KEEP_MESSAGES = 20
SESSION_LIMIT = 40
REQUEST = "Read the build log page by page with read_page, then say which test failed."
SYSTEM = "You are a build assistant."


def page_text(page: int) -> str:
    """One page of the log, ~1,600 characters, distinct per page (the tests' page)."""
    return "\n".join(
        f"[page {page} line {n:02d}] tests/test_api.py::test_case_{page}_{n} PASSED in 0.{n:02d}s"
        for n in range(24)
    )


def _config() -> Any:
    from compaction import CompactionConfig

    return CompactionConfig(context_length=WINDOW, threshold_ratio=THRESHOLD)


# -- timing ----------------------------------------------------------------------------------------
class Split:
    """CPU seconds by part, accumulated by wrappers around the adapters' inner calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)


@contextlib.contextmanager
def timed_parts(split: Split) -> Iterator[None]:
    """Time the codecs' encode/decode and the Compactor's should_compress/compress while inside
    (outermost calls only: compress calls neither)."""
    from compaction.compactor import Compactor
    from compaction.integrations.langchain import LangChainCodec
    from compaction.integrations.openai_agents import AgentsCodec
    from compaction.integrations.pydantic_ai import PydanticAICodec

    targets = [
        (Compactor, "should_compress", "should_compress"),
        (Compactor, "compress", "compress"),
    ]
    for codec in (LangChainCodec, PydanticAICodec, AgentsCodec):
        targets += [(codec, "encode", "converted"), (codec, "decode", "converted")]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]
    depth = [0]

    def wrap(function: Callable[..., Any], part: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return function(*args, **kwargs)
            depth[0] += 1
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                split.seconds[part] += time.process_time() - started
                split.calls[part] += 1
                depth[0] -= 1

        return timed

    try:
        for (owner, name, part), (_, _, original) in zip(targets, originals, strict=True):
            setattr(owner, name, wrap(original, part))
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


def run_turns(hook: Callable[[int], None], turns: int) -> float:
    """CPU seconds of `hook(turn)` summed over the turns (the hook's own work only)."""
    total = 0.0
    for turn in range(1, turns + 1):
        started = time.process_time()
        hook(turn)
        total += time.process_time() - started
    return total


# -- LangChain -------------------------------------------------------------------------------------
def langchain_rows(turns: int) -> dict[str, Any]:
    from langchain.agents.middleware import ModelRequest, SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately, trim_messages

    from compaction.integrations.langchain import CompactionMiddleware
    from compaction.summarizers.base import StaticSummarizer

    def turn_messages(turn: int) -> list[Any]:
        call = f"call_{turn}"
        return [
            AIMessage("", tool_calls=[{"name": "read_page", "args": {"page": turn}, "id": call}]),
            ToolMessage(page_text(turn), tool_call_id=call, name="read_page"),
        ]

    def scripted_model() -> Any:
        return GenericFakeChatModel(messages=iter([AIMessage("## Active Task\nRead on.")] * 999))

    system = SystemMessage(SYSTEM)
    rows: dict[str, Any] = {}

    def ours(summarizer: Any) -> tuple[float, Split, int]:
        middleware = CompactionMiddleware(_config(), summarizer=summarizer)
        model = scripted_model()
        history: list[Any] = [HumanMessage(REQUEST)]

        def hook(turn: int) -> None:
            history.extend(turn_messages(turn))
            request = ModelRequest(model=model, messages=list(history), system_message=system)
            middleware.compact_request(request)

        split = Split()
        with timed_parts(split):
            seconds = run_turns(hook, turns)
        return seconds, split, middleware.compactions

    rows["ours"] = ours(None)
    rows["ours, summary stubbed"] = ours(StaticSummarizer())

    history: list[Any] = [system, HumanMessage(REQUEST)]

    def trim(turn: int) -> None:
        history.extend(turn_messages(turn))
        trim_messages(
            history,
            max_tokens=TRIM_TOKENS,
            token_counter=count_tokens_approximately,
            strategy="last",
            include_system=True,
            start_on=("human", "ai"),
        )

    rows["theirs: trim_messages"] = (run_turns(trim, turns), None, None)

    summarization = SummarizationMiddleware(
        model=scripted_model(),
        trigger=("tokens", int(WINDOW * THRESHOLD)),
        keep=("messages", KEEP_MESSAGES),
    )
    state: dict[str, Any] = {"messages": [HumanMessage(REQUEST)]}
    summaries = [0]

    def summarize(turn: int) -> None:
        state["messages"].extend(turn_messages(turn))
        update = summarization.before_model(state, None)
        if update:  # [RemoveMessage(all), *the summary and what it kept]: the agent applies it
            summaries[0] += 1
            state["messages"] = [
                m for m in update["messages"] if type(m).__name__ != "RemoveMessage"
            ]

    rows["theirs: SummarizationMiddleware"] = (run_turns(summarize, turns), None, summaries[0])
    return rows


# -- Pydantic AI -----------------------------------------------------------------------------------
def pydantic_ai_rows(turns: int) -> dict[str, Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    from compaction.integrations.pydantic_ai import CompactionProcessor
    from compaction.summarizers.base import StaticSummarizer

    def turn_messages(turn: int) -> list[Any]:
        call = f"call_{turn}"
        return [
            ModelResponse(parts=[ToolCallPart("read_page", {"page": turn}, tool_call_id=call)]),
            ModelRequest(parts=[ToolReturnPart("read_page", page_text(turn), tool_call_id=call)]),
        ]

    def opening() -> list[Any]:
        return [ModelRequest(parts=[SystemPromptPart(SYSTEM), UserPromptPart(REQUEST)])]

    rows: dict[str, Any] = {}

    def ours(summarizer: Any) -> tuple[float, Split, int]:
        processor = CompactionProcessor(_config(), summarizer=summarizer)
        history = opening()

        def hook(turn: int) -> None:
            nonlocal history
            # Persistent: what the processor returned is the run's history from then on.
            history = processor.compact("bench", [*history, *turn_messages(turn)])

        split = Split()
        with timed_parts(split):
            seconds = run_turns(hook, turns)
        return seconds, split, processor.compactions

    rows["ours"] = ours(None)
    rows["ours, summary stubbed"] = ours(StaticSummarizer())

    def keep_recent_messages(messages: list[Any]) -> list[Any]:
        """Pydantic AI's documented history processor: the first request and the latest."""
        if len(messages) <= KEEP_MESSAGES:
            return messages
        return [messages[0], *messages[-(KEEP_MESSAGES - 1) :]]

    history = opening()

    def theirs(turn: int) -> None:
        nonlocal history
        history = keep_recent_messages([*history, *turn_messages(turn)])

    rows["theirs: keep-recent history processor"] = (run_turns(theirs, turns), None, None)
    return rows


# -- OpenAI Agents SDK -----------------------------------------------------------------------------
def agents_rows(turns: int) -> dict[str, Any]:
    from agents import SQLiteSession
    from agents.memory import SessionSettings

    from compaction.integrations.openai_agents import CompactionFilter
    from compaction.summarizers.base import StaticSummarizer

    def turn_items(turn: int) -> list[dict[str, Any]]:
        call = f"call_{turn}"
        return [
            {
                "type": "function_call",
                "call_id": call,
                "name": "read_page",
                "arguments": f'{{"page": {turn}}}',
            },
            {"type": "function_call_output", "call_id": call, "output": page_text(turn)},
        ]

    rows: dict[str, Any] = {}

    def ours(summarizer: Any) -> tuple[float, Split, int]:
        compaction = CompactionFilter(_config(), summarizer=summarizer, conversation_id="bench")
        items: list[dict[str, Any]] = [{"role": "user", "content": REQUEST}]

        def hook(turn: int) -> None:
            items.extend(turn_items(turn))
            compaction.filter(SYSTEM, list(items))

        split = Split()
        with timed_parts(split):
            seconds = run_turns(hook, turns)
        return seconds, split, compaction.compactions

    rows["ours"] = ours(None)
    rows["ours, summary stubbed"] = ours(StaticSummarizer())

    loop = asyncio.new_event_loop()
    try:
        session = SQLiteSession("bench", session_settings=SessionSettings(limit=SESSION_LIMIT))
        loop.run_until_complete(session.add_items([{"role": "user", "content": REQUEST}]))

        def theirs(turn: int) -> None:
            loop.run_until_complete(session.add_items(turn_items(turn)))  # type: ignore[arg-type]
            loop.run_until_complete(session.get_items())

        rows["theirs: SQLiteSession, limit"] = (run_turns(theirs, turns), None, None)
        session.close()
    finally:
        loop.close()
    return rows


FRAMEWORKS: dict[str, Callable[[int], dict[str, Any]]] = {
    "LangChain": langchain_rows,
    "Pydantic AI": pydantic_ai_rows,
    "OpenAI Agents SDK": agents_rows,
}


def _fastest(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best: dict[str, Any] = {}
    for rows in runs:
        for label, row in rows.items():
            if label not in best or row[0] < best[label][0]:
                best[label] = row
    return best


def report(name: str, rows: dict[str, Any], turns: int) -> list[str]:
    theirs = {label: row for label, row in rows.items() if label.startswith("theirs")}
    lines = [f"## {name} ({turns} turns, one per model call)", ""]
    header = "| hook | per call | compactions | converted | should_compress | compress | rest |"
    header += "".join(f" / {label.removeprefix('theirs: ')} |" for label in theirs)
    lines += [header, "|" + "---|" * (7 + len(theirs))]
    for label, (seconds, split, compactions) in rows.items():
        per_call = f"{seconds / turns * 1e6:,.0f} µs"
        if split is not None:
            parts = [
                split.seconds.get(p, 0.0) for p in ("converted", "should_compress", "compress")
            ]
            shares = [f"{p / seconds * 100:.0f}%" for p in parts]
            shares.append(f"{(seconds - sum(parts)) / seconds * 100:.0f}%")
        else:
            shares = ["", "", "", ""]
        ratios = [
            f"{seconds / other[0]:.1f} x" if not label.startswith("theirs") else ""
            for other in theirs.values()
        ]
        made = "" if compactions is None else str(compactions)
        lines.append(f"| {label} | {per_call} | {made} | " + " | ".join(shares + ratios) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    for name, rows_of in FRAMEWORKS.items():
        # Warm: imports, the encoding's first load and the summariser's modules are a process's
        # one-off costs, not a model call's.
        rows_of(40)
        rows = _fastest([rows_of(args.turns) for _ in range(args.repeats)])
        print("\n".join(report(name, rows, args.turns)))
        print()


if __name__ == "__main__":
    main()
