"""A message's snapshot: what a re-run compares it with to see it unchanged.

The cache's check (input/growing.py) remembers each message it checked by a snapshot, a
structural copy (each dict and list copied, every other value shared), and compares the message
with it on the next compress to see whether it was edited in place: `==` runs in C and stops at
each shared leaf by identity, so at 5,000 messages the comparison costs ~0.5 ms, where taking a
flat fingerprint of each message again and comparing it cost ~7 ms on every re-run. The check of
a message (input/checks.py) must also read every string of it, keys included, to find a lone
surrogate, and only a string that is not ASCII can hold one. Both reads are the same walk of the
message, so a first sighting takes them in one: `snapshot` also hands back what may hold a
surrogate.
"""

from __future__ import annotations

from typing import Any

Snapshot = Any
#: A tuple, not `dict | list`: the union is built anew each time the walk reaches a value.
_CONTAINERS = (dict, list)


def snapshot(message: Any, suspects: list[Any] | None = None) -> Snapshot:
    """`message` with each dict and list in it copied and every other value shared: equal to the
    message until one of its dicts or lists is edited in place. (Equal numbers of another type,
    1 for 1.0, and a dict's keys in another order count as the same, as `==` has it.)

    Given `suspects`, the walk also appends to it every part that may hold a lone surrogate: each
    string that is not ASCII, each key that is not a string, each tuple (a caller's, which the
    snapshot shares as one atom). Nothing else can hold one, so the check searches only these.
    Raises RecursionError on a message nested past the interpreter's limit."""
    if suspects is None:
        return _copy(message)
    return _walk(message, suspects)


def _copy(node: Any) -> Any:
    # `_walk` without the suspects (a snapshot of a phase's output, which needs no search).
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(item) for item in node]
    return node


def _walk(node: Any, suspects: list[Any]) -> Any:
    # Strings, the leaves nearly every node is, are tested in the loop rather than by a call
    # each (and the two loops repeat it): this runs on every message of a first sighting.
    if isinstance(node, dict):
        copy: dict[Any, Any] = {}
        for key, value in node.items():
            if type(key) is not str or not key.isascii():
                suspects.append(key)
            if isinstance(value, str):
                if not value.isascii():
                    suspects.append(value)
            elif isinstance(value, _CONTAINERS):
                value = _walk(value, suspects)
            elif isinstance(value, tuple):
                suspects.append(value)
            copy[key] = value
        return copy
    if isinstance(node, list):
        items: list[Any] = []
        for item in node:
            if isinstance(item, str):
                if not item.isascii():
                    suspects.append(item)
            elif isinstance(item, _CONTAINERS):
                item = _walk(item, suspects)
            elif isinstance(item, tuple):
                suspects.append(item)
            items.append(item)
        return items
    if not isinstance(node, str) or not node.isascii():
        suspects.append(node)
    return node
