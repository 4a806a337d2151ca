"""OpenAI Agents SDK: a model-input filter that compacts what the runner sends each model call.

```python
from agents import Agent, RunConfig, Runner
from compaction import CompactionConfig
from compaction.integrations.openai_agents import CompactionFilter

run_config = RunConfig(call_model_input_filter=CompactionFilter(CompactionConfig(...)))
result = await Runner.run(agent, "…", run_config=run_config)
```

The runner calls `RunConfig.call_model_input_filter` right before each model call with the
instructions and every input item of the run (a session's history included); the filter returns
the compacted context. The runner keeps its items (and a session stores them all); the filter
remembers per conversation how much of them its compacted context covers, so each call converts
and counts only what is new, across runs of one session too.

Items are Responses-API items: user, system and developer messages; an assistant turn (its output
message, its `function_call`s, its reasoning and hosted-tool items, in order) becomes one
canonical assistant message; each `function_call_output` a tool message. Items with no canonical
form ride with the assistant turn they belong to. Kept items are handed back as the very dicts the
runner gave; changed ones as patched copies. The instructions count toward the window and are
never cut. `summary_model="agent"` has the agent's model write the summary. Needs the
`compaction-lab[openai-agents]` extra.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Sequence
from typing import Any

from agents import Model, ModelSettings
from agents.models.interface import ModelTracing
from agents.run_config import CallModelData, ModelInputData

from compaction.cache import CompactionCache
from compaction.config import CompactionConfig
from compaction.integrations.summarizing import FrameworkSummarizer
from compaction.integrations.view import AdapterSettings, Views, conversation_key
from compaction.messages import Message
from compaction.summarizers.base import Summarizer

FRAMEWORK = "openai-agents"
Item = dict[str, Any]
_ROLES = {"user": "user", "system": "system", "developer": "system"}


def _is_input_message(item: Item) -> bool:
    return item.get("role") in _ROLES and item.get("type", "message") == "message"


def _input_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content or []:
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "input_image":
            url = part.get("image_url") or part.get("file_id") or ""
            parts.append({"type": "image_url", "image_url": {"url": str(url)}})
        else:
            parts.append({"type": "text", "text": f"[{kind}]"})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _assistant_message(group: Sequence[Item]) -> Message:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in group:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "refusal":
                    texts.append(str(part.get("refusal", "")))
        elif kind == "function_call":
            calls.append(
                {
                    "id": item.get("call_id"),
                    "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")},
                }
            )
        elif kind == "reasoning":
            reasoning.extend(str(s.get("text", "")) for s in item.get("summary") or [])
    message: Message = {"role": "assistant", "content": "".join(texts)}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning"] = "\n".join(reasoning)
    return message


class AgentsCodec:
    """Responses-API input items to canonical messages and back (view.Codec)."""

    framework = FRAMEWORK

    def encode(self, items: Sequence[Item]) -> tuple[list[Message], list[Any]]:
        messages: list[Message] = []
        held: list[Any] = []
        group: list[Item] = []

        def close() -> None:
            if group:
                messages.append(_assistant_message(group))
                held.append(tuple(group))
                group.clear()

        for item in items:
            if _is_input_message(item):
                close()
                role = _ROLES[str(item["role"])]
                messages.append({"role": role, "content": _input_content(item.get("content"))})
                held.append((item,))
            elif item.get("type") == "function_call_output":
                close()
                output = item.get("output")
                text = output if isinstance(output, str) else _input_content(output)
                messages.append(
                    {"role": "tool", "tool_call_id": item.get("call_id"), "content": text}
                )
                held.append((item,))
            elif (
                str(item.get("type", "")).endswith("_output")
                and not group
                and held
                and messages[-1].get("role") == "assistant"
            ):
                # A hosted tool's output rides with the assistant turn that called it.
                held[-1] = (*held[-1], item)
            else:
                group.append(item)
        close()
        return messages, held

    def decode(
        self, messages: Sequence[Message], held: Sequence[Any], unchanged: Sequence[bool]
    ) -> list[Item]:
        out: list[Item] = []
        for message, source, same in zip(messages, held, unchanged, strict=True):
            if source is not None and same:
                out.extend(source)
            elif source is not None and message.get("role") == "assistant":
                out.extend(_patched_turn(message, source))
            elif source is not None and len(source) == 1:
                out.append(_patched_item(message, source[0]))
            else:
                out.extend(_new_items(message))
        return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _item_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    return [
        {"type": "input_image", "image_url": p["image_url"]["url"], "detail": "auto"}
        if p.get("type") == "image_url"
        else {"type": "input_text", "text": str(p.get("text", ""))}
        for p in content or []
    ]


def _patched_item(message: Message, original: Item) -> Item:
    item = copy.copy(original)
    if original.get("type") == "function_call_output":
        item["output"] = _text(message.get("content"))
    else:
        item["content"] = _item_content(message.get("content"))
    return item


def _patched_turn(message: Message, group: Sequence[Item]) -> list[Item]:
    calls = {call.get("id"): call for call in message.get("tool_calls") or []}
    text = _text(message.get("content"))
    out: list[Item] = []
    text_placed = False
    for item in group:
        kind = item.get("type")
        if kind == "message":
            if not text_placed and text:
                patched = copy.copy(item)
                patched["content"] = [{"type": "output_text", "text": text, "annotations": []}]
                out.append(patched)
            text_placed = True
        elif kind == "function_call":
            call = calls.get(item.get("call_id"))
            if call is None:
                continue  # a call compaction stripped
            arguments = call["function"].get("arguments")
            if arguments == item.get("arguments"):
                out.append(item)
            else:
                patched = copy.copy(item)
                patched["arguments"] = arguments
                out.append(patched)
        else:
            out.append(item)
    if text and not text_placed:
        out.insert(0, _output_message(text))
    return out


def _output_message(text: str) -> Item:
    # An output message carries an id (the SDK's placeholder for one it made itself): without
    # one the SDK reads the item as input, whose parts may not be `output_text`.
    return {
        "id": "__fake_id__",
        "status": "completed",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _new_items(message: Message) -> list[Item]:
    role = message.get("role")
    if role == "tool":
        return [
            {
                "type": "function_call_output",
                "call_id": message.get("tool_call_id"),
                "output": _text(message.get("content")),
            }
        ]
    if role == "assistant":
        items = [_output_message(_text(message.get("content")))] if message.get("content") else []
        for call in message.get("tool_calls") or []:
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": call["function"]["name"],
                    "arguments": call["function"].get("arguments"),
                }
            )
        return items
    return [{"role": role, "content": _item_content(message.get("content"))}]


# -- the summary by an Agents SDK model -----------------------------------------------------------
def agents_summarizer(model: Model | None = None) -> FrameworkSummarizer:
    """A Summarizer whose summary an Agents SDK `Model` writes (`None`: the agent's model, set
    by the filter from each call)."""
    holder: dict[str, Any] = {"model": model}

    async def complete(system: str, prompt: str) -> str:
        chosen = holder["model"]
        if chosen is None:
            raise RuntimeError("no agent model seen yet to write the summary")
        response = await chosen.get_response(
            system_instructions=system,
            input=prompt,
            model_settings=ModelSettings(),
            tools=[],
            output_schema=None,
            handoffs=[],
            tracing=ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
        return "".join(
            str(getattr(part, "text", ""))
            for item in response.output
            if getattr(item, "type", None) == "message"
            for part in getattr(item, "content", None) or []
            if getattr(part, "type", None) == "output_text"
        )

    summarizer = FrameworkSummarizer("openai-agents:model", complete_async=complete)
    summarizer.holder = holder  # type: ignore[attr-defined]
    return summarizer


def _agent_model(data: CallModelData[Any]) -> Model:
    model = data.agent.model
    if isinstance(model, Model):
        return model
    from agents.models.multi_provider import MultiProvider

    return MultiProvider().get_model(model)


# -- the filter ------------------------------------------------------------------------------------
class CompactionFilter:
    """`RunConfig(call_model_input_filter=CompactionFilter(config))`: see the module's doc.

    `conversation_id=` names the conversation when one filter serves one (else each is known
    by its opening request)."""

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
        conversation_id: str | None = None,
        span_attributes: dict[str, str | int | float | bool] | None = None,
    ) -> None:
        if summarizer is not None and summary_model is not None:
            raise ValueError("give summarizer or summary_model, not both")
        if isinstance(summary_model, str) and summary_model != "agent":
            raise ValueError(f"summary_model must be a Model or 'agent', got {summary_model!r}")
        self._model_summarizer: FrameworkSummarizer | None = None
        self._agent_model = summary_model == "agent"
        if summary_model is not None:
            model = None if self._agent_model else summary_model
            self._model_summarizer = summarizer = agents_summarizer(model)
        self.settings = AdapterSettings.from_options(
            config, summarizer, cache, record_to, focus, span_attributes
        )
        self.views: Views[Item] = Views(
            AgentsCodec(), self.settings, persistent=False, max_conversations=max_conversations
        )
        self.conversation_id = conversation_id
        self._lock = threading.Lock()

    @property
    def compactions(self) -> int:
        return sum(view.compactions for view in self.views)

    def compact(self, key: str, items: list[Item]) -> list[Item]:
        with self._lock:
            view = self.views.get(key)
        with view.lock:
            return view.messages_for_model(items)

    def filter(self, instructions: str | None, items: list[Item]) -> ModelInputData:
        """The compacted input (synchronous: the filter runs it in a worker thread)."""
        lead: list[Item] = []
        if instructions:
            lead = [{"role": "system", "content": instructions, "type": "message"}]
        key = self.conversation_id or conversation_key(AgentsCodec().encode(items[:1])[0])
        compacted = self.compact(key, [*lead, *items])
        if lead and compacted and compacted[0].get("role") == "system":
            # The instructions, as compaction left them (it may append its note to them).
            instructions = _text(compacted[0].get("content"))
            compacted = compacted[1:]
        return ModelInputData(input=compacted, instructions=instructions)

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        if self._model_summarizer is not None:
            self._model_summarizer.loop = asyncio.get_running_loop()
            if self._agent_model:
                self._model_summarizer.holder["model"] = _agent_model(data)  # type: ignore[attr-defined]
        model_data = data.model_data
        return await asyncio.to_thread(self.filter, model_data.instructions, list(model_data.input))
