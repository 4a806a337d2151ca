"""A Cline task's `ui_messages.json` and `task_metadata.json`: usage per call, model, versions.

Each `say: "api_req_started"` row of `ui_messages.json` is one model call; its `text` is JSON
with `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads` and `cost` (USD) once the call ended
(a cancelled one has a `cancelReason`). `conversationHistoryIndex`, when present, is the index of
the last API message the request sent, so its answer is the next one; without it the finished
calls are matched to the assistant messages in order.

`tokensIn` follows the provider's convention (Cline passes the provider's count on):
Anthropic's APIs (anthropic, bedrock, vertex, claude-code) count the prompt without the cache
reads and writes, so the prompt is their sum; OpenAI's (openai, openai-native) include them.
For another provider the count is read the Anthropic way, as Cline's own fallback cost does,
unless it cannot be (the cache parts are larger than it), and a warning says so.

`task_metadata.json` holds `model_usage [{ts, model_id, model_provider_id, mode}]` (the model
of each stretch of the task) and `environment_history [{…, cline_version}]`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from compaction.formats.conversation import ModelCall

PROMPT_WITHOUT_CACHE = ("anthropic", "bedrock", "vertex", "claude-code")
PROMPT_WITH_CACHE = ("openai", "openai-native")


@dataclass
class Usage:
    calls: list[ModelCall] = field(default_factory=list)
    model: str | None = None
    provider: str | None = None
    version: str | None = None
    warnings: list[str] = field(default_factory=list)
    condensed: list[int | None] = field(default_factory=list)  # the size before each condense


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _iso(milliseconds: Any) -> str | None:
    import datetime as dt

    if not isinstance(milliseconds, int | float) or isinstance(milliseconds, bool):
        return None
    moment = dt.datetime.fromtimestamp(milliseconds / 1000, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _models(metadata: Any) -> list[dict[str, Any]]:
    usage = metadata.get("model_usage") if isinstance(metadata, dict) else None
    return [m for m in usage or [] if isinstance(m, dict)]


def read_usage(
    rows: Any,
    metadata: Any,
    assistant_at: dict[int, int],
    assistant_order: list[int],
    summary_positions: list[int],
) -> Usage:
    """Calls from the UI rows: `assistant_at` maps an API message index to its canonical
    assistant message, `assistant_order` lists the answers to requests in order (for rows with
    no index), `summary_positions` the condensed summaries (whose call a `condense_context` row
    records, with its cost and the context's size before)."""
    usage = Usage()
    models = _models(metadata)
    if models:
        usage.model = str(models[-1].get("model_id") or "") or None
        usage.provider = str(models[-1].get("model_provider_id") or "") or None
    environments = metadata.get("environment_history") if isinstance(metadata, dict) else None
    for environment in environments or []:
        if isinstance(environment, dict) and environment.get("cline_version"):
            usage.version = str(environment["cline_version"])
    guessed: set[str] = set()
    sequence = iter(assistant_order)
    summaries = iter(summary_positions)
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        condense = row.get("contextCondense")
        if row.get("say") == "condense_context" and isinstance(condense, dict):
            usage.condensed.append(_count(condense.get("prevContextTokens")))
            summary = next(summaries, None)
            cost = condense.get("cost")
            if summary is not None and isinstance(cost, int | float):
                # The summary's own call: its cost is recorded, its tokens are not.
                usage.calls.append(
                    ModelCall(position=summary, timestamp=_iso(row.get("ts")), cost_usd=float(cost))
                )
            continue
        if row.get("say") != "api_req_started":
            continue
        try:
            info = json.loads(row.get("text") or "{}")
        except ValueError:
            continue
        if not isinstance(info, dict) or _count(info.get("tokensIn")) is None:
            continue  # cancelled before any usage came back
        model_info = row.get("modelInfo") if isinstance(row.get("modelInfo"), dict) else {}
        assert isinstance(model_info, dict)
        provider = str(
            model_info.get("providerId") or _at(models, row.get("ts"), "model_provider_id") or ""
        )
        model = model_info.get("modelId") or _at(models, row.get("ts"), "model_id")
        index = row.get("conversationHistoryIndex")
        if isinstance(index, int) and not isinstance(index, bool):
            position = assistant_at.get(index + 1)
        else:
            position = next(sequence, None)
        if position is None:
            continue
        prompt, read, write = _prompt(info, provider, guessed)
        cost = info.get("cost")
        usage.calls.append(
            ModelCall(
                position=position,
                input_tokens=prompt,
                cache_read_tokens=read,
                cache_write_tokens=write,
                output_tokens=_count(info.get("tokensOut")),
                model=str(model) if model else None,
                timestamp=_iso(row.get("ts")),
                cost_usd=float(cost)
                if isinstance(cost, int | float) and not isinstance(cost, bool)
                else None,
            )
        )
    if guessed:
        usage.warnings.append(
            f"usage of provider(s) {', '.join(sorted(guessed))} read the Anthropic way "
            "(tokensIn without the cache reads and writes), as Cline's own cost does"
        )
    return usage


def _at(models: list[dict[str, Any]], ts: Any, key: str) -> Any:
    """The model_usage entry in force at `ts` (the last one before it)."""
    chosen = None
    for entry in models:
        if not isinstance(ts, int | float) or (entry.get("ts") or 0) <= ts:
            chosen = entry.get(key)
    return chosen


def _prompt(
    info: dict[str, Any], provider: str, guessed: set[str]
) -> tuple[int | None, int | None, int | None]:
    tokens_in = _count(info.get("tokensIn"))
    read, write = _count(info.get("cacheReads")), _count(info.get("cacheWrites"))
    if tokens_in is None:
        return None, read, write
    cached = (read or 0) + (write or 0)
    if provider in PROMPT_WITH_CACHE and cached <= tokens_in:
        return tokens_in, read, write
    if provider not in PROMPT_WITHOUT_CACHE and cached <= tokens_in:
        guessed.add(provider or "unknown")
    return tokens_in + cached, read, write
