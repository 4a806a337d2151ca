"""Secret redaction: API keys, tokens, passwords and private keys become `[REDACTED]`.

Why it exists: agent transcripts routinely contain credentials (an `env` dump, a `curl -H
"Authorization: Bearer …"`, a `.env` file read by a tool). Anything that leaves the machine (the
LLM summary prompt) or is kept (history, exports, the extractive summary) goes through here first.

Design constraints:
- Linear time. Every pattern is anchored on a literal prefix or a word boundary and its
  repetitions are either bounded or over a class that cannot overlap the next match, so a
  multi-megabyte tool output costs one pass per pattern, never a backtracking blow-up.
- No false positives on ordinary prose and code: `max_tokens=100`, `self.token = token`,
  `sk-learn`, "a Bearer token", `git@github.com:o/r.git` stay as they are. The key=value rule
  therefore wants a value that is a literal (`password=hunter2`, `"password": "x"`), not code
  (`password=password`, `token = get_token()`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REDACTED = "[REDACTED]"

# A private key block; `[^-]*` (base64 has no '-') keeps it linear, and a block cut off by
# truncation (no END line) is still redacted up to where it stops.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[^-]*(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----)?"
)

# scheme://user:password@host — only the userinfo is replaced, so the host stays readable.
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+]{0,15}://)[^\s/@:'\"<>]{1,256}:[^\s/@'\"<>]{1,256}@"
)

# Provider key shapes. The lookbehind stops matches inside longer words ("disk-…", "task-…").
_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI, Anthropic (sk-ant-…), project keys
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_)
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"  # AWS access key ids
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r")"
)

# "Bearer <token>": the token must look like one (8+ token chars and a digit), so prose such as
# "send a Bearer token" is left alone.
_BEARER = re.compile(
    r"(?P<prefix>\b[Bb]earer\s+)(?=[A-Za-z0-9._~+/\-]{0,512}\d)[A-Za-z0-9._~+/\-]{8,}=*"
)

_SECRET_NAMES = (
    r"password|passwd|pwd|token|access_token|auth_token|refresh_token|api_key|apikey|api-key"
    r"|secret|client_secret|secret_key|private_key"
)

# name="value", name: 'value', "name": "value" (JSON) — a quoted literal is always a secret.
_QUOTED_ASSIGNMENT = re.compile(
    r"(?P<prefix>(?P<q>[\"']?)\b(?:" + _SECRET_NAMES + r")(?P=q)\s{0,8}[:=]\s{0,8}"
    r"(?P<vq>[\"']))(?P<value>[^\"'\n]{1,512})(?P=vq)",
    re.IGNORECASE,
)

# name=value with no spaces (query strings, CLI flags, .env lines). The value stops at a
# delimiter; values that are code, not literals, are kept (see _keep_unquoted).
_UNQUOTED_ASSIGNMENT = re.compile(
    r"(?P<prefix>\b(?P<name>" + _SECRET_NAMES + r")=)(?P<value>[^\s&\"'`,;()\[\]{}<>]{1,512})",
    re.IGNORECASE,
)

# Upper-case environment variables that end in a secret-ish word: GITHUB_TOKEN=…, DB_PASSWORD=….
# (MAX_TOKENS=100 does not end in TOKEN, so it stays.)
_ENV_ASSIGNMENT = re.compile(
    r"(?P<prefix>\b[A-Z0-9_]{0,64}(?:PASSWORD|PASSWD|TOKEN|SECRET|API_KEY|APIKEY|SECRET_KEY"
    r"|ACCESS_KEY|PRIVATE_KEY)=)(?P<value>[^\s\"'`;&]{1,512})"
)


def _keep_unquoted(name: str, value: str) -> bool:
    """True when `name=value` is code rather than a credential (`password=password`,
    `token=self.token`, `secret=None`), judged from the value alone."""
    lowered = value.lower()
    if lowered == name.lower() or lowered in ("none", "null", "true", "false", "nil", "..."):
        return True
    if value.startswith(("$", "%", "{", REDACTED)):
        return True  # a placeholder or template (`token=$TOKEN`), not the secret itself
    # `self.token`, `args.password`, `os.environ` — attribute access on an identifier.
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value) is not None


def _sub_unquoted(match: re.Match[str]) -> str:
    if _keep_unquoted(match.group("name"), match.group("value")):
        return match.group(0)
    return match.group("prefix") + REDACTED


def _sub_value(match: re.Match[str]) -> str:
    return match.group("prefix") + REDACTED


def _sub_quoted(match: re.Match[str]) -> str:
    return match.group("prefix") + REDACTED + match.group("vq")


_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (_PRIVATE_KEY, REDACTED),
    (_URL_CREDENTIALS, r"\g<scheme>" + REDACTED + "@"),
    (_KEY_SHAPES, REDACTED),
    (_BEARER, _sub_value),
    (_QUOTED_ASSIGNMENT, _sub_quoted),
    (_ENV_ASSIGNMENT, _sub_value),
    (_UNQUOTED_ASSIGNMENT, _sub_unquoted),
)

# Cheap pre-check: text without any of these substrings cannot match any rule, and most
# tool output is like that, so it skips seven regex passes.
_TRIGGERS = re.compile(
    r"PRIVATE KEY|://|sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox|earer|[:=]", re.IGNORECASE
)


def redact(text: str) -> str:
    """`text` with every recognised secret replaced by `[REDACTED]`."""
    if not text or _TRIGGERS.search(text) is None:
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_value(item) for item in value]
    return value


def redact_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `messages` with secrets redacted in every string value (content, content parts,
    tool-call arguments, names). Keys are left alone; the input is not mutated."""
    return [_redact_value(message) for message in messages]
