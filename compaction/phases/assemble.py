"""Phase 4: splice the summary between head and tail without breaking the provider's rules.

Providers reject two consecutive messages of the same role in several places, so the summary's
role is chosen against its neighbours; when neither role fits it is merged into the first tail
message instead. When the head holds no turn (nothing, or only the system prompt), the summary
opens the conversation and Anthropic requires that first turn to be a user's: it is a user turn,
or merged into the tail's first turn when that is a user message too. The system message gets a
one-time note so the model knows its context was compacted and builds on the summary rather than
re-doing work.

The neighbours that decide the role are the messages that survive Phase 5: a stray tool result at
the start of the tail is removed (or moved next to its call) by the cleanup, so it is never the
summary's neighbour, and choosing the role against it broke Anthropic's alternation. A pinned
request (Phase 2 step 4) goes right after the summary, before the tail: the role is chosen against
the head and that user turn; the middle messages the user pinned go there too, with it, in
conversation order. A merged summary ends with MERGE_SEPARATOR, so a later pass can give
the message its own text back (Phase 3 step 1).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from compaction.messages import (
    Message,
    append_text,
    content_text,
    has_tool_calls,
    prepend_text,
)
from compaction.phases.cleanup import cleanup
from compaction.result import Fate, PhaseResult
from compaction.summary import MERGE_SEPARATOR, SUMMARY_PREFIX, SYSTEM_NOTE


def summary_content(summary_text: str, is_marker: bool) -> str:
    """The summary message's text: the prefix, a newline, the summary (a marker stands alone)."""
    return summary_text if is_marker else f"{SUMMARY_PREFIX}\n{summary_text}"


def choose_role(last_head_role: str | None, first_tail_role: str | None) -> tuple[str | None, str]:
    """(role, reason); role None means: merge the summary into the first tail message."""
    if last_head_role is None:
        # Nothing but a system prompt before it: the summary is the first turn, and Anthropic
        # requires the first turn to be the user's. Flipping to assistant would break that rule,
        # so a tail that also opens with a user turn takes the summary merged into it.
        if first_tail_role == "user":
            return None, (
                "no turn comes before the summary, so it must open the conversation as user, "
                "but the tail's first turn is a user message too: the summary is merged into it"
            )
        return "user", "no turn comes before the summary, so it opens the conversation as user"
    role = "user" if last_head_role in ("assistant", "tool") else "assistant"
    article = "an" if last_head_role[:1] in "aeiou" else "a"
    reason = (
        f"the head ends with {article} {last_head_role} message, so the summary speaks as {role}"
    )
    if role == first_tail_role:
        flipped = "assistant" if role == "user" else "user"
        if flipped != last_head_role:
            return flipped, (
                f"{role} would sit next to the tail's first message (also {role}), "
                f"so the role flipped to {flipped}"
            )
        return None, (
            f"neither role fits: {role} clashes with the first tail message and {flipped} with "
            "the last head message, so the summary is merged into the first tail message"
        )
    return role, reason


def _nearest_turn_role(messages: Iterable[tuple[int, Message]], leading_end: int) -> str | None:
    """The role of the first message that is a turn, as Anthropic will see it.

    The leading system messages are lifted out of the list (the system parameter), so they are no
    turn; a later system or developer message is sent as user text in place, so it is a user turn.
    """
    for index, message in messages:
        role = message.get("role")
        if role not in ("system", "developer"):
            return str(role)
        if index >= leading_end:
            return "user"
    return None


def _leading_system_end(messages: Sequence[Message]) -> int:
    for index, message in enumerate(messages):
        if message.get("role") not in ("system", "developer"):
            return index
    return len(messages)


def _survivor_views(
    head: list[Message], tail: list[Message], orphan_strategy: str | None
) -> tuple[list[Message], list[Message]]:
    """Head and tail as Phase 5 will leave them around the summary (the same lists when no
    strategy is given): a trial cleanup of head + tail, split before the first tail message that
    stays in place. Tool results before it — moved next to a head call, stubs — join the head;
    removed ones are gone."""
    if orphan_strategy is None:
        return head, tail
    trial, _ = cleanup([*head, *tail], list(range(len(head) + len(tail))), orphan_strategy)
    split = len(trial.messages)
    for position, (message, origin) in enumerate(zip(trial.messages, trial.origins, strict=True)):
        if origin is not None and origin >= len(head) and message.get("role") != "tool":
            split = position
            break
    return trial.messages[:split], trial.messages[split:]


def _turn_role(message: Message) -> str:
    """The side a message is on as Anthropic sees it past the opening system messages."""
    role = str(message.get("role"))
    return "user" if role in ("system", "developer") else role


def _merge_joins_a_run(tail: Sequence[Message]) -> bool:
    """Whether the message the summary would be merged into is followed by a turn of its own
    side (which Anthropic would merge with it, summary and all)."""
    target = _merge_target(tail)
    if target + 1 >= len(tail) or tail[target + 1].get("role") == "tool":
        return False
    sides = {_turn_role(tail[target]) == "assistant", _turn_role(tail[target + 1]) == "assistant"}
    return len(sides) == 1


def _gap_among_pinned(tail: Sequence[Message], last_gap: int) -> tuple[int, str, str] | None:
    """(position in `tail`, role, reason) of the first gap after one of the pinned messages
    that open `tail` (up to `last_gap`) where the summary fits as a turn of its own, never
    between a call and its results; None when there is none."""
    for gap in range(1, min(last_gap, len(tail) - 1) + 1):
        before, after = tail[gap - 1], tail[gap]
        if after.get("role") == "tool" or has_tool_calls(before):
            continue
        role, reason = choose_role(_turn_role(before), _turn_role(after))
        if role is not None:
            return (
                gap,
                role,
                (
                    f"no role fits before the first pinned message, so the summary goes after the "
                    f"{gap} pinned message(s) that open the kept part: {reason}"
                ),
            )
    return None


