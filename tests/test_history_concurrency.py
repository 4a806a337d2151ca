"""Several writers at once (threads sharing a History, threads and processes with their own)
lose nothing, including four processes racing to create and migrate a new file."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

from history_factory import conversation, make_result

from compaction.history import History


def _write_runs(path: str, worker: int, count: int) -> None:
    with History(path) as history:
        for n in range(count):
            messages = conversation(f"topic {worker}")
            history.record(messages, make_result(messages), label=f"w{worker}-{n}")


def test_concurrent_writers_in_threads_lose_nothing(_history_db: Path) -> None:
    shared = History()
    errors: list[BaseException] = []

    def own_connection(worker: int) -> None:
        try:
            _write_runs(str(_history_db), worker, 15)
        except BaseException as exc:  # surfaced below: a thread's exception is otherwise lost
            errors.append(exc)

    def shared_connection(worker: int) -> None:
        try:
            for n in range(15):
                messages = conversation(f"topic {worker}")
                shared.record(messages, make_result(messages), label=f"w{worker}-{n}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=own_connection, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=shared_connection, args=(w,)) for w in range(3, 6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    labels = {r.label for r in shared.runs(limit=None)}
    shared.close()
    assert labels == {f"w{w}-{n}" for w in range(6) for n in range(15)}


def test_concurrent_writers_in_processes_lose_nothing(_history_db: Path) -> None:
    # Four processes open a *new* file at once: migrations race too.
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=_write_runs, args=(str(_history_db), w, 20)) for w in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [p.exitcode for p in processes] == [0, 0, 0, 0]
    with History() as history:
        runs = history.runs(limit=None)
        assert len(runs) == 80 and len({r.id for r in runs}) == 80
        assert {r.label for r in runs} == {f"w{w}-{n}" for w in range(4) for n in range(20)}
        assert len(history.sessions()) == 4
        assert len(history.search("Stripe", limit=None)) == 80
    db = sqlite3.connect(_history_db)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 80 * 13
    db.close()
