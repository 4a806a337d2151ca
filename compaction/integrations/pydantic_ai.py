"""Pydantic AI: a history processor (and the capability that runs it) that compacts the agent's
history before each model request.

```python
from pydantic_ai import Agent
from compaction import CompactionConfig
from compaction.integrations.pydantic_ai import compaction_capability

agent = Agent(model, capabilities=[compaction_capability(CompactionConfig(...))])
```

Pydantic AI 2.x runs history processors through its capability API (`ProcessHistory`, which
replaced the `history_processors=` argument): what the processor returns becomes the run's
history (`RunContext.messages`), so the next request starts from the compacted context and
`result.all_messages()` holds it. One Compactor per conversation (`RunContext.conversation_id`),
so each request checks and counts only what the run appended.

Messages are converted part by part: `SystemPromptPart`, `UserPromptPart` (text, images by URL or
inline), `ToolReturnPart` and `RetryFeedbackPart` to canonical system, user, tool and user
messages; a `ModelResponse` (its `TextPart`s, `ThinkingPart`s as reasoning, `ToolCallPart`s) to
one assistant message. What has no canonical form (instruction baselines and deltas, native tool
calls and their returns, provider details, usage, timestamps) rides with the message it came
with: kept, the original object is handed back; changed, the original is patched; folded into
the summary, it goes with it. `summary_model="agent"` has the agent's own model write the
summary. Needs the `compaction-lab[pydantic-ai]` extra.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import threading
from collections.abc import Sequence
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

from compaction.cache import CompactionCache
from compaction.config import CompactionConfig
from compaction.integrations.summarizing import FrameworkSummarizer
from compaction.integrations.view import AdapterSettings, Views, conversation_key
from compaction.messages import Message
from compaction.summarizers.base import Summarizer

FRAMEWORK = "pydantic-ai"


# -- parts to canonical messages -------------------------------------------------------------------
def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            parts.append({"type": "text", "text": item})
        elif isinstance(item, ImageUrl):
            parts.append({"type": "image_url", "image_url": {"url": item.url}})
        elif isinstance(item, BinaryContent) and item.is_image:
            data = base64.b64encode(item.data).decode("ascii")
            url = f"data:{item.media_type};base64,{data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:  # audio, documents, video: named, so a summary can say a file was there
            parts.append({"type": "text", "text": f"[{type(item).__name__}]"})
    return parts


def _request_part(part: Any) -> Message | None:
    """The canonical message of one request part, or None for a part with no canonical form."""
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        return {"role": "user", "content": _user_content(part.content)}
    if isinstance(part, ToolReturnPart):
        return {
            "role": "tool",
            "tool_call_id": part.tool_call_id,
            "content": part.model_response_str(),
        }
    if isinstance(part, RetryFeedbackPart):
        return {"role": "user", "content": part.model_response()}
    return None


def _response_message(response: ModelResponse) -> Message:
    texts = [p.content for p in response.parts if isinstance(p, TextPart)]
    thinking = [p.content for p in response.parts if isinstance(p, ThinkingPart) and p.content]
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
        }
        for p in response.parts
        if isinstance(p, ToolCallPart)
    ]
    message: Message = {"role": "assistant", "content": "".join(texts)}
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["reasoning"] = "\n".join(thinking)
    return message


@dataclasses.dataclass(frozen=True)
class RequestParts:
    """What one canonical message holds of a ModelRequest: its part, with the parts of no
    canonical form that ride with it, in their order."""

    request: ModelRequest
    parts: tuple[Any, ...]
    main: int  # the index in `parts` of the part the message was made from


class PydanticAICodec:
    """Pydantic AI's ModelMessages to canonical messages and back (view.Codec)."""

    framework = FRAMEWORK

    def encode(self, items: Sequence[ModelMessage]) -> tuple[list[Message], list[Any]]:
        messages: list[Message] = []
        held: list[Any] = []
        carried: list[Any] = []  # parts with no canonical form, waiting for a message to ride
        for item in items:
            if isinstance(item, ModelResponse):
                messages.append(_response_message(item))
                held.append(item)
                continue
            for part in item.parts:
                message = _request_part(part)
                if message is None:
                    carried.append(part)
                    continue
                messages.append(message)
                held.append(RequestParts(item, (*carried, part), len(carried)))
                carried = []
            if carried and held and isinstance(held[-1], RequestParts):
                last = held[-1]
                if last.request is item:  # trailing parts ride with the request's last message
                    held[-1] = RequestParts(item, (*last.parts, *carried), last.main)
                    carried = []
        if carried and held and isinstance(held[-1], RequestParts):
            last = held[-1]
            held[-1] = RequestParts(last.request, (*last.parts, *carried), last.main)
        return messages, held

    def decode(
        self, messages: Sequence[Message], held: Sequence[Any], unchanged: Sequence[bool]
    ) -> list[ModelMessage]:
        names = {
            call.get("id"): call["function"]["name"]
            for m in messages
            for call in m.get("tool_calls") or []
        }
        out: list[ModelMessage] = []
        group: list[tuple[RequestParts | None, tuple[Any, ...], bool]] = []

        def flush() -> None:
            if group:
                out.append(_request_of(group))
                group.clear()

        for message, source, same in zip(messages, held, unchanged, strict=True):
            if message.get("role") == "assistant":
                flush()
                if isinstance(source, ModelResponse):
                    out.append(source if same else _patched_response(message, source))
                else:
                    out.append(_new_response(message))
                continue
            if isinstance(source, RequestParts):
                current = next((s.request for s, _, _ in reversed(group) if s is not None), None)
                if current is not None and current is not source.request:
                    flush()  # the original requests' boundaries stay where they were
                parts = source.parts if same else _patched_parts(message, source, names)
                group.append((source, parts, same))
            else:
                group.append((None, (_new_part(message, names),), False))
        flush()
        return out


