"""LangChain 1.x / LangGraph: an agent middleware that compacts what each model call is sent.

```python
from langchain.agents import create_agent
from compaction import CompactionConfig
from compaction.integrations.langchain import CompactionMiddleware

agent = create_agent(model, tools, middleware=[CompactionMiddleware(CompactionConfig(...))])
```

`CompactionMiddleware` is LangChain's own `AgentMiddleware`: its `wrap_model_call` (and
`awrap_model_call`) hands the model a request whose messages (and system message) are the
conversation's compacted context. The agent's state keeps the full history (a checkpointer still
stores every message); the middleware remembers, per conversation (the LangGraph `thread_id`, or
the opening request when there is none), how far its compacted context covers the history, so
each call converts and counts only what is new. Messages compaction kept are handed back as the
very objects the state holds (ids, `response_metadata`, `usage_metadata`, artifacts intact).

`summary_model="agent"` has the agent's own chat model write the summary (or pass any chat
model); `record_to=` a history path records each compaction for the app. Needs the
`compaction-lab[langchain]` extra.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import convert_to_messages, convert_to_openai_messages

from compaction.cache import CompactionCache
from compaction.config import CompactionConfig
from compaction.integrations.summarizing import FrameworkSummarizer
from compaction.integrations.view import AdapterSettings, Views, conversation_key
from compaction.messages import Message
from compaction.summarizers.base import Summarizer

FRAMEWORK = "langchain"


# -- conversion ------------------------------------------------------------------------------------
def to_canonical(message: BaseMessage) -> Message:
    """One LangChain message as a canonical one: LangChain's own OpenAI conversion, with an AI
    message's reasoning blocks moved to `reasoning` (the canonical form's field for them)."""
    converted: Message = dict(convert_to_openai_messages(message))
    if isinstance(message, AIMessage) and isinstance(converted.get("content"), list):
        blocks = converted["content"]
        reasoning = [
            str(b.get("reasoning") or b.get("text") or "")
            for b in blocks
            if isinstance(b, dict) and b.get("type") in ("reasoning", "thinking")
        ]
        others = [
            b
            for b in blocks
            if not (isinstance(b, dict) and b.get("type") in ("reasoning", "thinking"))
        ]
        if all(isinstance(b, dict) and b.get("type") == "text" for b in others):
            converted["content"] = "".join(str(b.get("text", "")) for b in others)
        else:
            converted["content"] = others
        if reasoning:
            converted["reasoning"] = "\n".join(reasoning)
    if converted.get("role") == "assistant" and "content" not in converted:
        converted["content"] = ""
    return converted


def _args(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return {"arguments": str(arguments)}
    return value if isinstance(value, dict) else {"arguments": value}


def _patched(message: Message, original: BaseMessage) -> BaseMessage:
    """The original message with the text and calls compaction changed: everything else it
    carries (id, metadata, usage, artifact, status) stays."""
    update: dict[str, Any] = {}
    content = message.get("content")
    if isinstance(original, AIMessage):
        text = content if isinstance(content, str) else ""
        if isinstance(original.content, list):
            kept = [
                b for b in original.content if not (isinstance(b, dict) and b.get("type") == "text")
            ]
            update["content"] = [*kept, {"type": "text", "text": text}] if text else kept
        else:
            update["content"] = text
        update["tool_calls"] = [
            {
                "name": call["function"]["name"],
                "args": _args(call["function"].get("arguments")),
                "id": call.get("id"),
                "type": "tool_call",
            }
            for call in message.get("tool_calls") or []
        ]
        update["invalid_tool_calls"] = []
    else:
        update["content"] = content if content is not None else ""
    return original.model_copy(update=update)


class LangChainCodec:
    """LangChain messages to canonical messages and back (view.Codec)."""

    framework = FRAMEWORK

    def encode(self, items: Sequence[BaseMessage]) -> tuple[list[Message], list[Any]]:
        return [to_canonical(item) for item in items], list(items)

    def decode(
        self, messages: Sequence[Message], held: Sequence[Any], unchanged: Sequence[bool]
    ) -> list[BaseMessage]:
        out: list[BaseMessage] = []
        for message, original, same in zip(messages, held, unchanged, strict=True):
            if same and original is not None:
                out.append(original)
            elif original is not None and _role(original) == message.get("role"):
                out.append(_patched(message, original))
            else:
                out.append(from_canonical(message))
        return out


def from_canonical(message: Message) -> BaseMessage:
    """A new LangChain message for one compaction inserted (the summary, a stub result)."""
    if message.get("role") == "tool":
        return ToolMessage(
            content=message.get("content") or "",
            tool_call_id=str(message.get("tool_call_id") or ""),
            name=message.get("name"),
        )
    clean = {k: v for k, v in message.items() if k != "reasoning"}
    built = convert_to_messages([clean])[0]
    reasoning = message.get("reasoning")
    if isinstance(built, AIMessage) and isinstance(reasoning, str) and reasoning:
        text = built.content if isinstance(built.content, str) else ""
        blocks: list[Any] = [{"type": "reasoning", "reasoning": reasoning}]
        if text:
            blocks.append({"type": "text", "text": text})
        built = built.model_copy(update={"content": blocks})
    return built


def _role(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return "tool"
    return str(message.type)


# -- the summary by a LangChain chat model ---------------------------------------------------------
def langchain_summarizer(model: BaseChatModel) -> FrameworkSummarizer:
    """A Summarizer whose summary a LangChain chat model writes."""

    def complete(system: str, prompt: str) -> str:
        answer = model.invoke([SystemMessage(system), HumanMessage(prompt)])
        return str(answer.text) if isinstance(answer, BaseMessage) else str(answer)

    return FrameworkSummarizer(f"langchain:{_model_name(model)}", complete=complete)


def _model_name(model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


class _AgentModelSummarizer:
    """The agent's own model writes the summary: the middleware sets `model` from each request
    before compacting (one middleware serves one agent)."""

    name = "langchain:agent-model"

    def __init__(self) -> None:
        self.model: BaseChatModel | None = None
        self.last_details: dict[str, Any] = {}

    def summarize(self, request: Any, on_token: Any = None) -> str:
        if self.model is None:
            from compaction.errors import SummarizationError

            raise SummarizationError("no agent model seen yet to write the summary")
        inner = langchain_summarizer(self.model)
        try:
            return inner.summarize(request, on_token)
        finally:
            self.last_details = inner.last_details


# -- the middleware --------------------------------------------------------------------------------
# The frameworks are Any to mypy (follow_imports = skip): subclassing one is allowed here.
class CompactionMiddleware(AgentMiddleware):  # type: ignore[misc]
    """Compacts the model request's messages before each model call (see the module's doc)."""

    def __init__(
        self,
        config: CompactionConfig | None = None,
        *,
        summarizer: Summarizer | None = None,
        summary_model: BaseChatModel | str | None = None,
        record_to: Any = None,
        focus: str | None = None,
        cache: CompactionCache | None = None,
        max_conversations: int = 64,
        span_attributes: dict[str, str | int | float | bool] | None = None,
    ) -> None:
        super().__init__()
        if summarizer is not None and summary_model is not None:
            raise ValueError("give summarizer or summary_model, not both")
        self._agent_model: _AgentModelSummarizer | None = None
        if summary_model == "agent":
            self._agent_model = _AgentModelSummarizer()
            summarizer = self._agent_model
        elif isinstance(summary_model, str):
            raise ValueError(
                f"summary_model must be a chat model or 'agent', got {summary_model!r}"
            )
        elif summary_model is not None:
            summarizer = langchain_summarizer(summary_model)
        self.settings = AdapterSettings.from_options(
            config, summarizer, cache, record_to, focus, span_attributes
        )
        self.views: Views[BaseMessage] = Views(
            LangChainCodec(), self.settings, persistent=False, max_conversations=max_conversations
        )
        self._lock = threading.Lock()

    @property
    def compactions(self) -> int:
        """How many compactions this middleware has made, over all its conversations."""
        return sum(view.compactions for view in self.views)

    def _key(self, request: ModelRequest) -> str:
        thread = None
        try:
            from langgraph.config import get_config

            thread = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # called outside a graph run
            thread = None
        if thread is not None:
            return f"thread:{thread}"
        first = next((m for m in request.messages if isinstance(m, HumanMessage)), None)
        return conversation_key([to_canonical(first)] if first is not None else [])

    def compact_request(self, request: ModelRequest) -> ModelRequest:
        """The request with its messages (and system message) compacted."""
        if self._agent_model is not None:
            self._agent_model.model = request.model
        items: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            items.insert(0, request.system_message)
        with self._lock:
            view = self.views.get(self._key(request))
        with view.lock:
            compacted = view.messages_for_model(items)
        system = request.system_message
        if compacted and isinstance(compacted[0], SystemMessage):
            system, compacted = compacted[0], compacted[1:]
        return request.override(messages=compacted, system_message=system)

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse:
        return handler(self.compact_request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        # Off the event loop: a compaction that summarises with a model takes seconds.
        compacted = await asyncio.to_thread(self.compact_request, request)
        return await handler(compacted)
