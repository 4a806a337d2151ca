"""Run one function over many items: in this process, in local worker processes, or on a Dask
cluster, with progress, results handed over as they finish, and a clean stop.

The corpus commands (scan, eval, sweep over sessions) are each one task function applied to many
sessions; only where the tasks run differs, so it is chosen here and nowhere else:

- `jobs == 1`: in this process, in order (nothing to pickle; what tests and small runs use);
- `jobs > 1`: a local process pool (`lab.sweep.worker.pool_context`: fork for the one-threaded
  CLI, spawn under Streamlit's threads). Workers ignore SIGINT, so a Ctrl-C in the terminal
  reaches the parent alone: it cancels what has not started, lets the running tasks finish, and
  returns everything that finished (`Outcome.stopped`);
- `scheduler="tcp://…"`: the same function on a Dask cluster (`distributed`, the optional
  `[dask]` extra, imported only here). Dask pickles the function by reference: the workers need
  compaction-lab installed, and the files a task names must be readable where it runs. Items
  travel in a few batches per worker thread (one Dask task each), and each batch's results are
  handed over as it finishes.

Every result goes to `on_result` as it arrives (the scan writes it to the history there, so an
interrupted scan keeps its rows). A task that raises is turned into a result by `on_error`
(a failed session is a row with its error) and never stops the others.
"""

from __future__ import annotations

import functools
import importlib
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from compaction.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")

#: progress(done, total)
Progress = Callable[[int, int], None]

#: How long a Dask client waits for its scheduler before saying it cannot reach it.
CONNECT_TIMEOUT_S = 30


@dataclass
class Outcome(Generic[R]):
    """The results that finished, in the order of the items; `stopped` after a Ctrl-C."""

    results: list[R] = field(default_factory=list)
    total: int = 0
    stopped: bool = False
    where: str = "this process"

    @property
    def done(self) -> int:
        return len(self.results)


def _ignore_sigint() -> None:
    """Pool initializer: a Ctrl-C is the parent's to handle (see the module doc)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_each(
    task: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
    on_result: Callable[[R], None] | None = None,
    on_error: Callable[[T, BaseException], R],
    weight: Callable[[T], float] | None = None,
) -> Outcome[R]:
    """`task(item)` for every item; see the module doc for where it runs.

    `weight(item)` (a file's size, a session's messages) sends the heaviest first, so that one
    large session started last does not leave the other workers idle at the end; the results
    are in the order of `items` whatever the order they ran in.
    """
    if jobs < 1:
        raise ConfigError(f"jobs must be at least 1, got {jobs}")
    total = len(items)
    finished: dict[int, R] = {}
    outcome: Outcome[R] = Outcome(total=total)

    def accept(index: int, result: R) -> None:
        finished[index] = result
        if on_result is not None:
            on_result(result)
        if progress is not None:
            progress(len(finished), total)

    order = list(range(total))
    if weight is not None:
        order.sort(key=lambda i: -weight(items[i]))
    if progress is not None:
        progress(0, total)
    try:
        if scheduler:
            outcome.where = f"Dask at {scheduler}"
            _on_dask(task, items, order, scheduler, accept, on_error)
        elif jobs == 1 or total <= 1:
            for index in order:
                try:
                    result = task(items[index])
                except Exception as exc:  # a bug in one task must not stop the corpus
                    result = on_error(items[index], exc)
                accept(index, result)
        else:
            outcome.where = f"{min(jobs, total)} local processes"
            _in_pool(task, items, order, min(jobs, total), accept, on_error)
    except KeyboardInterrupt:
        outcome.stopped = True
    outcome.results = [finished[i] for i in sorted(finished)]
    return outcome


def _in_pool(
    task: Callable[[T], R],
    items: Sequence[T],
    order: Sequence[int],
    workers: int,
    accept: Callable[[int, R], None],
    on_error: Callable[[T, BaseException], R],
) -> None:
    from compaction.lab.sweep.worker import pool_context

    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=pool_context(), initializer=_ignore_sigint
    )
    futures: dict[Future[R], int] = {pool.submit(task, items[i]): i for i in order}
    taken: set[int] = set()
    try:
        for future in as_completed(futures):
            index = futures[future]
            taken.add(index)
            accept(index, _result_of(future, items[index], on_error))
    except KeyboardInterrupt:
        # Nothing new starts; what is running finishes and is kept (workers ignore SIGINT).
        pool.shutdown(wait=True, cancel_futures=True)
        for future, index in futures.items():
            if index not in taken and future.done() and not future.cancelled():
                accept(index, _result_of(future, items[index], on_error))
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _result_of(future: Future[R], item: T, on_error: Callable[[T, BaseException], R]) -> R:
    try:
        return future.result()
    except Exception as exc:  # the task raised, or its worker died (BrokenProcessPool)
        return on_error(item, exc)


#: Dask tasks per worker thread: items are sent in batches, each one Dask task, so that a corpus
#: of many small sessions does not pay the scheduler's per-task cost (a network round trip,
#: pickling, bookkeeping: milliseconds) once per session; several per thread keep them balanced.
BATCHES_PER_THREAD = 4


class TaskError(Exception):
    """A task that raised on a Dask worker, as the caller's `on_error` receives it."""


