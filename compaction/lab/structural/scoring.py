"""Which structural facts a compacted context still holds."""

from __future__ import annotations

from collections.abc import Sequence

from compaction.lab.structural.definitions import tight
from compaction.lab.structural.facts import StructuralFact, StructuralRecall, normalise
from compaction.lab.structural.missing import missing_statements
from compaction.lab.structural.transcript import arguments, leaves, readable, text
from compaction.messages import Message, call_name, tool_calls


def haystack(messages: Sequence[Message]) -> str:
    """Every message's text, decoded call arguments and tool names, normalised, one per part."""
    parts = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        pieces = [readable(text(message))]
        for call in tool_calls(message):
            if isinstance(call, dict):
                pieces.append(call_name(call))
                pieces += [value for _, value in leaves(arguments(call))]
        parts.append(normalise("\n".join(pieces)))
    return "\x00".join(parts)


def structural_recall(
    facts: Sequence[StructuralFact], compacted: Sequence[Message]
) -> StructuralRecall:
    """Which structural `facts` survive in `compacted`: a fact's key appears in one message;
    a definition's signature with the whitespace inside its brackets closed up; a missing path
    on a line that says it is missing (missing.py)."""
    text_of_context = haystack(compacted)
    signatures: str | None = None
    said_missing: list[str] | None = None
    result = StructuralRecall()
    for fact in facts:
        if fact.category == "missing_paths":
            if said_missing is None:
                said_missing = missing_statements(compacted)
            kept = any(fact.key in line for line in said_missing)
        elif fact.category == "definitions" and fact.key_text:
            if signatures is None:
                signatures = tight(text_of_context)
            kept = fact.key in text_of_context or fact.key in signatures
        else:
            kept = fact.key in text_of_context
        result.count(fact, kept)
    return result
