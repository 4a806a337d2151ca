"""Keep secrets out of the history file: drop key-like fields and redact secret-shaped text.

The history database is a plain file users copy, attach to bug reports and open in Datasette, so
nothing stored in it may carry a credential. Two defences, both applied before any write:
fields whose *name* says they hold a credential are dropped wherever they are nested (a
summariser's `api_key`, an `Authorization` header echoed into phase details), and every string
that remains goes through `compaction.redact`, which replaces secret *shapes* (provider keys,
bearer tokens, private keys) inside free text such as messages and summaries.
"""

from __future__ import annotations

import re
from typing import Any

from compaction.messages import Message
from compaction.redact import redact, redact_messages

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
