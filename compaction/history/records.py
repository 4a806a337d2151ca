"""Turn a conversation and a run report into the rows the history stores.

Kept apart from the database code because both `History.record` (from a live CompactionResult)
and `History.import_bundle` (from an exported JSON report) must derive exactly the same columns
from the same report, and because this is where secrets are removed: everything returned here is
already scrubbed and safe to write.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from compaction.config import CompactionConfig
from compaction.errors import CompactionError, HistoryError
from compaction.history.scrub import MessageRedactor, scrub, scrub_messages
from compaction.messages import Message, content_text, with_marks
from compaction.summary import SECTION_NAMES

_TITLE_CHARS = 80

#: What a label and a title may hold for display: a list, a table row, the History page. Longer
#: texts are stored cut to this many characters (the last one "…") and kept in full beside them
#: (`runs.label_full`, `sessions.title_full`), for `History.run()`, exports and `show --full`.
LABEL_CHARS = 200
TITLE_CHARS = 300


def bounded(text: str | None, limit: int) -> tuple[str | None, str | None]:
    """(`text` cut to `limit` characters with "…", the full text when it was cut else None)."""
    if text is None or len(text) <= limit:
        return text, None
    return text[: limit - 1] + "…", text


# Tuning means recording the same conversation again and again; redacting a multi-megabyte
# session takes a second or more, hashing it a few milliseconds. So the redacted messages of the
# last few conversations are kept, keyed by the hash of their raw canonical JSON.
_RECENT_LIMIT = 4
_recent: OrderedDict[str, tuple[str, list[Message]]] = OrderedDict()
_recent_lock = threading.Lock()


def canonical_json(value: Any) -> str:
    """The one serialisation used for hashing: sorted keys, no spaces, UTF-8 kept as text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    """JSON for a stored column (anything a phase left that is not JSON becomes its str())."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def session_id(messages: list[Message]) -> str:
    """The session id of a conversation: sha256 of the canonical JSON of its *stored* messages.

    Messages are stored with secret shapes redacted, so the hash is taken after redaction; a
    conversation without secrets hashes its messages unchanged. Use this to look a loaded
    conversation up in the history.
    """
    return _sha256(canonical_json(scrub_messages(messages)))


@dataclass
class SessionRecord:
    """A conversation ready to store (messages already redacted; `title` bounded to
    TITLE_CHARS, `title_full` the whole title when it was cut)."""

    id: str
    title: str | None
    format: str | None
    messages: list[Message]
    title_full: str | None = None


def session_record(
    conversation: Any, redactor: MessageRedactor | None = None, title: str | None = None
) -> SessionRecord:
    """Accept a message list or any object with `.messages` (and optional `.title`, `.format`)."""
    if isinstance(conversation, list):
        messages, fmt = conversation, None
    elif hasattr(conversation, "messages") and isinstance(conversation.messages, list):
        messages = conversation.messages
        marks = getattr(conversation, "marks", None)
        if marks:
            # Kept with the stored messages as their `injected` keys (the engine's door moves
            # them beside the messages again when a stored conversation is compacted).
            messages = with_marks(messages, marks)
        title = title or getattr(conversation, "title", None)
        fmt = getattr(conversation, "format", None)
    else:
        raise HistoryError(
            "cannot record a conversation of type "
            f"{type(conversation).__name__}: pass a list of messages or a Conversation"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise HistoryError(
                f"cannot record the conversation: message {index} is a "
                f"{type(message).__name__}, not a dict"
            )
    redactor = redactor or MessageRedactor()
    raw_digest = _sha256(canonical_json(messages))
    with _recent_lock:
        known = _recent.get(raw_digest)
        if known is not None:
            _recent.move_to_end(raw_digest)
    if known is not None:
        digest, stored = known
        redactor.prime(messages, stored)
    else:
        stored = redactor(messages)
        digest = _sha256(canonical_json(stored))
        with _recent_lock:
            _recent[raw_digest] = (digest, stored)
            while len(_recent) > _RECENT_LIMIT:
                _recent.popitem(last=False)
    shown, full = bounded(scrub(str(title)) if title else _default_title(stored), TITLE_CHARS)
    return SessionRecord(
        id=digest,
        title=shown,
        format=str(fmt) if fmt else None,
        messages=stored,
        title_full=full,
    )


def _default_title(messages: list[Message]) -> str | None:
    # A conversation file rarely carries a title; the first user request names it best.
    for message in messages:
        if message.get("role") == "user":
            text = " ".join(content_text(message).split())
            if text:
                return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"
    return None


def run_columns(
    report: dict[str, Any],
    summarizer_info: dict[str, Any] | None,
    redactor: MessageRedactor | None = None,
) -> dict[str, Any]:
    """The `runs` columns (minus ids, time, label, note) derived from a report dict.

    `report` is `CompactionResult.to_dict()` (or the `result` of an exported bundle); it is
    scrubbed here, and its `messages` are moved to their own column.
    """
    raw = dict(report)
    final_messages = raw.pop("messages", None)
    if not isinstance(final_messages, list):
        raise HistoryError("the run report has no 'messages' list (the compacted conversation)")
    phases_raw = raw.get("phases") or []
    if not isinstance(phases_raw, list):
        raise HistoryError("the run report's 'phases' is not a list")
    # Phase messages are messages: redact them like messages rather than scrubbing field names.
    phase_messages = [p.get("messages") if isinstance(p, dict) else None for p in phases_raw]
    raw["phases"] = [
        {k: v for k, v in p.items() if k != "messages"} if isinstance(p, dict) else p
        for p in phases_raw
    ]
    redact_messages = redactor or MessageRedactor()
    clean: dict[str, Any] = scrub(raw)
    for phase, messages in zip(clean["phases"], phase_messages, strict=True):
        if isinstance(messages, list):
            phase["messages"] = redact_messages(messages)
    info = scrub(dict(summarizer_info or {}))
    config = clean.get("config") or {}
    phases = {p.get("name"): p for p in clean["phases"] if isinstance(p, dict)}
    durations = {str(name): float(p.get("duration_s") or 0.0) for name, p in phases.items()}
    summarize = (phases.get("summarize") or {}).get("details") or {}
    # The Compactor nests the summariser's own account (model, usage, cost) one level down.
    nested = summarize.get("summarizer_details")
    llm = {**(nested if isinstance(nested, dict) else {}), **summarize}
    for key in ("prompt_tokens", "completion_tokens", "cost", "model"):
        if llm.get(key) is None and isinstance(nested, dict):
            llm[key] = nested.get(key)
    return {
        "config": dumps(config),
        "summarizer": str(info.get("kind") or clean.get("summarizer") or "unknown"),
        "summarizer_info": dumps(info),
        "model": info.get("model") or llm.get("model") or config.get("model"),
        "focus": clean.get("focus"),
        "tokens_before": int(clean.get("tokens_before") or 0),
        "tokens_after": int(clean.get("tokens_after") or 0),
        "savings_pct": float(clean.get("savings_pct") or 0.0),
        "messages_before": int(clean.get("messages_before") or 0),
        "messages_after": int(clean.get("messages_after") or len(final_messages)),
        "tail_budget_tokens": _tail_budget(config, phases),
        "summary_budget_tokens": _summary_budget(config, phases),
        "skipped": bool(clean.get("skipped")),
        "skip_reason": clean.get("skip_reason"),
        "fallback_used": clean.get("fallback_used"),
        "fallback_reason": clean.get("fallback_reason"),
        "phase_durations": dumps(durations),
        "duration_s": sum(durations.values()),
        "llm_prompt_tokens": _int(llm.get("prompt_tokens")),
        "llm_completion_tokens": _int(llm.get("completion_tokens")),
        "llm_cost": _float(llm.get("cost")),
        "messages": dumps(redact_messages(final_messages)),
        "report": dumps(clean),
    }


def summary_rows(report_summary: Any) -> list[tuple[int, str, str]]:
    """(position, section, body) for the 13 sections, or none when the run made no summary."""
    if not isinstance(report_summary, dict):
        return []
    rows = []
    for position, name in enumerate(SECTION_NAMES):
        body = report_summary.get(name)
        rows.append((position, name, scrub(str(body)) if body is not None else ""))
    return rows


def _int(value: Any) -> int | None:
    # bool is an int subclass, but a flag is not a count.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _tail_budget(config: dict[str, Any], phases: dict[Any, dict[str, Any]]) -> int | None:
    value = config.get("tail_budget_tokens")
    if value is None:
        value = ((phases.get("boundaries") or {}).get("details") or {}).get("tail_budget_tokens")
    return _int(value)


def _summary_budget(config: dict[str, Any], phases: dict[Any, dict[str, Any]]) -> int | None:
    # The summarize phase states the budget it used; older reports only let us recompute it.
    details = (phases.get("summarize") or {}).get("details") or {}
    for key in ("budget_tokens", "summary_budget_tokens", "summary_budget"):
        budget = _int(details.get(key))
        if budget is not None:
            return budget
    middle = ((phases.get("boundaries") or {}).get("details") or {}).get("middle_tokens")
    middle_tokens = _int(middle)
    if middle_tokens is None:
        return None
    try:
        return CompactionConfig.from_dict(config).summary_budget(middle_tokens)
    except (CompactionError, TypeError):
        return None