@dataclass(frozen=True)
class _Parcel(Generic[T]):
    """Items sent to Dask as one opaque object: Dask walks lists, tuples and dicts in a task's
    arguments looking for futures, and an eval task's messages are thousands of them."""

    items: tuple[T, ...]


def _run_batch(task: Callable[[T], R], parcel: _Parcel[T]) -> list[tuple[bool, Any]]:
    """Each item's (ok, result or error text): one item's failure is its own row."""
    done: list[tuple[bool, Any]] = []
    for item in parcel.items:
        try:
            done.append((True, task(item)))
        except Exception as exc:
            done.append((False, f"{type(exc).__name__}: {exc}"))
    return done


def _batches(order: Sequence[int], threads: int) -> list[list[int]]:
    """`order` dealt round-robin into batches, so each batch mixes heavy and light items."""
    count = max(1, min(len(order), threads * BATCHES_PER_THREAD))
    return [list(order[start::count]) for start in range(count)]


def _on_dask(
    task: Callable[[T], R],
    items: Sequence[T],
    order: Sequence[int],
    scheduler: str,
    accept: Callable[[int, R], None],
    on_error: Callable[[T, BaseException], R],
) -> None:
    try:
        # Through importlib: Dask is an optional extra, and its partial type hints would make
        # mypy --strict depend on whether it is installed.
        distributed: Any = importlib.import_module("distributed")
    except ImportError as exc:
        raise ConfigError(
            "--scheduler needs Dask's distributed package: pip install 'compaction-lab[dask]'"
        ) from exc
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
    try:
        threads = sum(client.nthreads().values()) or 1
        batches = _batches(order, threads)
        # pure=False: two equal batches (the same file listed twice) are still two tasks.
        futures = client.map(
            functools.partial(_run_batch, task),
            [_Parcel(tuple(items[i] for i in batch)) for batch in batches],
            pure=False,
        )
        batch_of = {future.key: batch for future, batch in zip(futures, batches, strict=True)}
        pending = set(batch_of)
        try:
            for future in distributed.as_completed(futures):
                batch = batch_of[future.key]
                pending.discard(future.key)
                try:
                    outcomes = future.result()
                except Exception as exc:  # its worker was lost: every item of it failed
                    outcomes = [(False, f"{type(exc).__name__}: {exc}")] * len(batch)
                for index, (ok, value) in zip(batch, outcomes, strict=True):
                    accept(index, value if ok else on_error(items[index], TaskError(value)))
        except KeyboardInterrupt:
            client.cancel([f for f in futures if f.key in pending])
            raise
    finally:
        client.close()


def describe_where(jobs: int, scheduler: str | None) -> str:
    return f"Dask at {scheduler}" if scheduler else f"{jobs} local process(es)"


__all__ = ["Outcome", "Progress", "describe_where", "run_each"]
