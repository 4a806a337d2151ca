"""Sorting litellm's exceptions into the failure policy's kinds.

Why by class name and status code rather than `isinstance`: litellm's classes are only
importable after the multi-second litellm import, and providers map the same condition to
different classes (a missing model is a 404 from OpenAI, a 400 "model not found" from others).
The names checked walk the exception's MRO, so litellm's subclasses of the OpenAI SDK errors and
the SDK errors themselves are both recognised.
"""

from __future__ import annotations

import re

from compaction.text.redact import redact

TRANSIENT_CLASSES = frozenset(
    {
        "Timeout",
        "APITimeoutError",
        "RateLimitError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "TimeoutException",  # httpx, should it leak through
        "ConnectError",
    }
)
UNAVAILABLE_CLASSES = frozenset({"NotFoundError"})
# Classes that look transient by ancestry but are the caller's problem: they must not cooldown.
FAILED_CLASSES = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "BadRequestError",
        "ContextWindowExceededError",
    }
)

_MODEL_MISSING = re.compile(
    r"model[^\n]{0,80}?(?:not found|does not exist|not exist|is not available|unknown)"
    r"|no such model|unknown model|model_not_found",
    re.IGNORECASE,
)


_MISSING_KEY = re.compile(r"Missing credentials|api_key client option must be set|No API key", re.I)


def _class_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


def classify_error(exc: BaseException) -> str:
    """ "unavailable" (model missing), "transient" (retry later) or "failed" (give up)."""
    names = _class_names(exc)
    status = getattr(exc, "status_code", None)
    message = str(exc)
    if UNAVAILABLE_CLASSES.intersection(names) or status == 404:
        return "unavailable"
    if _MISSING_KEY.search(message):
        # The SDK reports a missing key as a server error; no retry can fix configuration.
        return "failed"
    if names[0] in FAILED_CLASSES or status in (400, 401, 403, 422):
        return "unavailable" if _MODEL_MISSING.search(message) else "failed"
    if TRANSIENT_CLASSES.intersection(names):
        return "transient"
    if isinstance(status, int) and (status in (408, 409, 425, 429) or status >= 500):
        return "transient"
    if isinstance(exc, TimeoutError | ConnectionError):
        return "transient"
    if _MODEL_MISSING.search(message):
        return "unavailable"
    return "failed"


def error_message(exc: BaseException, limit: int = 500) -> str:
    """A one-line, redacted, bounded message for reports (errors may echo request content)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = redact(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
