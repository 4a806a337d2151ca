"""A stored run read back as a CompactionResult, and history access that never crashes a page.

The History and Compare pages must show a run as it was recorded, not recompute it (the library
or the summariser may have changed since). The phase views take a CompactionResult, so the
stored report (`CompactionResult.to_dict()`, phase messages included) is turned back into one
here. Every history read goes through `history_call`, which turns a corrupt or unreadable
database into a message naming its path, so the pages keep working without history.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from compaction.errors import HistoryError
from compaction.history import History
from compaction.result import CompactionResult, OrphanFix, PhaseResult, as_fate
from compaction.summary import Summary, items_from_dict

_T = TypeVar("_T")


class HistoryUnavailable(Exception):
    """The history could not be read or written; the message names the database path."""


def history_call(operation: Callable[[History], _T]) -> _T:
    """Run `operation` on a freshly opened History (a connection per call, so it is safe
    across Streamlit's threads); any database failure becomes HistoryUnavailable."""
    try:
        with History() as history:
            return operation(history)
    except HistoryError as exc:
        raise HistoryUnavailable(str(exc)) from exc
    except (sqlite3.Error, OSError) as exc:
        from compaction.history import default_path

        raise HistoryUnavailable(f"cannot use the run history at {default_path()}: {exc}") from exc


def _int_keys(raw: Any) -> dict[int, str]:
    if not isinstance(raw, dict):
        return {}
    # A run stored by an earlier version may hold a fate's old name ("summarised").
    return {int(index): as_fate(str(fate)) for index, fate in raw.items()}


def _phase(raw: dict[str, Any]) -> PhaseResult:
    return PhaseResult(
        name=str(raw.get("name")),
        messages=list(raw.get("messages") or []),
        origins=list(raw.get("origins") or []),
        tokens_before=int(raw.get("tokens_before") or 0),
        tokens_after=int(raw.get("tokens_after") or 0),
        fates=_int_keys(raw.get("fates")),
        details=dict(raw.get("details") or {}),
        duration_s=float(raw.get("duration_s") or 0.0),
    )


def _fix(raw: dict[str, Any]) -> OrphanFix:
    return OrphanFix(
        kind=raw.get("kind", ""),
        tool_call_id=str(raw.get("tool_call_id", "")),
        message_index=raw.get("message_index"),
        output_index=raw.get("output_index"),
        reason=str(raw.get("reason", "")),
        tool_name=raw.get("tool_name"),
    )


def result_from_report(report: dict[str, Any]) -> CompactionResult:
    """The CompactionResult a stored report describes (as recorded: nothing is recomputed)."""
    summary = report.get("summary")
    return CompactionResult(
        messages=list(report.get("messages") or []),
        phases=[_phase(p) for p in report.get("phases") or [] if isinstance(p, dict)],
        tokens_before=int(report.get("tokens_before") or 0),
        tokens_after=int(report.get("tokens_after") or 0),
        summary=Summary(dict(summary), items=items_from_dict(report.get("summary_items")))
        if isinstance(summary, dict)
        else None,
        orphan_fixes=[_fix(f) for f in report.get("orphan_fixes") or [] if isinstance(f, dict)],
        skipped=bool(report.get("skipped")),
        skip_reason=report.get("skip_reason"),
        fallback_used=report.get("fallback_used"),
        fallback_reason=report.get("fallback_reason"),
        repairs=list(report.get("repairs") or []),
        fates=_int_keys(report.get("fates")),
        ineffective_count=int(report.get("ineffective_count") or 0),
        suggestion=report.get("suggestion"),
        iterative=bool(report.get("iterative")),
        focus=report.get("focus"),
        config=dict(report.get("config") or {}),
        summarizer=str(report.get("summarizer") or ""),
    )