def _request_of(group: list[tuple[RequestParts | None, tuple[Any, ...], bool]]) -> ModelRequest:
    """One ModelRequest for consecutive request-side messages: the original object when they
    are exactly its parts, unchanged; else a request with the first original's fields."""
    parts = [part for _, parts, _ in group for part in parts]
    sources = [source for source, _, _ in group]
    first = next((s.request for s in sources if s is not None), None)
    if (
        first is not None
        and all(s is not None and s.request is first for s in sources)
        and all(same for _, _, same in group)
        and len(parts) == len(first.parts)
        and all(a is b for a, b in zip(parts, first.parts, strict=True))
    ):
        return first
    if first is not None:
        return dataclasses.replace(first, parts=parts)
    return ModelRequest(parts=parts)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _user_parts_back(content: Any) -> Any:
    if isinstance(content, str):
        return content
    items: list[Any] = []
    for part in content or []:
        if part.get("type") == "image_url":
            items.append(ImageUrl(url=str(part["image_url"]["url"])))
        else:
            items.append(str(part.get("text", "")))
    return items


def _patched_parts(
    message: Message, source: RequestParts, names: dict[Any, str]
) -> tuple[Any, ...]:
    main = source.parts[source.main]
    content = message.get("content")
    if isinstance(main, ToolReturnPart):
        replaced: Any = dataclasses.replace(main, content=_text_of(content))
    elif isinstance(main, UserPromptPart):
        replaced = dataclasses.replace(main, content=_user_parts_back(content))
    elif isinstance(main, SystemPromptPart | RetryFeedbackPart):
        replaced = dataclasses.replace(main, content=_text_of(content))
    else:
        replaced = _new_part(message, names)
    return (*source.parts[: source.main], replaced, *source.parts[source.main + 1 :])


def _new_part(message: Message, names: dict[Any, str]) -> Any:
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        call_id = str(message.get("tool_call_id") or "")
        return ToolReturnPart(
            tool_name=str(message.get("name") or names.get(call_id) or "tool"),
            content=_text_of(content),
            tool_call_id=call_id,
        )
    if role == "system":
        return SystemPromptPart(content=_text_of(content))
    return UserPromptPart(content=_user_parts_back(content))


def _calls_back(message: Message) -> dict[str, Any]:
    return {call.get("id"): call for call in message.get("tool_calls") or []}


def _patched_response(message: Message, original: ModelResponse) -> ModelResponse:
    calls = _calls_back(message)
    text = _text_of(message.get("content"))
    parts: list[Any] = []
    text_placed = False
    for part in original.parts:
        if isinstance(part, TextPart):
            if not text_placed and text:
                parts.append(dataclasses.replace(part, content=text))
            text_placed = True
        elif isinstance(part, ToolCallPart):
            call = calls.get(part.tool_call_id)
            if call is not None:  # a call compaction stripped is left out
                arguments = call["function"].get("arguments")
                same = arguments == part.args_as_json_str()
                parts.append(part if same else dataclasses.replace(part, args=arguments))
        else:
            parts.append(part)
    if text and not text_placed:
        parts.insert(0, TextPart(content=text))
    return dataclasses.replace(original, parts=parts)


