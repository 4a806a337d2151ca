"""Phase 1: prune old tool outputs with no LLM — dedupe, one-line summaries, shrink arguments.

Tool outputs dominate an agent's context and age fastest: a file read twenty turns ago is stale,
and a test log only matters for its verdict. Pruning them first is free and makes everything after
it cheaper, including the summary call. The protected tail is computed on the raw conversation
exactly as Phase 2 walks it, so recent outputs are never touched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

from compaction.cache import remembered
from compaction.config import CompactionConfig
from compaction.deferred import later_details
from compaction.messages import (
    Message,
    call_arguments,
    call_name,
    loads_json,
    parse_arguments,
    tool_calls,
)
from compaction.phases.boundaries import find_head_end, walk_tail
from compaction.result import Fate, PhaseResult
from compaction.text.one_liners import (
    DUPLICATE_MARKER,
    is_already_pruned,
    summarize_tool_output,
)
from compaction.tokens import TokenCounter
from compaction.tokens.tally import TokenTally, later_if, total_of

TRUNCATION_SUFFIX = "...[truncated]"
#: One encoder for every shrunk argument string: `json.dumps(value, ensure_ascii=False)` builds
#: a new JSONEncoder on each call (any keyword does), a third of the cost of a short document.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


# One-liners, digests and shrunk arguments are pure functions of their strings. Re-running with
# other budgets meets mostly the same outputs again (the same string objects, whose hashes
# Python keeps), so they are remembered in the running compaction's cache (cache.py): bounded
# in bytes, owned by its Compactor.


def one_line_summary(tool_name: str, arguments: str, output: str) -> str:
    return remembered(
        ("one-liner", tool_name, arguments, output),
        len(arguments) + len(output),
        lambda: summarize_tool_output(tool_name, parse_arguments(arguments), output),
    )


def content_digest(content: str) -> str:
    """The MD5 a dedupe row names its output by in the report."""

    def digest() -> str:
        import hashlib  # only a conversation with duplicates needs it (OpenSSL costs ~3 ms)

        return hashlib.md5(content.encode("utf-8")).hexdigest()

    return remembered(("digest", content), len(content), digest)


def shrink_arguments(arguments: str, keep_chars: int) -> str | None:
    """Arguments with every long string value cut, re-serialised; None when not valid JSON.

    Invalid JSON is left alone on purpose: slicing it (the seed's `args[:200]`) would send the
    provider arguments it rejects.
    """
    return remembered(
        ("shrunk", arguments, keep_chars),
        len(arguments),
        lambda: _shrunk(arguments, keep_chars),
    )


def _shrunk(arguments: str, keep_chars: int) -> str | None:
    try:
        value = loads_json(arguments)
    except (ValueError, RecursionError):
        return None

    def cut(node: Any) -> Any:
        if isinstance(node, str):
            return node[:keep_chars] + TRUNCATION_SUFFIX if len(node) > keep_chars else node
        if isinstance(node, list):
            return [cut(item) for item in node]
        if isinstance(node, dict):
            return {key: cut(item) for key, item in node.items()}
        return node

    return _ENCODER.encode(cut(value))


def prune(
    messages: list[Message],
    config: CompactionConfig,
    counter: TokenCounter,
    tokens: Sequence[int] | None = None,
    *,
    pinned: Collection[int] = (),
) -> PhaseResult:
    """Run Phase 1 on `messages` (never mutated); `tokens` are their counts when known;
    `pinned` are the indexes the user pinned, left as they are."""
    started = time.perf_counter()
    if tokens is None:
        tokens = [counter.count_message(message) for message in messages]
    head_end = find_head_end(messages, config.protect_first_n)
    tail_start, _ = walk_tail(tokens, head_end, config)
    output = list(messages)
    fates: dict[int, str] = {}
    # (index, its call id, kept index, kept call id, content) of each duplicate, newest first.
    duplicates: list[tuple[int, Any, int, str | None, str]] = []
    one_liners: list[dict[str, Any]] = []
    shrunk: list[dict[str, Any]] = []

    # 1. Dedupe, newest to oldest, over the whole conversation but the head (lossless: the newest
    # copy stays).
    # Keyed by the text itself: Python caches a string's hash, so a re-run over the same
    # messages hashes nothing, where an MD5 of every output cost a pass over all of them. The MD5
    # (the report's name for a duplicate) is computed only for the duplicates reported, and only
    # once the report is read (_dedupe_rows).
    newest: dict[str, tuple[int, str | None]] = {}
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message.get("role") != "tool" or not isinstance(content, str):
            continue
        if len(content) <= config.prune_min_chars or is_already_pruned(content):
            continue
        if content not in newest:
            newest[content] = (index, message.get("tool_call_id"))
            continue
        if index < head_end or index in pinned:
            continue  # the protected head is never modified, not even by a lossless dedupe
        kept_index, kept_call = newest[content]
        output[index] = {**message, "content": DUPLICATE_MARKER}
        fates[index] = Fate.DEDUPLICATED
        duplicates.append((index, message.get("tool_call_id"), kept_index, kept_call, content))

    # 2. One-line summaries and 3. argument shrinking, outside the head and the protected tail.
    # One walk from the start also finds the call each result answers: the latest earlier call
    # with its id that is still open. Agents do reuse ids (tau-bench answers two different calls
    # with one id), and a plain id -> call map would name the second tool in the first result's
    # one-line summary.
    open_calls: dict[str, dict[str, Any]] = {}
    for index in range(tail_start):
        message = messages[index]
        role = message.get("role")
        if role == "tool":
            call = open_calls.pop(str(message.get("tool_call_id")), None)
            if index < head_end or index in pinned or index in fates:
                continue  # the head, a pinned result (kept verbatim), a duplicate
            content = message.get("content")
            if not isinstance(content, str) or len(content) <= config.prune_min_chars:
                continue
            if is_already_pruned(content):
                continue
            name = "unknown" if call is None else call_name(call)
            arguments = "" if call is None else call_arguments(call)
            line = one_line_summary(name, arguments, content)
            output[index] = {**message, "content": line}
            fates[index] = Fate.CUT_TO_ONE_LINE
            one_liners.append({"index": index, "tool": name, "line": line, "chars": len(content)})
            continue
        calls = tool_calls(message)
        for call in calls:
            call_id = call.get("id")
            if isinstance(call_id, str):
                open_calls[call_id] = call
        if role == "assistant" and calls and index >= head_end and index not in pinned:
            new_calls = _shrink_calls(calls, config, shrunk, index)
            if new_calls is not None:
                output[index] = {**message, "tool_calls": new_calls}
                fates[index] = Fate.ARGUMENTS_SHORTENED

    # Figures to report; with a tally (tokens/tally.py) counted when first read.
    counts = tokens
    tokens_after = later_if(
        isinstance(tokens, TokenTally),
        lambda: sum(
            counter.count_message(output[i]) if i in fates else counts[i]
            for i in range(len(output))
        ),
    )
    details: dict[str, Any] = {
        "protected_head_end": head_end,
        "protected_tail_start": tail_start,
        "dedupe": [],
        "summaries": one_liners,
        "args_truncated": shrunk,
        "deduplicated_count": len(duplicates),
        "summarised_count": len(one_liners),
        "args_truncated_count": len(shrunk),
    }
    return PhaseResult(
        name="prune",
        messages=output,
        origins=list(range(len(messages))),
        tokens_before=total_of(tokens),
        tokens_after=tokens_after,
        fates=fates,
        details=(
            later_details(details, {"dedupe": lambda: _dedupe_rows(duplicates)})
            if duplicates
            else details
        ),
        duration_s=time.perf_counter() - started,
    )


def _dedupe_rows(duplicates: list[tuple[int, Any, int, str | None, str]]) -> list[dict[str, Any]]:
    """The report's rows of the duplicates, oldest first, each naming its output by MD5: only
    a reader of the report needs the digests, so they wait for one (an agent that sends the
    messages on never pays for them)."""
    return [
        {
            "hash": content_digest(content),
            "index": index,
            "tool_call_id": call_id,
            "kept_index": kept_index,
            "kept_tool_call_id": kept_call,
            "chars": len(content),
        }
        for index, call_id, kept_index, kept_call, content in reversed(duplicates)
    ]


def _shrink_calls(
    calls: list[dict[str, Any]], config: CompactionConfig, shrunk: list[dict[str, Any]], index: int
) -> list[dict[str, Any]] | None:
    """The calls with their long arguments shortened, or None when none changed (most calls
    are short: their message keeps its list, nothing is copied)."""
    new_calls: list[dict[str, Any]] | None = None
    for position, call in enumerate(calls):
        arguments = call_arguments(call)
        if len(arguments) <= config.args_max_chars:
            continue
        smaller = shrink_arguments(arguments, config.args_keep_chars)
        if smaller is None or smaller == arguments:
            continue
        if new_calls is None:
            new_calls = list(calls)
        new_calls[position] = {**call, "function": {**call["function"], "arguments": smaller}}
        shrunk.append(
            {
                "index": index,
                "tool_call_id": call.get("id"),
                "tool": call_name(call),
                "chars_before": len(arguments),
                "chars_after": len(smaller),
            }
        )
    return new_calls


def counts_after(
    result: PhaseResult, tokens: Sequence[int], counter: TokenCounter
) -> Sequence[int]:
    """Per-message tokens after Phase 1, recounting only the messages it changed (a tally's:
    when they are asked for)."""
    if isinstance(tokens, TokenTally):
        return tokens.over(result.messages, result.fates)
    return [
        counter.count_message(message) if index in result.fates else tokens[index]
        for index, message in enumerate(result.messages)
    ]


def recounted(
    tokens: Sequence[int],
    messages: Sequence[Message],
    changed: Collection[int],
    counter: TokenCounter,
) -> Sequence[int]:
    """`tokens` of `messages`, where the messages at `changed` are not the ones counted (an
    earlier summary split off them): theirs counted again."""
    if isinstance(tokens, TokenTally):
        return tokens.over(messages, changed) if changed else tokens
    return [
        counter.count_message(messages[i]) if i in changed else count
        for i, count in enumerate(tokens)
    ]
