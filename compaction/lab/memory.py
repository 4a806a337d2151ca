"""The lab's own memory of content: one CompactionCache per process for every run it makes.

The lab compacts the same sessions again and again — every strategy of an evaluation, every
point of a sweep, every step of a replay — each through a new Compactor. Sharing one cache
between them is what makes the second and later runs cheap. The engine keeps no such cache
(an agent embeds it); the lab, a tool that runs to a finish, does, bounded like any other.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from compaction.cache import CompactionCache, current_cache

P = ParamSpec("P")
R = TypeVar("R")

#: Twice an engine cache's default: a sweep's worker holds a few sessions' strings at once.
LAB_CACHE_BYTES = 128 * 1024 * 1024
_CACHE: list[CompactionCache] = []
_LOCK = threading.Lock()


def lab_cache() -> CompactionCache:
    """This process's lab cache, made on first use."""
    with _LOCK:
        if not _CACHE:
            _CACHE.append(CompactionCache(LAB_CACHE_BYTES))
        return _CACHE[0]


def with_lab_cache(function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` with the lab cache current, unless a cache already is (the app's)."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if current_cache() is not None:
            return function(*args, **kwargs)
        with lab_cache().active():
            return function(*args, **kwargs)

    return run
