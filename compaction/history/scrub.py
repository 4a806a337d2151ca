"""Keep secrets out of the history file: drop key-like fields and redact secret-shaped text.

The history database is a plain file users copy, attach to bug reports and open in Datasette, so
nothing stored in it may carry a credential. Two defences, both applied before any write:
fields whose *name* says they hold a credential are dropped wherever they are nested (a
summariser's `api_key`, an `Authorization` header echoed into phase details), and every string
that remains goes through `compaction.text.redact`, which replaces secret *shapes* (provider keys,
bearer tokens, private keys) inside free text such as messages and summaries.
"""

from __future__ import annotations

import re
from typing import Any

from compaction.messages import Message
from compaction.text.redact import redact, redact_messages

# Field names are compared after lower-casing and removing separators, so `api_key`, `apiKey`,
# `API-KEY` and `x-api-key` all match. Only whole names match: `tokens_before` or `Key Decisions`
# are figures and section names, not credentials.
_SECRET_NAMES = frozenset(
    {
        "apikey",
        "xapikey",
        "key",
        "token",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "authtoken",
        "bearertoken",
        "apitoken",
        "sessiontoken",
        "authorization",
        "proxyauthorization",
        "password",
        "passwd",
        "secret",
        "clientsecret",
        "secretkey",
        "privatekey",
        "cookie",
    }
)
_SEPARATORS = re.compile(r"[\s_\-.]+")


def is_secret_name(name: str) -> bool:
    """True for a field name that says its value is a credential (`api_key`, `Authorization`...)."""
    normal = _SEPARATORS.sub("", name.lower())
    return normal in _SECRET_NAMES or normal.endswith("apikey") or normal.endswith("secretkey")


def scrub(value: Any) -> Any:
    """A copy of a JSON-like value without secret-named fields, with every string redacted.

    The input is never mutated. Values that are not JSON types are turned into their `str()` so
    that whatever a phase put in its details can still be stored (and is redacted too).
    """
    if isinstance(value, dict):
        return {
            str(key): scrub(item)
            for key, item in value.items()
            if not (isinstance(key, str) and is_secret_name(key))
        }
    if isinstance(value, (list, tuple)):
        return [scrub(item) for item in value]
    if isinstance(value, str):
        return redact(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(str(value))


def scrub_messages(messages: list[Message]) -> list[Message]:
    """Messages with secret shapes redacted from their text (structure and roles untouched)."""
    return list(redact_messages(messages))


class MessageRedactor:
    """Redacts each message object once, however often it appears.

    A run's report holds the same message dicts many times (the input, each phase's output, the
    final messages share unchanged messages by identity), and redaction scans every string with
    several regular expressions — seconds for a multi-megabyte session if done per copy.
    """

    def __init__(self) -> None:
        # id() -> (original, redacted); the original is kept so its id cannot be reused.
        self._done: dict[int, tuple[Message, Message]] = {}

    def prime(self, originals: list[Message], redacted: list[Message]) -> None:
        """Record already-known redactions (pairwise) so they are not computed again."""
        for original, clean in zip(originals, redacted, strict=True):
            self._done[id(original)] = (original, clean)

    def __call__(self, messages: list[Message]) -> list[Message]:
        out: list[Message] = []
        for message in messages:
            hit = self._done.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, redact_messages([message])[0])
                self._done[id(message)] = hit
            out.append(hit[1])
        return out
