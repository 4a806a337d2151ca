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

import math
import re
from collections import Counter
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

# Where a secret may start: not inside a longer word ("disk-…", "task-…"), but right after a
# JSON string escape (`\n`, `\t`, `\r`), which is how a file's lines look inside tool-call
# arguments (`{"content": "[db]\npassword = \"…\""}`). One single-character lookbehind that lets
# n, r and t through (either case, for the IGNORECASE rules); an alternation with
# `(?<=\\[nrt])` triples the cost of a pass. The price: a word ending in n, r or t right before a
# key prefix is not told apart (`atoken=…` stays, `ntoken=…` is redacted like `token=…`).
_START = r"(?<![A-MO-QSU-Za-mo-qsu-z0-9_])"

# Provider key shapes.
_KEY_SHAPES = re.compile(
    _START + r"(?:"
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI, Anthropic (sk-ant-…), project keys
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_)
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"  # AWS access key ids
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9]{20,}"  # Stripe webhook signing secrets
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API keys (AIza + 35)
    # A JWT: header and payload are base64url JSON (`{"` encodes as `eyJ`); the signature may
    # be empty (alg "none"). No '.' in the classes, so it stays linear.
    r"|eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"
    r")"
)

# `curl -u user:password` (also --user, and -U/--proxy-user for the proxy): only the password
# is replaced. Anchored on `curl` earlier on the line because `-u` means other things elsewhere
# (`docker run -u 1000:1000`, `git push -u origin main`). Quotes may be JSON-escaped (`\"`).
_CURL_USER = re.compile(
    r"(?P<prefix>" + _START + r"curl\b[^\n]{0,512}?\s(?:-u|--user|-U|--proxy-user)(?:\s{1,8}|=)?"
    r"\\{0,7}[\"']?[^\s:\"'\\]{1,256}:)(?P<value>[^\s\"'\\]{1,256})"
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

# The start of a secret's name: as _START, or after `_`/`-`, as the end of a longer name.
_NAME_START = r"(?<![A-MO-QSU-Za-mo-qsu-z0-9])"

# name="value", name: 'value', "name": "value" (JSON) — a quoted literal is always a secret. The
# name may end a longer one (`db_password`, `DB_PASSWORD`); the quotes may be JSON-escaped
# (`password = \"…\"` inside a tool call's arguments), the closing one escaped like the opening.
_QUOTED_ASSIGNMENT = re.compile(
    r"(?P<prefix>" + _NAME_START + r"(?:" + _SECRET_NAMES + r")"
    r"(?:\\{0,7}[\"'])?\s{0,8}[:=]\s{0,8}(?P<esc>\\{0,7})(?P<vq>[\"']))"
    r"(?P<value>[^\"'\n]{1,512}?)(?P=esc)(?P=vq)",
    re.IGNORECASE,
)

# An unquoted value's characters: it stops at a delimiter, and at a JSON escape (`\"`, `\n`)
# but not at a backslash that is part of the value.
_VALUE_CHAR = r"(?:[^\s&\"'`,;()\[\]{}<>\\]|\\(?![nrt\"']))"

# name=value with no spaces (query strings, CLI flags, .env lines). The value stops at a
# delimiter; values that are code, not literals, are kept (see _keep_unquoted).
_UNQUOTED_ASSIGNMENT = re.compile(
    rf"(?P<prefix>{_START}(?P<name>{_SECRET_NAMES})=)(?P<value>{_VALUE_CHAR}{{1,512}})",
    re.IGNORECASE,
)

# Upper-case environment variables that end in a secret-ish word: GITHUB_TOKEN=…, DB_PASSWORD=…,
# STRIPE_KEY=… (MAX_TOKENS=100 does not end in TOKEN, so it stays). A name that merely ends in
# KEY (SORT_KEY, PRIMARY_KEY) is redacted only when its value looks like a secret (see
# _looks_secret); quoted values (`X_TOKEN="…"`) are caught by _QUOTED_ASSIGNMENT or here.
_ENV_ASSIGNMENT = re.compile(
    r"(?P<prefix>" + _START + r"(?P<name>[A-Z0-9_]{0,64}(?:PASSWORD|PASSWD|TOKEN|SECRET|KEY))="
    r"(?P<q>\\{0,7}[\"']?))(?P<value>" + _VALUE_CHAR + r"{1,512})"
)
_STRONG_KEY_NAMES = ("API_KEY", "APIKEY", "SECRET_KEY", "ACCESS_KEY", "PRIVATE_KEY")


def _looks_secret(value: str) -> bool:
    """A value that is random-looking rather than a word or an identifier: 16+ characters with
    letters and digits, and either no run of six lower-case letters or a high character entropy
    (`created_at` and `user_profile_v2` are words; hex digests, base64 and `a8Fk2…` are not)."""
    if len(value) < 16 or not re.search(r"\d", value) or not re.search(r"[A-Za-z]", value):
        return False
    if re.search(r"[a-z]{6}", value) is None:
        return True
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 4.0


def _sub_env(match: re.Match[str]) -> str:
    name, value = match.group("name"), match.group("value")
    if value.startswith(("$", "%", "{", REDACTED)):
        return match.group(0)  # a placeholder (`TOKEN=$OTHER`), not the secret itself
    if name.endswith("KEY") and not name.endswith(_STRONG_KEY_NAMES) and not _looks_secret(value):
        return match.group(0)
    return match.group("prefix") + REDACTED


def _sub_curl(match: re.Match[str]) -> str:
    if match.group("value").startswith(("$", "%")):
        return match.group(0)  # `-u "$USER:$PASS"`
    return match.group("prefix") + REDACTED


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
    return match.group("prefix") + REDACTED + match.group("esc") + match.group("vq")


# What each rule cannot match without, read at memory speed (`_needs`): on a summary's short
# lines nearly every rule is skipped, where each was a regex pass (a colon alone let all eight
# run). Literal for the case-sensitive rules; the case-insensitive ones want a secret's name,
# looked for in the lower-cased text where lower() folds as the pattern does (FOLDS_INTO_ASCII).
_KEY_SHAPE_STARTS = (
    "sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA",
    "xox", "whsec_", "AIza", "eyJ",
)  # fmt: skip
_ENV_NAME_ENDS = ("KEY", "TOKEN", "SECRET", "PASSW")
#: Every one of _SECRET_NAMES holds one of these.
_SECRET_NAME_PARTS = ("pass", "pwd", "token", "key", "secret")


def _named_secret(lowered: str | None) -> bool:
    """Whether a case-insensitive rule may find a secret's name (`lowered` None: not known)."""
    return lowered is None or any(part in lowered for part in _SECRET_NAME_PARTS)


#: (text, its lower-cased form or None) -> whether the rule may match the text.
_Needs = Callable[[str, str | None], bool]
_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str], _Needs], ...] = (
    (_PRIVATE_KEY, REDACTED, lambda text, _: "PRIVATE KEY-----" in text),
    (
        _URL_CREDENTIALS,
        r"\g<scheme>" + REDACTED + "@",
        lambda text, _: "://" in text and "@" in text,
    ),
    (_KEY_SHAPES, REDACTED, lambda text, _: any(start in text for start in _KEY_SHAPE_STARTS)),
    (_CURL_USER, _sub_curl, lambda text, _: "curl" in text),
    (_BEARER, _sub_value, lambda text, _: "earer" in text),
    (
        _QUOTED_ASSIGNMENT,
        _sub_quoted,
        lambda text, lowered: (
            ('"' in text or "'" in text) and (":" in text or "=" in text) and _named_secret(lowered)
        ),
    ),
    (
        _ENV_ASSIGNMENT,
        _sub_env,
        lambda text, _: "=" in text and any(end in text for end in _ENV_NAME_ENDS),
    ),
    (
        _UNQUOTED_ASSIGNMENT,
        _sub_unquoted,
        lambda text, lowered: "=" in text and _named_secret(lowered),
    ),
)

