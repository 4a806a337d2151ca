"""Phase 1: prune old tool outputs with no LLM — dedupe, one-line summaries, shrink arguments.

Tool outputs dominate an agent's context and age fastest: a file read twenty turns ago is stale,
and a test log only matters for its verdict. Pruning them first is free and makes everything after
it cheaper, including the summary call. The protected tail is computed on the raw conversation
exactly as Phase 2 walks it, so recent outputs are never touched.
"""

from __future__ import annotations

import json
import operator
import threading
import time
from collections.abc import Collection, Hashable, MutableMapping, Sequence
from typing import Any

from compaction.cache import remembered
from compaction.config import CompactionConfig
from compaction.deferred import later_details
from compaction.input.parsed_arguments import arguments_object, kept_object
from compaction.messages import (
    Message,
    call_arguments,
    call_name,
    loads_json,
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
        lambda: summarize_tool_output(tool_name, arguments_object(arguments), output),
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
    value: Any = kept_object(arguments)  # the input check's parse, when it made one
    if value is None:
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
    memo: MutableMapping[Hashable, Any] | None = None,
) -> PhaseResult:
    """Run Phase 1 on `messages` (never mutated); `tokens` are their counts when known;
    `pinned` are the indexes the user pinned, left as they are. `memo` keeps what this phase
    works out of the conversation for a re-run of it with other budgets (see `_Plan`)."""
    started = time.perf_counter()
    if tokens is None:
        tokens = [counter.count_message(message) for message in messages]
    head_end = find_head_end(messages, config.protect_first_n)
    tail_start, _ = walk_tail(tokens, head_end, config)
    plan = _plan_for(messages, config, memo)
    plan.walk_to(tail_start)
    output = list(messages)
    fates: dict[int, str] = {}
    # (index, its call id, kept index, kept call id, content) of each duplicate, newest first.
    duplicates: list[tuple[int, Any, int, str | None, str]] = []
    one_liners: list[dict[str, Any]] = []
    shrunk: list[dict[str, Any]] = []

    # 1. Dedupe over the whole conversation but the head (lossless: the newest copy stays).
    for duplicate in plan.duplicates:
        index = duplicate[0]
        if index < head_end or index in pinned:
            continue  # the protected head is never modified, not even by a lossless dedupe
        output[index] = {**messages[index], "content": DUPLICATE_MARKER}
        fates[index] = Fate.DEDUPLICATED
        duplicates.append(duplicate)

    # 2. One-line summaries and 3. argument shrinking, outside the head and the protected tail.
    for index, tool, line, changes in plan.steps:
        if index >= tail_start:
            break
        if index < head_end or index in pinned:
            continue  # the head, a pinned message (kept verbatim)
        message = messages[index]
        if line is not None:
            output[index] = {**message, "content": line}
            fates[index] = Fate.CUT_TO_ONE_LINE
            chars = len(message["content"])
            one_liners.append({"index": index, "tool": tool, "line": line, "chars": chars})
        else:
            output[index] = {
                **message,
                "tool_calls": _shrunk_calls(message, changes, shrunk, index),
            }
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


