"""Each compaction an adapter makes, into the run history the app opens (off by default).

`HistoryRecorder(path)` opens the history (`compaction.history`, the `[app]` extra) on the first
compaction, not before: an agent that never compacts never loads sqlite-utils. A run is stored
with the context that was compacted, the result (its summary, every message's fate, the phases)
and a label naming the framework and the conversation; identical runs are stored once. The
history keeps no API key (it drops credentials from what it stores).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from compaction.messages import Message
from compaction.result import CompactionResult

if TYPE_CHECKING:
    from compaction.history import History


class HistoryRecorder:
    """Records compactions to the history at `target`: a path, an open `History`, or None for
    the default history (`$COMPACTION_LAB_DB` or the user data directory)."""

    def __init__(self, target: str | os.PathLike[str] | History | None = None) -> None:
        self._target = target
        self._history: History | None = None
        self._lock = threading.Lock()
        #: The run ids recorded, in order (the app opens them from the History page).
        self.run_ids: list[int] = []

    @property
    def history(self) -> History:
        with self._lock:
            if self._history is None:
                from compaction.history import History

                target = self._target
                self._history = target if isinstance(target, History) else History(target)
            return self._history

    def __call__(
        self, key: str, framework: str, context: list[Message], result: CompactionResult
    ) -> None:
        summarizer: dict[str, Any] = {"kind": result.summarizer or "unknown"}
        summarizer["framework"] = framework
        run_id = self.history.record(
            context,
            result,
            label=f"{framework}: {key}"[:200],
            summarizer_info=summarizer,
            dedupe=True,
        )
        self.run_ids.append(run_id)


def recorder_for(record_to: Any) -> HistoryRecorder | None:
    """The recorder an adapter's `record_to=` asks for: None (off), True (the default history),
    a path, a `History`, or a recorder of one's own."""
    if record_to is None or record_to is False:
        return None
    if record_to is True:
        return HistoryRecorder()
    if callable(record_to) and not isinstance(record_to, str | os.PathLike):
        return record_to  # type: ignore[no-any-return]
    return HistoryRecorder(record_to)
