"""A corpus scan: every source read (or reused when unchanged), in parallel, stored as it
arrives, and folded into per-agent distributions.

Incremental by size and mtime: a source whose stored row was read at the same size and mtime is
not read again (`--full` reads everything). The store is the run history (`History` has these
methods); without one, everything is read and nothing kept, which is what the library's callers
and the tests of the arithmetic want.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from compaction.lab.corpus.records import ERROR, OK, CompactionScan, FileScan, SessionScan
from compaction.lab.corpus.runner import Progress, run_each
from compaction.lab.corpus.scan import Pricer, failed_file, scan_file
from compaction.lab.corpus.sources import Source
from compaction.lab.corpus.stats import GroupStats, aggregate


class ScanStore(Protocol):
    """Where scans are kept (the run history implements it)."""

    def previous_scans(self, paths: Iterable[str]) -> dict[str, FileScan]: ...

    def save_file_scan(self, scanned: FileScan) -> None: ...

    def record_scan(
        self,
        roots: Sequence[str],
        paths: Sequence[str],
        counts: dict[str, int],
        stopped: bool,
        where_run: str,
        duration_s: float,
        groups: Sequence[GroupStats],
    ) -> int: ...


@dataclass
class CorpusScan:
    """What a scan found over its selection: every file (read now or reused), the aggregates."""

    roots: list[str]
    files: list[FileScan]
    groups: list[GroupStats]
    read: int = 0
    reused: int = 0
    stopped: bool = False
    total: int = 0
    where: str = "this process"
    duration_s: float = 0.0
    scan_id: int | None = None
    not_read: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for f in self.files if f.status == ERROR)

    def session_rows(self) -> list[dict[str, Any]]:
        """One flat row per conversation (and per file that yielded none), for tables and CSV."""
        rows = []
        for scanned in self.files:
            base = {
                "path": scanned.path,
                "modified": scanned.mtime,
                "size": scanned.size,
                "status": scanned.status,
                "error": scanned.error,
            }
            if not scanned.sessions:
                rows.append({**base, "conversation": None, "agent": scanned.agent})
            for session in scanned.sessions:
                rows.append({**base, **session.row()})
        return rows

    def compaction_rows(self) -> list[dict[str, Any]]:
        """One flat row per compaction an agent made."""
        return [
            {
                "path": scanned.path,
                "conversation": session.conversation,
                "agent": session.agent,
                "model": session.model,
                **compaction.row(),
            }
            for scanned in self.files
            for session in scanned.sessions
            for compaction in session.compactions
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scan_id": self.scan_id,
            "roots": self.roots,
            "files": len(self.files),
            "read": self.read,
            "reused": self.reused,
            "failed": self.failed,
            "stopped": self.stopped,
            "not_read": self.not_read,
            "where": self.where,
            "duration_s": self.duration_s,
            "aggregates": {group.agent: group.to_dict() for group in self.groups},
            "sessions": self.session_rows(),
            "compactions": self.compaction_rows(),
        }


def scan_corpus(
    sources: Sequence[Source],
    *,
    roots: Sequence[str] = (),
    store: ScanStore | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
    ours: bool = False,
    pricer: Pricer | None = None,
    full: bool = False,
) -> CorpusScan:
    """Scan `sources`: read the new and changed ones (each stored as it finishes), reuse the
    rest, aggregate; a Ctrl-C keeps what finished (`stopped`)."""
    started = time.perf_counter()
    previous = store.previous_scans(s.path for s in sources) if store is not None else {}
    reused: dict[str, FileScan] = {}
    todo: list[Source] = []
    for source in sources:
        known = previous.get(source.path)
        if not full and known is not None and _unchanged(known, source):
            reused[source.path] = known
        else:
            todo.append(source)
    sink = store.save_file_scan if store is not None else None
    outcome = run_each(
        functools.partial(scan_file, ours=ours, pricer=pricer),
        todo,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        on_result=sink,
        on_error=failed_file,
        weight=lambda source: source.size,
    )
    read = {scanned.path: scanned for scanned in outcome.results}
    files = [
        reused.get(s.path) or read[s.path] for s in sources if s.path in reused or s.path in read
    ]
    groups = aggregate(files)
    result = CorpusScan(
        roots=list(roots),
        files=files,
        groups=groups,
        read=len(read),
        reused=len(reused),
        stopped=outcome.stopped,
        total=len(sources),
        where=outcome.where,
        not_read=[s.path for s in todo if s.path not in read],
    )
    result.duration_s = round(time.perf_counter() - started, 4)
    if store is not None:
        result.scan_id = store.record_scan(
            result.roots,
            [f.path for f in files],
            {"read": result.read, "reused": result.reused, "failed": result.failed},
            result.stopped,
            result.where,
            result.duration_s,
            groups,
        )
    return result


def _unchanged(known: FileScan, source: Source) -> bool:
    return known.size == source.size and known.mtime == source.mtime


__all__ = [
    "OK",
    "CompactionScan",
    "CorpusScan",
    "FileScan",
    "ScanStore",
    "SessionScan",
    "scan_corpus",
]


def select(
    files: Sequence[FileScan], agents: Sequence[str] = (), compacted: bool = False
) -> dict[str, set[int]]:
    """A scan's selection for eval and sweep: per readable file, the conversations of the
    given agents (all when none is given), only those whose agent compacted with `compacted`."""
    chosen: dict[str, set[int]] = {}
    for scanned in files:
        if scanned.status != OK:
            continue
        for session in scanned.sessions:
            if agents and session.agent not in agents:
                continue
            if compacted and not session.compactions:
                continue
            chosen.setdefault(scanned.path, set()).add(session.conversation)
    return chosen
