"""iFlow CLI sessions (`~/.iflow/projects/<encoded cwd>/session-<uuid>.jsonl`).

iFlow CLI is a Gemini CLI fork that writes Claude Code's transcript envelope: `uuid`,
`parentUuid`, `sessionId` (which keeps the `session-` prefix of the file name), `type`
user/assistant, Anthropic `message.content` blocks (`text`, `tool_use`, `tool_result`) and
`message.usage.{input_tokens, output_tokens}`. Only the tool results are Gemini CLI's: a
`tool_result` block's `content` is an object, `{callId, responseParts: {functionResponse},
resultDisplay}`, or the bare `{functionResponse: {id, name, response: {output | error}}}`.
Claude Code's importer reads such a block as the JSON of the whole object, so the call was
answered with an envelope instead of its output.

This importer puts the output (`response.output`, or `Error: …` for `response.error`) in the
block's place and lets Claude Code's importer (claude_code.py) do the rest: the chain, merged
blocks, injected text. `resultDisplay` (what the terminal showed) is left out: the model saw the
function response. The usage becomes `Conversation.calls`: iFlow's models are OpenAI-compatible
and `input_tokens` is the whole prompt (no cache fields are recorded); a usage of 0 input and 0
output tokens is a provider that reported none (iFlow's GLM proxy does), not a call of size 0,
so it is left out. A record with Gemini's `usageMetadata` instead is read as Qwen Code's is.
iFlow's own compression records are not documented; none is read as one.
"""

from __future__ import annotations

from typing import Any

from compaction.formats import claude_code
from compaction.formats.claude_chain import CHAT_TYPES
from compaction.formats.common import as_text
from compaction.formats.conversation import Conversation, ModelCall
from compaction.formats.qwen_code.records import usage_call
from compaction.formats.source import Document

NAME = "iflow"
SESSION_PREFIX = "session-"


def _function_response(content: Any) -> dict[str, Any] | None:
    if not isinstance(content, dict):
        return None
    parts = content.get("responseParts")
    holder = parts if isinstance(parts, dict) else content
    response = holder.get("functionResponse")
    return response if isinstance(response, dict) else None


def _gemini_results(record: dict[str, Any]) -> int:
    message = record.get("message")
    blocks = message.get("content") if isinstance(message, dict) else None
    return sum(
        1
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and _function_response(block.get("content")) is not None
    )


def sniff(doc: Document) -> tuple[bool, str]:
    matched, reason = claude_code.sniff(doc)
    if not matched:
        return False, f"not Claude-Code-like records ({reason})"
    records = [r for r in doc.objects() if isinstance(r, dict)]
    results = sum(_gemini_results(r) for r in records)
    prefixed = any(str(r.get("sessionId", "")).startswith(SESSION_PREFIX) for r in records)
    if results:
        return True, f"Claude-Code-like records with {results} Gemini-style tool result(s)"
    if prefixed:
        return True, "Claude-Code-like records whose sessionId starts with `session-` (iFlow's)"
    return False, "no Gemini `functionResponse` tool results and no `session-` session id"


def _output(response: dict[str, Any]) -> tuple[str, bool]:
    payload = response.get("response")
    if isinstance(payload, dict) and "output" in payload:
        return as_text(payload["output"]), False
    if isinstance(payload, dict) and "error" in payload:
        return f"Error: {as_text(payload['error'])}", True
    return as_text(payload), False


def _normalised(record: dict[str, Any]) -> dict[str, Any]:
    """The record with each Gemini tool-result object replaced by its output text."""
    if not _gemini_results(record):
        return record
    blocks = []
    for block in record["message"]["content"]:
        response = (
            _function_response(block.get("content"))
            if isinstance(block, dict) and block.get("type") == "tool_result"
            else None
        )
        if response is None:
            blocks.append(block)
            continue
        text, failed = _output(response)
        call_id = block.get("tool_use_id") or response.get("id")
        blocks.append(
            {"type": "tool_result", "tool_use_id": call_id, "content": text}
            | ({"is_error": True} if failed or block.get("is_error") else {})
        )
    return {**record, "message": {**record["message"], "content": blocks}}


def load(doc: Document) -> list[Conversation]:
    records = [_normalised(r) if isinstance(r, dict) else r for r in doc.objects()]
    lines = doc.record_lines if doc.kind == "jsonl" else [1] * len(records)
    normalised = Document(
        text=doc.text, kind="jsonl", name=doc.name, records=records, record_lines=lines
    )
    conversations = claude_code.load(normalised)
    for conversation in conversations:
        conversation.format = NAME
    # The main conversation's usage; subagent conversations (sidechains) keep none.
    conversations[0].calls = _calls(normalised, conversations[0])
    return conversations


def _calls(doc: Document, conversation: Conversation) -> list[ModelCall]:
    """One ModelCall per assistant message whose record carries a usage other than 0/0.

    Claude Code's importer merges the records of one response (same `message.id`) into one
    message; grouped the same way, the n-th group is the n-th assistant message.
    """
    session = conversation.metadata.get("sessionId")
    groups: list[tuple[int, dict[str, Any]]] = []
    seen: set[Any] = set()
    for line, record in zip(doc.record_lines, doc.records, strict=True):
        message = record.get("message") if isinstance(record, dict) else None
        if (
            record.get("type") != CHAT_TYPES[1]
            or not isinstance(message, dict)
            or record.get("isSidechain")
            or (session is not None and record.get("sessionId") != session)
        ):
            continue
        key = message.get("id") or record.get("uuid")
        if key in seen:
            continue
        seen.add(key)
        groups.append((line, record))
    positions = [i for i, m in enumerate(conversation.messages) if m["role"] == "assistant"]
    if len(positions) != len(groups):
        conversation.warnings.append(
            f"the usage of {len(groups)} assistant record(s) could not be matched to the "
            f"{len(positions)} assistant message(s); no per-call usage is given"
        )
        return []
    calls = []
    for position, (line, record) in zip(positions, groups, strict=True):
        usage = record["message"].get("usage")
        usage = usage if isinstance(usage, dict) else {}
        tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
        if not isinstance(tokens_in, int) or not isinstance(tokens_out, int):
            # Some builds record Gemini's usageMetadata instead, as Qwen Code does.
            gemini = usage_call(record, position, line)
            if gemini is not None and (gemini.input_tokens or gemini.output_tokens):
                calls.append(gemini)
            continue
        if tokens_in == 0 and tokens_out == 0:
            continue
        model = record["message"].get("model")
        calls.append(
            ModelCall(
                position=position,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                model=model if isinstance(model, str) else None,
                timestamp=_text(record.get("timestamp")),
                line=line,
                call_id=_text(record["message"].get("id")),
            )
        )
    return calls


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
