"""What compaction remembers about content it has seen: one object, bounded in bytes.

Compacting the same session again with other budgets (the app's sliders, a sweep, an agent
that asks again) reads the same messages the same way: their token counts, Phase 1's one-liners,
the extractive summariser's facts. Remembering them makes a re-run cost a fraction of the first
run; but an engine embedded in a long-running agent server compacts thousands of conversations,
and a memory keyed by their strings must not keep them all alive. So everything is remembered in
a `CompactionCache` that belongs to a Compactor (each makes its own unless given one) and is
bounded in bytes: the characters its keys hold, which is what keeps memory alive, plus a fixed
cost per entry. Past the bound the oldest entries go, and a re-run of them costs what a first
run does. Callers that compact the same content again (the app, the lab's runs) pass one cache
to every Compactor they make; nothing is shared behind their back.

While a Compactor runs, its cache is the *current* one (a context variable: per thread, per
task), so the phases and the summariser reach it without every function taking it, and a
Compactor made while one is current (the lab's runs inside a sweep) shares it. Code run outside
a compaction (a view that summarises one tool output) simply computes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from compaction.tokens import TokenCounter

V = TypeVar("V")

#: The default bound: room for a few 1M-token sessions' strings, a small share of an agent
#: server's memory. Pass `CompactionCache(max_bytes=…)` for another.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: What an entry costs beyond its key's characters: the dict slot, the tuple, the value.
ENTRY_BYTES = 200
#: The share of the bound each token counter may hold (a cache uses one or two: the exact and
#: the rough); the memo has the rest.
COUNTER_SHARE = 0.2
MAX_COUNTERS = 2


class Memo:
    """An LRU memo of pure computations, bounded by the bytes its keys hold.

    Thread-safe: lookups and insertions hold a lock; the computation runs outside it (two
    threads may compute the same value once each, which is harmless for pure values)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._bytes = 0
        self._data: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, chars: int, compute: Callable[[], V]) -> V:
        """`compute()`, remembered under `key`; `chars` is how many characters the key holds."""
        with self._lock:
            entry = self._data.get(key)
            if entry is not None:
                self._data.move_to_end(key)
                self.hits += 1
                return entry[0]  # type: ignore[return-value]
            self.misses += 1
        value = compute()
        weight = chars + ENTRY_BYTES
        if weight > self.max_bytes:
            return value  # one key larger than the whole bound: not worth evicting everything
        with self._lock:
            if key not in self._data:
                self._data[key] = (value, weight)
                self._bytes += weight
                while self._bytes > self.max_bytes and self._data:
                    _, (_, dropped) = self._data.popitem(last=False)
                    self._bytes -= dropped
        return value

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    def info(self) -> dict[str, int]:
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "entries": len(self._data),
                "bytes": self._bytes,
            }


class CompactionCache:
    """Everything one or more Compactors remember about content, within `max_bytes`.

    - `memo`: Phase 1's one-liners, digests and shrunk arguments, the extractive summariser's
      facts per message and its redacted lines (keys name their kind: ("user", text));
    - `counters`: a token counter per kind and encoding (`tokens.make_counter(kind, model,
      cache)`) whose counts per text are kept within a share of the bound;
    - `conversation`: the last conversation a one-shot compress checked and counted, so a re-run
      with other budgets checks and counts nothing again (input/growing.py).
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if not isinstance(max_bytes, int) or max_bytes < 1024 * 1024:
            raise ValueError(
                f"max_bytes must be an int of at least 1 MiB (1048576), got {max_bytes!r}"
            )
        self.max_bytes = max_bytes
        self.memo = Memo(int(max_bytes * (1 - COUNTER_SHARE * MAX_COUNTERS)))
        # (kind, encoding) -> a counter whose counts live within COUNTER_SHARE of the bound;
        # made and kept by tokens.make_counter(kind, model, cache).
        self.counters: dict[tuple[str, str], TokenCounter] = {}
        self.lock = threading.Lock()
        self.conversation: object | None = None  # input/growing.LastConversation, made there

    @property
    def nbytes(self) -> int:
        """The bytes its entries are counted at (keys' characters plus a cost per entry)."""
        counted = sum(int(getattr(c, "nbytes", 0)) for c in list(self.counters.values()))
        return counted + self.memo.nbytes

    def clear(self) -> None:
        with self.lock:
            self.counters.clear()
        self.memo.clear()
        self.conversation = None

    def info(self) -> dict[str, dict[str, int]]:
        found = {"memo": self.memo.info()}
        for (kind, encoding), counter in list(self.counters.items()):
            found[f"{kind} {encoding}".strip()] = {"bytes": int(getattr(counter, "nbytes", 0))}
        return found

    @contextmanager
    def active(self) -> Iterator[CompactionCache]:
        """This cache as the current one for the duration (a Compactor's call)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[CompactionCache | None] = ContextVar("compaction_cache", default=None)


def current_cache() -> CompactionCache | None:
    """The cache of the compaction running in this thread or task, if any."""
    return _CURRENT.get()


def remembered(key: Hashable, chars: int, compute: Callable[[], V]) -> V:
    """`compute()`, remembered in the current compaction's cache when one is running."""
    cache = _CURRENT.get()
    if cache is None:
        return compute()
    return cache.memo.get(key, chars, compute)


def use_cache(cache: CompactionCache | None) -> None:
    """Make `cache` the current one in this thread or task from now on: an application's choice
    for the code it runs outside a Compactor (the app's pages count tokens for their views), so
    that code and its Compactors share what they remember. The engine never calls it."""
    _CURRENT.set(cache)