# Cheap pre-check: text without any of these substrings cannot match any rule, and most
# tool output is like that, so it skips eight regex passes.
_TRIGGERS = re.compile(
    r"PRIVATE KEY|://|sk-|[sr]k_|whsec_|AIza|eyJ|gh[pousr]_|github_pat_|AKIA|ASIA|xox|earer|[:=]",
    re.IGNORECASE,
)


#: The only characters outside ASCII that a case-insensitive pattern reads as ASCII letters, or
#: whose `lower()` holds one: İ and dotless ı as "i", the long ſ as "s", the Kelvin sign as "k"
#: (a test checks every code point). Without them, `lower()` folds case as the pattern does.
FOLDS_INTO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")

# _TRIGGERS' words lower-cased, minus `://` (it holds a colon): what `may_hold_secret` looks for.
_TRIGGER_WORDS = (
    "private key", "sk-", "sk_", "rk_", "whsec_", "aiza", "eyj", "ghp_", "gho_", "ghu_", "ghs_",
    "ghr_", "github_pat_", "akia", "asia", "xox", "earer",
)  # fmt: skip
# One case-sensitive pass over the lower-cased text for all of them (a generator of substring
# tests cost twice as much on a summary's short lines).
_TRIGGER_WORD = re.compile("|".join(re.escape(word) for word in _TRIGGER_WORDS))


def may_hold_secret(text: str) -> bool:
    """Exactly whether _TRIGGERS matches `text`, without its regex on most texts.

    The case-insensitive alternation has no literal to scan for, so the engine tried every
    position (three quarters of redacting a summary's lines went there). A colon or an equals
    sign decides at memory speed; where `lower()` folds case as the pattern does, a
    case-sensitive search of the lower-cased text for the trigger words decides the rest. A few
    characters fold wider (the pattern reads "ſk-" as "sk-"): where one is present the pattern
    decides.
    """
    if ":" in text or "=" in text:
        return True
    if not text.isascii() and any(char in text for char in FOLDS_INTO_ASCII):
        return _TRIGGERS.search(text) is not None
    return _TRIGGER_WORD.search(text.lower()) is not None


def _lowered(text: str) -> str | None:
    """`text.lower()` where it folds case as a case-insensitive pattern does, else None."""
    if not text.isascii() and any(char in text for char in FOLDS_INTO_ASCII):
        return None
    return text.lower()


def redact(text: str) -> str:
    """`text` with every recognised secret replaced by `[REDACTED]`."""
    if not text or not may_hold_secret(text):
        return text
    lowered = _lowered(text)
    for pattern, replacement, needs in _RULES:
        if not needs(text, lowered):
            continue  # a few substring tests instead of a regex pass that cannot match
        redacted = pattern.sub(replacement, text)
        if redacted != text:  # the next rules read the text as this one left it
            text, lowered = redacted, _lowered(redacted)
    return text


def redact_every_rule(text: str) -> str:
    """`redact` without its pre-tests: every rule's pass over the text, in order (the
    definition the tests hold `redact` to)."""
    for pattern, replacement, _ in _RULES:
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
