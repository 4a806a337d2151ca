"""Figures a compaction reports but does not need: computed when someone reads them.

A compaction decides from bounds and exact counts of what a decision depends on (tokens/tally.py),
but its results still say exactly how many tokens every phase saw: the input's total, the pruned
conversation's, the middle's. Counting those means tokenising the whole input, which costs more
than the whole compaction otherwise does; an agent that only sends `result.messages` on never
reads them, while the app and the report read them all. So such a figure is given as a
`Deferred` (a computation run once, on first read), and the fields that may hold one are
`LazyField`s: reading the field gives the value (computed then and kept), so every reader sees
a plain int, dict or str, equal to what an eager computation gives.

Pickling or copying a result resolves its deferred fields first (`resolve_fields`), so what
crosses a process or a Streamlit cache holds values, never computations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Deferred(Generic[T]):
    """`compute()`, run once on the first read of `value` (thread-safe), then kept."""

    __slots__ = ("_compute", "_lock", "_value")

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute: Callable[[], T] | None = compute
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def value(self) -> T:
        with self._lock:
            compute = self._compute
            if compute is not None:
                self._value = compute()
                self._compute = None  # what it closed over (messages, counters) is let go
        return self._value  # type: ignore[return-value]

    @property
    def resolved(self) -> bool:
        return self._compute is None

    def __repr__(self) -> str:
        return f"Deferred({self._value!r})" if self.resolved else "Deferred(<not yet read>)"


def resolve(value: T | Deferred[T]) -> T:
    """The value itself, or a Deferred's (computed now if not yet)."""
    return value.value if isinstance(value, Deferred) else value


class _NoDefault:
    pass


_NO_DEFAULT = _NoDefault()


class LazyField(Generic[T]):
    """A dataclass field that may be given a Deferred: reading it gives the value.

    Used as the field's default (`tokens_before: LazyField[int] = LazyField()`), so the
    dataclass passes every value through `__set__` (Python's descriptor-typed fields).
    `empty` makes an omitted value a fresh one (a field that would take a default factory).
    """

    def __init__(self, empty: Callable[[], T] | None = None) -> None:
        self._empty = empty
        self._attr = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._attr = f"_lazy_{name}"
        lazy = owner.__dict__.get("_lazy_fields", ())
        owner._lazy_fields = (*lazy, name)  # type: ignore[attr-defined]

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Any: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            if self._empty is None:
                raise AttributeError(self._attr)  # no default: a required field
            return None  # the dataclass default: __set__ makes a fresh empty value of it
        stored = obj.__dict__[self._attr]
        if isinstance(stored, Deferred):
            stored = obj.__dict__[self._attr] = stored.value
        return stored

    def __set__(self, obj: object, value: T | Deferred[T] | None) -> None:
        if value is None and self._empty is not None:
            value = self._empty()
        obj.__dict__[self._attr] = value

    def stored(self, obj: object) -> T | Deferred[T]:
        """The value as stored: a Deferred is not computed."""
        return obj.__dict__[self._attr]  # type: ignore[no-any-return]


def stored(obj: object, name: str) -> Any:
    """Field `name` of `obj` as stored: a Deferred stays one (not computed)."""
    field = getattr(type(obj), "__dict__", {}).get(name)
    if isinstance(field, LazyField):
        return field.stored(obj)
    return getattr(obj, name)


def resolve_fields(obj: object) -> None:
    """Compute every deferred field of `obj` now (before pickling or copying it)."""
    for name in getattr(type(obj), "_lazy_fields", ()):
        getattr(obj, name)


class LaterDetails(Deferred[dict[str, Any]]):
    """A details dict some of whose keys are computed when it is first read: the others can be
    read before that (`known`) without computing them."""

    __slots__ = ("known", "later")

    def __init__(self, details: dict[str, Any], later: dict[str, Callable[[], Any]]) -> None:
        for key in later:
            details.setdefault(key, None)  # its place in the dict, as an eager one has it

        def complete() -> dict[str, Any]:
            for key, compute in later.items():
                details[key] = compute()
            return details

        super().__init__(complete)
        self.known = details
        self.later = frozenset(later)


def later_details(details: dict[str, Any], later: dict[str, Callable[[], Any]]) -> LaterDetails:
    """`details` with the `later` keys computed on first read, each in the place it is listed
    (given None until then), so the dict reads exactly as an eager one would."""
    return LaterDetails(details, later)


def detail(obj: object, key: str) -> Any:
    """`obj.details.get(key)`, without computing the details' deferred keys unless `key` is
    one of them."""
    details = stored(obj, "details")
    if isinstance(details, LaterDetails) and not details.resolved and key not in details.later:
        return details.known.get(key)
    return resolve(details).get(key)


def then(value: T | Deferred[T], after: Callable[[T], T]) -> T | Deferred[T]:
    """`after(value)`, deferred as long as `value` is: for a key added to details that are not
    read yet (the Compactor adds its savings to Cleanup's)."""
    if isinstance(value, Deferred):
        return Deferred(lambda: after(value.value))
    return after(value)