class _Plan:
    """Phase 1's decisions about each message that no budget changes: which tool outputs
    duplicate a newer one, which outputs are long enough to cut to one line (and that line),
    which calls' arguments shrink (and to what). Budgets decide only where they apply — not in
    the protected head, the protected tail or a pinned message — so a re-run of the same
    conversation with other budgets applies the plan the first run made (kept in the memo the
    cache holds for the conversation: input/growing.py) instead of reading every message again.

    The forward walk (one-liners and arguments) goes only as far as a run's protected tail
    starts, where the walk stopped before, and resumes from there when a later run's tail starts
    later: a cold run does no more than it did without a plan.
    """

    def __init__(self, messages: Sequence[Message], config: CompactionConfig) -> None:
        self.base = list(messages)  # the messages it was made of: reused only for these objects
        self.min_chars = config.prune_min_chars
        self.args_max_chars = config.args_max_chars
        self.args_keep_chars = config.args_keep_chars
        # Dedupe, newest to oldest. Keyed by the text itself: Python caches a string's hash, so
        # hashing costs nothing the second time, where an MD5 of every output cost a pass over
        # all of them. The MD5 (the report's name for a duplicate) is computed only for the
        # duplicates reported, and only once the report is read (_dedupe_rows).
        #: (index, its call id, kept index, kept call id, content) of each, newest first.
        self.duplicates: list[tuple[int, Any, int, str | None, str]] = []
        newest: dict[str, tuple[int, str | None]] = {}
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str):
                continue
            if len(content) <= self.min_chars or is_already_pruned(content):
                continue
            kept = newest.get(content)
            if kept is None:
                newest[content] = (index, message.get("tool_call_id"))
            else:
                self.duplicates.append((index, message.get("tool_call_id"), *kept, content))
        self._duplicated = {duplicate[0] for duplicate in self.duplicates}
        #: (index, tool, its one line, []) of each output to cut and (index, "", None,
        #: [(position, shortened arguments), ...]) of each call list to shorten, in index order.
        self.steps: list[tuple[int, str, str | None, list[tuple[int, str]]]] = []
        self._walked = 0
        # The call each result answers: the latest earlier call with its id that is still open.
        # Agents do reuse ids (tau-bench answers two different calls with one id), and a plain
        # id -> call map would name the second tool in the first result's one-line summary.
        self._open_calls: dict[str, dict[str, Any]] = {}
        # The app's sessions share one cache, so two threads may apply one plan at once: the
        # walk goes on under this lock; `steps` only grows, in index order, so a reader of the
        # steps before its own tail (walked before it reads them) is never disturbed.
        self._lock = threading.Lock()

    def fits(self, messages: Sequence[Message]) -> bool:
        """Made of these very messages (which the caller's check found unchanged). Its settings
        are in the memo's key (`_plan_for`)."""
        return len(self.base) == len(messages) and all(map(operator.is_, self.base, messages))

    def walk_to(self, stop: int) -> None:
        """Decide for every message before `stop` not decided yet."""
        with self._lock:
            self._walk_to(stop)

    def _walk_to(self, stop: int) -> None:
        messages, open_calls, steps = self.base, self._open_calls, self.steps
        for index in range(self._walked, stop):
            message = messages[index]
            role = message.get("role")
            if role == "tool":
                call = open_calls.pop(str(message.get("tool_call_id")), None)
                if index in self._duplicated:
                    continue  # a duplicate (or, in the head or pinned, kept verbatim)
                content = message.get("content")
                if not isinstance(content, str) or len(content) <= self.min_chars:
                    continue
                if is_already_pruned(content):
                    continue
                name = "unknown" if call is None else call_name(call)
                arguments = "" if call is None else call_arguments(call)
                steps.append((index, name, one_line_summary(name, arguments, content), []))
                continue
            calls = tool_calls(message)
            for call in calls:
                call_id = call.get("id")
                if isinstance(call_id, str):
                    open_calls[call_id] = call
            if role == "assistant" and calls:
                changes = self._shortened(calls)
                if changes:
                    steps.append((index, "", None, changes))
        self._walked = max(self._walked, stop)

    def _shortened(self, calls: list[dict[str, Any]]) -> list[tuple[int, str]]:
        """(position, shortened arguments) of each call whose long arguments shrink (most calls
        are short: nothing is shortened)."""
        changes = []
        for position, call in enumerate(calls):
            arguments = call_arguments(call)
            if len(arguments) <= self.args_max_chars:
                continue
            smaller = shrink_arguments(arguments, self.args_keep_chars)
            if smaller is not None and smaller != arguments:
                changes.append((position, smaller))
        return changes


#: How many plans a conversation's memo keeps (one per set of Phase 1 settings re-run with).
MAX_PLANS = 4


def _plan_for(
    messages: Sequence[Message],
    config: CompactionConfig,
    memo: MutableMapping[Hashable, Any] | None,
) -> _Plan:
    """The plan a re-run made of these messages with these settings, else a new one (kept in
    `memo` for the next run)."""
    key = ("prune plan", config.prune_min_chars, config.args_max_chars, config.args_keep_chars)
    if memo is not None:
        plan = memo.get(key)
        if isinstance(plan, _Plan) and plan.fits(messages):
            return plan
    plan = _Plan(messages, config)
    if memo is not None:
        # Each step one operation on the dict (atomic: another thread may be here too).
        plans = [k for k in list(memo) if isinstance(k, tuple) and k[:1] == ("prune plan",)]
        if key not in plans and len(plans) >= MAX_PLANS:
            memo.pop(plans[0], None)  # the plan made first
        memo[key] = plan
    return plan


def _shrunk_calls(
    message: Message, changes: list[tuple[int, str]], shrunk: list[dict[str, Any]], index: int
) -> list[dict[str, Any]]:
    """The message's calls with the plan's shortened arguments, each reported in `shrunk`
    (new dicts each run: an output is the caller's to edit)."""
    calls: list[dict[str, Any]] = list(message["tool_calls"])
    for position, smaller in changes:
        call = calls[position]
        calls[position] = {**call, "function": {**call["function"], "arguments": smaller}}
        shrunk.append(
            {
                "index": index,
                "tool_call_id": call.get("id"),
                "tool": call_name(call),
                "chars_before": len(call_arguments(call)),
                "chars_after": len(smaller),
            }
        )
    return calls


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
