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
  compaction-lab installed, and the files a task names must be readable where it runs.

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


@dataclass(frozen=True)
class _Parcel(Generic[T]):
    """An item sent to Dask as one opaque object: Dask walks lists, tuples and dicts in a
    task's arguments looking for futures, and an eval task's messages are thousands of them."""

    item: T


def _unpack(task: Callable[[T], R], parcel: _Parcel[T]) -> R:
    return task(parcel.item)


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
        # pure=False: two equal items (the same file listed twice) are still two tasks.
        futures = client.map(
            functools.partial(_unpack, task), [_Parcel(items[i]) for i in order], pure=False
        )
        index_of = {future.key: i for future, i in zip(futures, order, strict=True)}
        pending = set(index_of)
        try:
            for future in distributed.as_completed(futures):
                index = index_of[future.key]
                pending.discard(future.key)
                try:
                    result = future.result()
                except Exception as exc:  # the task raised, or its worker was lost
                    result = on_error(items[index], exc)
                accept(index, result)
        except KeyboardInterrupt:
            client.cancel([f for f in futures if f.key in pending])
            raise
    finally:
        client.close()


def describe_where(jobs: int, scheduler: str | None) -> str:
    return f"Dask at {scheduler}" if scheduler else f"{jobs} local process(es)"


__all__ = ["Outcome", "Progress", "describe_where", "run_each"]
