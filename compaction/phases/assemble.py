"""Phase 4: splice the summary between head and tail without breaking the provider's rules.

Providers reject two consecutive messages of the same role in several places, so the summary's
role is chosen against its neighbours; when neither role fits it is merged into the first tail
message instead. The system message gets a one-time note so the model knows its context was
compacted and builds on the summary rather than re-doing work.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from compaction.messages import Message, append_text, content_text, prepend_text
from compaction.result import MERGED, NOTE_ADDED, PhaseResult
from compaction.summary import SUMMARY_PREFIX, SYSTEM_NOTE


def summary_content(summary_text: str, is_marker: bool) -> str:
    """The summary message's text: the prefix, a newline, the summary (a marker stands alone)."""
    return summary_text if is_marker else f"{SUMMARY_PREFIX}\n{summary_text}"


def choose_role(last_head_role: str | None, first_tail_role: str | None) -> tuple[str | None, str]:
    """(role, reason); role None means: merge the summary into the first tail message."""
    role = "user" if last_head_role in ("assistant", "tool") else "assistant"
    reason = (
        f"the head ends with a {last_head_role} message, so the summary speaks as {role}"
        if last_head_role
        else f"there is no head, so the summary speaks as {role}"
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


def assemble(
    messages: Sequence[Message],
    origins: Sequence[int | None],
    head_end: int,
    tail_start: int,
    summary_text: str,
    is_marker: bool,
    excluded: set[int],
) -> PhaseResult:
    """Head + summary + tail. `excluded` are tail indices taken out (earlier summaries)."""
    started = time.perf_counter()
    head = list(messages[:head_end])
    head_origins = list(origins[:head_end])
    tail = [m for i, m in enumerate(messages[tail_start:], tail_start) if i not in excluded]
    tail_origins = [o for i, o in enumerate(origins[tail_start:], tail_start) if i not in excluded]
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
                fates[origin] = NOTE_ADDED
    details["system_note_added"] = note_added
    details["system_note"] = SYSTEM_NOTE

    content = summary_content(summary_text, is_marker)
    last_head_role = head[-1].get("role") if head else None
    first_tail_role = tail[0].get("role") if tail else None
    role, reason = choose_role(last_head_role, first_tail_role)
    details.update(
        {
            "last_head_role": last_head_role,
            "first_tail_role": first_tail_role,
            "role_reason": reason,
            "summary_content": content,
        }
    )
    if role is None and tail:
        first = tail[0]
        tail[0] = {**first, "content": prepend_text(first.get("content"), content)}
        origin = tail_origins[0]
        if origin is not None:
            fates[origin] = MERGED
        details.update({"summary_role": None, "merged_into": origin, "summary_index": head_end})
        output = head + tail
        output_origins = head_origins + tail_origins
    else:
        summary_role = role or "user"
        details.update({"summary_role": summary_role, "merged_into": None})
        output = [*head, {"role": summary_role, "content": content}, *tail]
        output_origins = [*head_origins, None, *tail_origins]
        details["summary_index"] = len(head)
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
