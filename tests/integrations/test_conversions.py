"""Each framework's messages to canonical messages and back: lossless for what the framework
holds. Kept messages come back as the very objects (every framework-specific field with them);
after a real compaction, encoding what the adapter hands the framework gives exactly the
messages the engine produced (so what is sent is what was compacted), with what the engine
changed patched into the originals."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from compaction import CompactionConfig
from compaction.integrations.view import AdapterSettings, Codec, ConversationView

CONFIG = CompactionConfig(
    context_length=3_000, threshold_ratio=0.5, summary_min_tokens=200, summary_max_tokens=500
)
LOG = "\n".join(f"line {n}: tests/test_api.py::test_{n} PASSED in 0.{n:02d}s" for n in range(60))


def round_trip(codec: Codec[Any], items: list[Any], new_keeps_reasoning: bool = True) -> None:
    messages, held = codec.encode(items)
    back = codec.decode(messages, held, [True] * len(messages))
    assert len(back) == len(items) and all(a is b for a, b in zip(back, items, strict=True))
    again, _ = codec.encode(codec.decode(messages, [None] * len(messages), [False] * len(messages)))
    if not new_keeps_reasoning:
        # A provider's reasoning item needs the provider's own id: one cannot be made from text.
        messages = [{k: v for k, v in m.items() if k != "reasoning"} for m in messages]
    assert again == messages  # new objects built from canonical ones encode to the same


def compacted(codec: Codec[Any], items: list[Any]) -> tuple[list[Any], ConversationView[Any]]:
    view = ConversationView(codec, AdapterSettings(config=CONFIG), "test", persistent=False)
    out = view.messages_for_model(items)
    assert view.compactions == 1 and view.last_result is not None
    assert codec.encode(out)[0] == view.last_result.messages
    return out, view


# -- LangChain -------------------------------------------------------------------------------------
def test_langchain_round_trip_and_compaction() -> None:
    pytest.importorskip("langchain")
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from compaction.integrations.langchain import LangChainCodec

    image = "data:image/png;base64," + base64.b64encode(b"png").decode()
    items: list[Any] = [
        SystemMessage("You are a build assistant."),
        HumanMessage(
            [
                {"type": "text", "text": "Why does the build fail?"},
                {"type": "image_url", "image_url": {"url": image}},
            ],
            id="h1",
        ),
    ]
    for n in range(8):
        items.append(
            AIMessage(
                content=[{"type": "reasoning", "reasoning": f"read page {n}"}],
                tool_calls=[{"name": "read_page", "args": {"page": n}, "id": f"c{n}"}],
                id=f"a{n}",
                response_metadata={"model_name": "gpt-4o"},
                usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
            )
        )
        items.append(
            ToolMessage(LOG, tool_call_id=f"c{n}", name="read_page", id=f"t{n}", artifact={"n": n})
        )
    items.append(HumanMessage("Now fix it.", id="h2"))
    codec = LangChainCodec()
    round_trip(codec, items)
    out, _view = compacted(codec, items)
    assert out[-1] is items[-1]  # the request: the same object
    # The system message, patched (compaction appends its note), is the original's copy.
    assert out[0].content.startswith(items[0].content) and out[0] is not items[0]
    assert items[1] in out  # the multimodal opening request, kept
    tools = [m for m in out if isinstance(m, ToolMessage)]
    kept_ids = {m.id for m in tools}
    assert kept_ids <= {f"t{n}" for n in range(8)}
    for message in out:  # a changed message keeps its id and metadata
        if isinstance(message, AIMessage) and message not in items:
            original = next(m for m in items if getattr(m, "id", None) == message.id)
            assert message.response_metadata == original.response_metadata
            assert message.usage_metadata == original.usage_metadata


# -- Pydantic AI -----------------------------------------------------------------------------------
def test_pydantic_ai_round_trip_and_compaction() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import (
        BinaryContent,
        ImageUrl,
        ModelRequest,
        ModelResponse,
        RetryFeedbackPart,
        RetryInfo,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    from compaction.integrations.pydantic_ai import PydanticAICodec

    items: list[Any] = [
        ModelRequest(
            parts=[
                SystemPromptPart("You are a build assistant."),
                UserPromptPart(
                    [
                        "Why does the build fail?",
                        ImageUrl(url="https://example.test/a.png"),
                        BinaryContent(data=b"png", media_type="image/png"),
                    ]
                ),
            ],
            run_id="run-1",
        )
    ]
    for n in range(8):
        items.append(
            ModelResponse(
                parts=[
                    ThinkingPart(f"read page {n}", signature="sig"),
                    TextPart(f"Reading page {n}."),
                    ToolCallPart("read_page", {"page": n}, tool_call_id=f"c{n}"),
                ],
                usage=RequestUsage(input_tokens=10, output_tokens=2),
                model_name="gpt-4o",
                provider_name="openai",
            )
        )
        items.append(ModelRequest(parts=[ToolReturnPart("read_page", LOG, tool_call_id=f"c{n}")]))
    feedback = RetryFeedbackPart("Answer in one line.", retry=RetryInfo("model_retry", attempt=1))
    items.append(ModelRequest(parts=[feedback]))
    items.append(ModelRequest(parts=[UserPromptPart("Now fix it.")]))
    codec = PydanticAICodec()
    round_trip(codec, items)
    out, _view = compacted(codec, items)
    assert out[-1] is items[-1]
    for message in out:
        if isinstance(message, ModelResponse) and message not in items:
            assert message.model_name == "gpt-4o" and message.usage.input_tokens == 10
            assert any(isinstance(p, ThinkingPart) and p.signature == "sig" for p in message.parts)


# -- OpenAI Agents SDK -----------------------------------------------------------------------------
def test_agents_sdk_round_trip_and_compaction() -> None:
    pytest.importorskip("agents")
    from compaction.integrations.openai_agents import AgentsCodec

    items: list[Any] = [
        {"role": "system", "content": "You are a build assistant.", "type": "message"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Why does the build fail?"},
                {
                    "type": "input_image",
                    "image_url": "https://example.test/a.png",
                    "detail": "auto",
                },
            ],
        },
    ]
    for n in range(8):
        items += [
            {
                "type": "reasoning",
                "id": f"rs{n}",
                "summary": [{"type": "summary_text", "text": f"page {n}"}],
            },
            {
                "id": f"msg{n}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": f"Reading page {n}.", "annotations": []}
                ],
            },
            {
                "type": "function_call",
                "id": f"fc{n}",
                "call_id": f"c{n}",
                "name": "read_page",
                "arguments": f'{{"page": {n}}}',
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": f"c{n}", "output": LOG},
        ]
    items.append({"role": "user", "content": "Now fix it."})
    codec = AgentsCodec()
    round_trip(codec, items, new_keeps_reasoning=False)
    out, _view = compacted(codec, items)
    assert out[-1] is items[-1] and out[0]["content"].startswith("You are a build assistant.")
    assert any(i.get("type") == "reasoning" for i in out)  # kept turns keep their reasoning