def _merge_target(tail: Sequence[Message]) -> int:
    """The tail's first real turn: not a system notice, and not a tool result (which Phase 5
    may remove, taking the summary with it)."""
    return next(
        (i for i, m in enumerate(tail) if m.get("role") not in ("system", "developer", "tool")),
        next((i for i, m in enumerate(tail) if m.get("role") not in ("system", "developer")), 0),
    )


def assemble(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    head_end: int,
    tail_start: int,
    summary_text: str,
    is_marker: bool,
    excluded: set[int],
    *,
    pinned: int | None = None,
    kept: Sequence[int] = (),
    orphan_strategy: str | None = None,
) -> PhaseResult:
    """Head + summary (+ pinned request and pinned messages) + tail. `excluded` are tail
    indices taken out (earlier summaries); `pinned` is the index of the latest request kept
    right after the summary, `kept` those of the middle messages the user pinned (kept there
    too, in order); with `orphan_strategy`, roles are chosen against what Phase 5 leaves."""
    started = time.perf_counter()
    head = list(messages[:head_end])
    head_origins = list(origins[:head_end])
    positions = [i for i in range(tail_start, len(messages)) if i not in excluded]
    verbatim = sorted({*kept, *([pinned] if pinned is not None else [])})
    positions[:0] = verbatim
    tail = [messages[i] for i in positions]
    tail_origins = [origins[i] for i in positions]
    fates: dict[int, str] = {}
    details: dict[str, Any] = {}

    note_added = False
    if head and head[0].get("role") == "system":
        system = head[0]
        if SYSTEM_NOTE not in content_text(system):
            head[0] = {**system, "content": append_text(system.get("content"), SYSTEM_NOTE)}
            note_added = True
            origin = head_origins[0]
            if origin is not None:
                fates[origin] = Fate.NOTE_ADDED
    details["system_note_added"] = note_added
    details["system_note"] = SYSTEM_NOTE

    content = summary_content(summary_text, is_marker)
    # The neighbours that decide the summary's role are the nearest turns as Anthropic sees them
    # (see _nearest_turn_role): the strictest provider about alternation, among the messages
    # that survive Phase 5.
    head_view, tail_view = _survivor_views(head, tail, orphan_strategy)
    # The summary is a turn, so only the head's opening system messages can stay leading: a
    # system message of the tail comes after the summary and is sent as user text...
    leading_end = _leading_system_end(head_view)
    last_head_role = _nearest_turn_role(reversed(list(enumerate(head_view))), leading_end)
    # ...except when the head holds no turn: then the summary opens the conversation, and it goes
    # after the system messages that open the tail (which stay leading), right before its first
    # turn. Placed ahead of them, it would make them user text beside a user summary.
    insert_at = _leading_system_end(tail) if last_head_role is None else 0
    view_start = _leading_system_end(tail_view) if last_head_role is None else 0
    first_tail_role = _nearest_turn_role(
        enumerate(tail_view[view_start:], len(head_view) + view_start), leading_end
    )
    role, reason = choose_role(last_head_role, first_tail_role)
    if role is None and kept and last_head_role is not None and _merge_joins_a_run(tail):
        # The user's pins put turns of one side together (their own messages, say, with the
        # assistant's between them summarised): merged into the first of them, the summary would
        # sit in a run of user turns that Anthropic merges into one. It goes into the first gap
        # among the pinned messages where it is a turn of its own instead, never past the
        # pinned latest request (the summary tells the model to answer what follows it).
        last_gap = verbatim.index(pinned) if pinned is not None else len(verbatim)
        gap = _gap_among_pinned(tail, last_gap)
        if gap is not None:
            insert_at, role, reason = gap
    details.update(
        {
            "last_head_role": last_head_role,
            "first_tail_role": first_tail_role,
            "role_reason": reason,
            "summary_content": content,
        }
    )
    pinned_origin = origins[pinned] if pinned is not None else None
    if pinned_origin is not None:
        fates[pinned_origin] = (
            Fate.PINNED
        )  # (Fate.SUMMARY_MERGED_IN below when the summary is merged into it)
    details["pinned_index"] = pinned_origin
    kept_origins = [origin for origin in (origins[i] for i in kept) if origin is not None]
    for origin in kept_origins:
        fates[origin] = Fate.PINNED  # the user pinned it: kept verbatim after the summary
    if kept:
        details["kept_pinned"] = kept_origins
    if role is None and tail:
        # Merge into the first real turn of the tail (a system notice is not one).
        target = _merge_target(tail)
        first = tail[target]
        merged = f"{content}\n\n{MERGE_SEPARATOR}"
        tail[target] = {**first, "content": prepend_text(first.get("content"), merged)}
        origin = tail_origins[target]
        if origin is not None:
            fates[origin] = Fate.SUMMARY_MERGED_IN
        details.update(
            {"summary_role": None, "merged_into": origin, "summary_index": len(head) + target}
        )
        output = head + tail
        output_origins = head_origins + tail_origins
    else:
        summary_role = role or "user"
        details.update({"summary_role": summary_role, "merged_into": None})
        summary = {"role": summary_role, "content": content}
        output = [*head, *tail[:insert_at], summary, *tail[insert_at:]]
        output_origins = [*head_origins, *tail_origins[:insert_at], None, *tail_origins[insert_at:]]
        details["summary_index"] = len(head) + insert_at
    return PhaseResult(
        name="assemble",
        messages=output,
        origins=output_origins,
        tokens_before=0,
        tokens_after=0,
        fates=fates,
        details=details,
        duration_s=time.perf_counter() - started,
    )
