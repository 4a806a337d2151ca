"""A message's fingerprint: the flat form a re-run compares it with to see it unchanged.

The cache's check (input/growing.py) remembers each message it checked by a fingerprint, one
tuple of atoms, and takes it again on the next compress to see whether the message was edited
in place. The check of a message (input/checks.py) must also read every string of it, keys
included, to find a lone surrogate, and only a string that is not ASCII can hold one. Both
reads are the same walk of the message, so a first sighting takes them in one: `fingerprint`
also hands back what may hold a surrogate (at 5,000 messages the two walks cost ~13 ms, the one
~6 ms).
"""

from __future__ import annotations

from typing import Any

_DICT = object()  # markers no message can hold: with the lengths, the flat form is unambiguous
_LIST = object()

Fingerprint = tuple[Any, ...]


def fingerprint(message: Any, suspects: list[Any] | None = None) -> Fingerprint:
    """`message` flattened to one tuple: each dict and list as a marker and its length, then its
    keys and values in order, every other value shared. Equal (item by item, identity first) to
    the fingerprint taken again exactly when no dict or list in it was edited in place (a
    reordered dict counts as edited: it is checked again, which is never wrong).

    Given `suspects`, the walk also appends to it every part that may hold a lone surrogate: each
    string that is not ASCII, each key that is not a string, each tuple (a caller's, which the
    fingerprint holds as one atom). Nothing else can hold one, so the check searches only these.
    Raises RecursionError on a message nested past the interpreter's limit."""
    parts: list[Any] = []
    if suspects is None:
        _flatten(message, parts)  # a re-run's comparison: nothing to search, no string tested
    else:
        _walk(message, parts, suspects)
    return tuple(parts)


def _flatten(node: Any, parts: list[Any]) -> None:
    # `_walk` without the suspects: the same parts, ~1.3 ms less at 5,000 messages, on every
    # re-run. (Strings first: nearly every leaf is one.)
    if isinstance(node, dict):
        parts += (_DICT, len(node))
        for key, value in node.items():
            parts.append(key)
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, dict | list):
                _flatten(value, parts)
            else:
                parts.append(value)
    elif isinstance(node, list):
        parts += (_LIST, len(node))
        for item in node:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict | list):
                _flatten(item, parts)
            else:
                parts.append(item)
    else:
        parts.append(node)


def _walk(node: Any, parts: list[Any], suspects: list[Any]) -> None:
    # Strings, the leaves nearly every node is, are tested in the loop rather than by a call
    # each (and the two loops repeat it): this runs on every message of a first sighting.
    if isinstance(node, dict):
        parts += (_DICT, len(node))
        for key, value in node.items():
            parts.append(key)
            if type(key) is not str or not key.isascii():
                suspects.append(key)
            if isinstance(value, str):
                parts.append(value)
                if not value.isascii():
                    suspects.append(value)
            elif isinstance(value, dict | list):
                _walk(value, parts, suspects)
            else:
                parts.append(value)
                if isinstance(value, tuple):
                    suspects.append(value)
    elif isinstance(node, list):
        parts += (_LIST, len(node))
        for item in node:
            if isinstance(item, str):
                parts.append(item)
                if not item.isascii():
                    suspects.append(item)
            elif isinstance(item, dict | list):
                _walk(item, parts, suspects)
            else:
                parts.append(item)
                if isinstance(item, tuple):
                    suspects.append(item)
    else:
        parts.append(node)
        if not isinstance(node, str) or not node.isascii():
            suspects.append(node)
