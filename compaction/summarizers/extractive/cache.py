"""A bounded, thread-safe memo for the extractive summariser's pure per-message work.

A session is compacted again and again with other budgets (the UI's sliders, the CLI's sweeps),
and almost all of the summariser's time goes into reading the same messages the same way. The
keys are the messages' own strings (or tuples of them): Python caches a str's hash, so when the
same string objects come back a lookup is O(1) whatever their length, and nothing is hashed
with md5 or similar on each run. The keys keep their strings alive, so the cache is bounded both
by entries and by the characters its keys hold, evicting the least recently used first.

Streamlit runs sessions in threads: lookups and insertions hold a lock; the computation itself
runs outside it (two threads may compute the same value once each, which is harmless because
the values are pure functions of the key).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

MAX_ENTRIES = 50_000
#: ~50M characters of keys: a few 1M-token sessions, whose strings the UI holds anyway.
MAX_KEY_CHARS = 50_000_000


class FactCache(Generic[V]):
    """LRU memo of `compute(key)`; `weight` is how many characters the key holds."""

    def __init__(
        self, name: str, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_KEY_CHARS
    ) -> None:
        self.name = name
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.hits = 0
        self.misses = 0
        self._chars = 0
        self._data: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, weight: int, compute: Callable[[], V]) -> V:
        with self._lock:
            entry = self._data.get(key)
            if entry is not None:
                self._data.move_to_end(key)
                self.hits += 1
                return entry[0]
            self.misses += 1
        value = compute()
        with self._lock:
            if key not in self._data:
                self._data[key] = (value, weight)
                self._chars += weight
                while self._data and (
                    len(self._data) > self.max_entries or self._chars > self.max_chars
                ):
                    _, (_, dropped) = self._data.popitem(last=False)
                    self._chars -= dropped
        return value

    def info(self) -> dict[str, int]:
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "entries": len(self._data),
                "key_chars": self._chars,
            }

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._chars = 0
            self.hits = 0
            self.misses = 0


_REGISTRY: list[FactCache[object]] = []


def register(cache: FactCache[V]) -> FactCache[V]:
    """Make `cache` visible to cache_info() and clear_caches()."""
    _REGISTRY.append(cache)  # type: ignore[arg-type]
    return cache


def cache_info() -> dict[str, dict[str, int]]:
    """Hits, misses, entries and key characters of every extractive cache, by name."""
    return {cache.name: cache.info() for cache in _REGISTRY}


def clear_caches() -> None:
    for cache in _REGISTRY:
        cache.clear()