def _new_response(message: Message) -> ModelResponse:
    parts: list[Any] = []
    reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(ThinkingPart(content=reasoning))
    text = _text_of(message.get("content"))
    if text:
        parts.append(TextPart(content=text))
    for call in message.get("tool_calls") or []:
        parts.append(
            ToolCallPart(
                tool_name=call["function"]["name"],
                args=call["function"].get("arguments"),
                tool_call_id=call.get("id"),
            )
        )
    return ModelResponse(parts=parts)


# -- the summary by a Pydantic AI model ------------------------------------------------------------
def pydantic_ai_summarizer(model: Model | str | None = None) -> FrameworkSummarizer:
    """A Summarizer whose summary a Pydantic AI model writes (`None`: the agent's model, set by
    the processor from each run)."""
    holder: dict[str, Any] = {"model": model}

    async def complete(system: str, prompt: str) -> str:
        from pydantic_ai.direct import model_request

        if holder["model"] is None:
            raise RuntimeError("no agent model seen yet to write the summary")
        request = ModelRequest(parts=[SystemPromptPart(system), UserPromptPart(prompt)])
        response = await model_request(holder["model"], [request])
        return "".join(p.content for p in response.parts if isinstance(p, TextPart))

    summarizer = FrameworkSummarizer(
        f"pydantic-ai:{getattr(model, 'model_name', model) or 'agent-model'}",
        complete_async=complete,
    )
    summarizer.holder = holder  # type: ignore[attr-defined]
    return summarizer


# -- the processor and its capability --------------------------------------------------------------
class CompactionProcessor:
    """A Pydantic AI history processor: `ProcessHistory(CompactionProcessor(config))`, or
    `compaction_capability(config)`."""

    def __init__(
        self,
        config: CompactionConfig | None = None,
        *,
        summarizer: Summarizer | None = None,
        summary_model: Model | str | None = None,
        record_to: Any = None,
        focus: str | None = None,
        cache: CompactionCache | None = None,
        max_conversations: int = 64,
        span_attributes: dict[str, str | int | float | bool] | None = None,
    ) -> None:
        if summarizer is not None and summary_model is not None:
            raise ValueError("give summarizer or summary_model, not both")
        self._model_summarizer: FrameworkSummarizer | None = None
        if summary_model is not None:
            model = None if summary_model == "agent" else summary_model
            self._model_summarizer = summarizer = pydantic_ai_summarizer(model)
        self.settings = AdapterSettings.from_options(
            config, summarizer, cache, record_to, focus, span_attributes
        )
        self.views: Views[ModelMessage] = Views(
            PydanticAICodec(), self.settings, persistent=True, max_conversations=max_conversations
        )
        self._lock = threading.Lock()
        self._agent_model = summary_model == "agent"

    @property
    def compactions(self) -> int:
        return sum(view.compactions for view in self.views)

    def compact(self, key: str, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The compacted history of conversation `key` (synchronous; the processor calls it in
        a worker thread)."""
        with self._lock:
            view = self.views.get(key)
        with view.lock:
            return view.messages_for_model(messages)

    async def __call__(
        self, ctx: RunContext[Any], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        if self._model_summarizer is not None:
            self._model_summarizer.loop = asyncio.get_running_loop()
            if self._agent_model:
                self._model_summarizer.holder["model"] = ctx.model  # type: ignore[attr-defined]
        key = ctx.conversation_id or _first_request_key(messages)
        # Off the event loop: a compaction that summarises with a model takes seconds (the
        # model call itself comes back to this loop, where the model's client lives).
        return await asyncio.to_thread(self.compact, f"conversation:{key}", messages)


def _first_request_key(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    return conversation_key([{"role": "user", "content": repr(part.content)}])
    return "no-request"


def compaction_capability(
    config: CompactionConfig | None = None, **options: Any
) -> ProcessHistory[Any]:
    """The capability to give `Agent(capabilities=[...])`: Pydantic AI's own ProcessHistory
    around a CompactionProcessor (its options as keywords)."""
    return ProcessHistory(CompactionProcessor(config, **options))
