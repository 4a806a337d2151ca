"""Redaction: every secret shape the issue names becomes [REDACTED]; ordinary text is untouched."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.text import redact as redact_module
from compaction.text.redact import REDACTED, redact, redact_messages

OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
ANTHROPIC_KEY = "sk-ant-api03-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp_-AbCdEf"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_OAUTH = "gho_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK_TOKEN = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
    "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSVhypeSDJ5Kk3lBGSpGF0aWD\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"export OPENAI_API_KEY={OPENAI_KEY}", OPENAI_KEY),
        (f"key is {OPENAI_KEY}.", OPENAI_KEY),
        (f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}", ANTHROPIC_KEY),
        (f"client = Anthropic(api_key='{ANTHROPIC_KEY}')", ANTHROPIC_KEY),
        (f"git remote set-url origin https://{GITHUB_TOKEN}@github.com/o/r", GITHUB_TOKEN),
        (f"token {GITHUB_OAUTH}", GITHUB_OAUTH),
        (f"GH={GITHUB_PAT}", GITHUB_PAT),
        (f"aws_access_key_id = {AWS_KEY}", AWS_KEY),
        (f"slack: {SLACK_TOKEN}", SLACK_TOKEN),
        (f'curl -H "Authorization: Bearer {JWT}" https://api.x.io', JWT),
        ("Authorization: bearer 0123abcdXYZ987654321", "0123abcdXYZ987654321"),
        (f"cat id_rsa\n{PRIVATE_KEY}\nok", "MIIEowIBAAKCAQEA1c7"),
        (f"truncated {PRIVATE_KEY[:120]}", "MIIEowIBAAKCAQEA1c7"),
        ("psql postgres://admin:hunter2secret@db.local:5432/app", "hunter2secret"),
        ("https://user:p%40ss@example.com/path", "p%40ss"),
        ("login?user=bob&password=correcthorse&next=/", "correcthorse"),
        ("mysql --password=s3cr3tvalue -u root", "s3cr3tvalue"),
        ("GET /cb?token=abc123def456&x=1", "abc123def456"),
        ("api_key=AIzaSyD-very-long-key-123", "AIzaSyD-very-long-key-123"),
        ("secret=topsecretvalue", "topsecretvalue"),
        ('{"username": "bob", "password": "hunter2"}', "hunter2"),
        ("{'api_key': 'abc-def-ghi'}", "abc-def-ghi"),
        ('password = "letmein123"', "letmein123"),
        ("DB_PASSWORD=pa55word!", "pa55word!"),
        ("GITHUB_TOKEN=plainvalue42", "plainvalue42"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ],
)
def test_secret_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert REDACTED in out


def test_context_around_a_secret_is_kept() -> None:
    assert redact("psql postgres://admin:pw123@db.local:5432/app") == (
        "psql postgres://[REDACTED]@db.local:5432/app"
    )
    assert redact('{"password": "hunter2", "user": "bob"}') == (
        '{"password": "[REDACTED]", "user": "bob"}'
    )
    assert redact(f"Authorization: Bearer {JWT}") == "Authorization: Bearer [REDACTED]"
    assert redact(f"a\n{PRIVATE_KEY}\nb") == "a\n[REDACTED]\nb"


ORDINARY = [
    "def count_tokens(text: str, max_tokens=100) -> int:",
    "self.token = token",
    "token = tokenizer.encode(text)",
    "def login(user, password=None):",
    "connect(password=password, token=self.token)",
    "password_hash = bcrypt.hash(pw)",
    "if token == expected_token:",
    "The secret to fast tests is a small fixture.",
    "Send a Bearer token in the Authorization header.",
    "pip install scikit-learn  # formerly sk-learn",
    "disk-based task-queue risk-assessment",
    "git clone git@github.com:owner/repo.git",
    "see https://example.com/docs?page=2&lang=en",
    "ssh://git@github.com/owner/repo.git",
    "commit 3f9c2a1b7e8d4c6f5a0b9e8d7c6f5a4b3c2d1e0f",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "MAX_TOKENS=4096 TOKENIZER=cl100k_base",
    "password: str",
    "token=$GITHUB_TOKEN",
    "AKIAB is not a key",
    "ghp_short",
    "{'token_type': 'bearer', 'expires_in': 3600}",
    "x = a:b@c",
    "ratio = 3:1 at http://localhost:8080/v1",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_and_prose_are_untouched(text: str) -> None:
    assert redact(text) == text


def test_redact_messages_copies_and_covers_every_string() -> None:
    messages = [
        {"role": "user", "content": f"use {OPENAI_KEY}"},
        {"role": "user", "content": [{"type": "text", "text": f"and {AWS_KEY}"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": f'{{"cmd": "echo {GITHUB_TOKEN}"}}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": f"{SLACK_TOKEN}\n"},
    ]
    before = copy.deepcopy(messages)
    out = redact_messages(messages)
    assert messages == before  # input not mutated
    text = repr(out)
    for secret in (OPENAI_KEY, AWS_KEY, GITHUB_TOKEN, SLACK_TOKEN):
        assert secret not in text
    assert out[2]["tool_calls"][0]["id"] == "call_1"
    assert out[3]["tool_call_id"] == "call_1"
    assert out[2]["content"] is None
    assert len(out) == len(messages)


@pytest.mark.parametrize(
    "text",
    [
        "a" * 200_000,
        "sk-" * 60_000,
        "Bearer " * 30_000,
        "-----BEGIN PRIVATE KEY-----" * 5_000,
        "a.b+c-" * 40_000 + "://",
        "password=" * 25_000,
        "A_" * 100_000 + "=",
        "x:" * 100_000 + "@",
    ],
)
def test_adversarial_input_stays_linear(text: str) -> None:
    # A backtracking pattern would hang here (speed is measured in benchmarks, not asserted).
    assert len(redact(text)) > 0


# Pieces of every trigger word, in both cases, and characters whose case folding is wider than
# lower(): the long s reads as "s" and the Kelvin sign as "k" to a case-insensitive pattern.
_TRIGGER_PIECES = [
    "sk", "SK", "rk", "-", "_", "whsec", "AIza", "aiza", "eyJ", "EYJ", "gh", "p", "o", "u", "s",
    "r", "github", "pat", "AKIA", "asia", "xox", "XOX", "earer", "EARER", "PRIVATE", " ", "key",
    "KEY", ":", "=", "/", "\n", "a", "ſ", "\u212a", "İ", "ı", "é",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_TRIGGER_PIECES), max_size=30))
def test_the_secret_pre_check_agrees_with_the_trigger_pattern(pieces: list[str]) -> None:
    # The substring pre-check is only a faster reading of _TRIGGERS: it must decide the same.
    text = "".join(pieces)
    assert redact_module.may_hold_secret(text) == (
        redact_module._TRIGGERS.search(text) is not None
    ), text


def test_only_the_listed_characters_fold_into_ascii() -> None:
    # What the pre-check's lower() shortcut relies on, over every code point outside ASCII.
    ascii_letter = re.compile(r"[a-z]", re.IGNORECASE)
    folding = [
        chr(point)
        for point in range(128, 0x110000)
        if not 0xD800 <= point <= 0xDFFF
        and (ascii_letter.match(chr(point)) or any(c.isascii() for c in chr(point).lower()))
    ]
    assert sorted(folding) == sorted(redact_module.FOLDS_INTO_ASCII)


# Fragments of every rule's secrets and of what its pre-test reads: names in both cases, the
# separators and quotes (plain and JSON-escaped), key prefixes, and the characters that fold
# wider than lower() (so the case-insensitive rules' name test is sometimes not knowable).
_RULE_PIECES = [
    OPENAI_KEY, GITHUB_TOKEN, GITHUB_PAT, AWS_KEY, SLACK_TOKEN, JWT, PRIVATE_KEY[:80],
    "sk_live_" + "a1" * 8, "whsec_" + "b2" * 12, "AIza" + "c3" * 18,
    "password", "PASSWORD", "Passwd", "pwd", "token", "TOKEN", "api_key", "API_KEY", "secret",
    "SECRET", "private_key", "KEY", "key", "ſecret", "to\u212aen", "İ", "é",
    "=", ":", " = ", ": ", '"', "'", '\\"', "\\n", " ", "\n", "&", "$X", "hunter2", "v4lue9x",
    "curl -u ", "bob:", "https://", "user:pw@", "@host", "Bearer ", "bearer ", "abc123def456",
    "export ", "DB_", "-----BEGIN RSA PRIVATE KEY-----", "x", "ſecret=hunter2",
    "to\u212aen: 'v4lue9x'", "PAſſWORD=abc",
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_RULE_PIECES), max_size=14))
def test_the_rules_pre_tests_skip_only_passes_that_cannot_match(pieces: list[str]) -> None:
    """`redact` skips a rule's regex pass when the text lacks what the rule needs: it must
    give what every pass in order gives, on texts holding any mix of the rules' parts."""
    text = "".join(pieces)
    expected = redact_module.redact_every_rule(text)
    assert redact(text) == expected, text
