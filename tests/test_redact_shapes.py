"""The secret shapes of issue 20 item 7: redacted directly, kept out of the history file, out of
the request sent to an LLM, and out of the `compress --report` JSON's `prompt`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from history_factory import make_result
from llm_server import LLMServer

from compaction.cli import main
from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.history import History
from compaction.phases.summary_prompt import build_prompt, serialize_turns
from compaction.summarizers.llm import LLMSummarizer
from compaction.text.redact import REDACTED, redact, redact_messages

# Each secret is split so this file itself holds no scannable key.
CURL_PASSWORD = "Curl" + "Pa55word9"
JSON_PASSWORD = "json" + "Hunter2secret"
CONFIG_PASSWORD = "ini" + "CorrectHorse7"
ENV_KEY = "8f3a" + "c9d27e1b4a6f0d5c2e8b7a9f1d3c6e4b"
ENV_TOKEN = "envtok" + "en-value-42"
ENV_SECRET = "envsec" + "ret_value_99"
STRIPE_SECRET = "sk_live_" + "51HxYzAbCdEfGhIjKlMnOp1234"
STRIPE_RESTRICTED = "rk_live_" + "51HxYzQrStUvWxYzAbCd5678"
STRIPE_TEST = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE_KEY = "AIza" + "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

SHAPES: list[tuple[str, str]] = [
    (f"curl -u admin:{CURL_PASSWORD} https://api.example.com/v1", CURL_PASSWORD),
    (f"curl -s --user 'admin:{CURL_PASSWORD}' https://x.io", CURL_PASSWORD),
    (f'curl -X POST -u "deploy@example.com:{CURL_PASSWORD}" https://x.io', CURL_PASSWORD),
    (f"curl -uadmin:{CURL_PASSWORD} https://x.io", CURL_PASSWORD),
    (f"curl --proxy-user bob:{CURL_PASSWORD} -x proxy:3128 https://x.io", CURL_PASSWORD),
    (json.dumps({"command": f"curl -u 'admin:{CURL_PASSWORD}' x"}), CURL_PASSWORD),
    (json.dumps({"command": f'curl -u "admin:{CURL_PASSWORD}" x'}), CURL_PASSWORD),
    (json.dumps({"code": f'password = "{JSON_PASSWORD}"'}), JSON_PASSWORD),
    (json.dumps({"code": f'db_password = "{JSON_PASSWORD}"'}), JSON_PASSWORD),
    (json.dumps({"body": json.dumps({"password": JSON_PASSWORD})}), JSON_PASSWORD),
    (json.dumps({"a": json.dumps({"code": f"password = '{JSON_PASSWORD}'"})}), JSON_PASSWORD),
    (json.dumps({"content": f"[db]\npassword = '{CONFIG_PASSWORD}'\n"}), CONFIG_PASSWORD),
    (json.dumps({"content": f"[db]\npassword={CONFIG_PASSWORD}\nport=5"}), CONFIG_PASSWORD),
    (f'DB_PASSWORD="{CONFIG_PASSWORD}"', CONFIG_PASSWORD),
    (f"ENCRYPTION_KEY={ENV_KEY}", ENV_KEY),
    (f"export STRIPE_KEY={STRIPE_SECRET}", STRIPE_SECRET),
    (f"export SIGNING_KEY='{ENV_KEY}'", ENV_KEY),
    (f"NPM_TOKEN={ENV_TOKEN}", ENV_TOKEN),
    (f"SESSION_SECRET={ENV_SECRET}", ENV_SECRET),
    (json.dumps({"content": f"A=1\nNPM_TOKEN={ENV_TOKEN}\nB=2"}), ENV_TOKEN),
    (json.dumps({"content": f'A=1\nAPP_KEY="{ENV_KEY}"\nB=2'}), ENV_KEY),
    (f"stripe.api_key = {STRIPE_SECRET}", STRIPE_SECRET),
    (f"key: {STRIPE_RESTRICTED}", STRIPE_RESTRICTED),
    (f"Stripe(\n{STRIPE_TEST})", STRIPE_TEST),
    (json.dumps({"content": f"keys:\n{STRIPE_SECRET}"}), STRIPE_SECRET),
    (f"https://maps.googleapis.com/maps/api/js?key={GOOGLE_KEY}", GOOGLE_KEY),
    (f"const firebase = {{apiKey: {GOOGLE_KEY}}}", GOOGLE_KEY),
    (f"cookie session={JWT}; path=/", JWT),
    (f"the id token is {JWT}", JWT),
    (json.dumps({"token_in_text": f"got\n{JWT}"}), JWT),
    (JWT.rsplit(".", 1)[0] + ".", JWT.rsplit(".", 1)[0]),  # alg "none": empty signature
]


@pytest.mark.parametrize(("text", "secret"), SHAPES)
def test_shape_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert REDACTED in out


def test_redacted_tool_arguments_stay_valid_json() -> None:
    for text, secret in SHAPES:
        if text.startswith("{"):
            decoded = json.loads(redact(text))  # the escaped quotes survive redaction
            assert secret not in json.dumps(decoded)


def test_context_around_the_new_shapes_is_kept() -> None:
    assert redact(f"curl -u admin:{CURL_PASSWORD} https://x.io") == (
        "curl -u admin:[REDACTED] https://x.io"
    )
    assert redact(json.dumps({"code": f'password = "{JSON_PASSWORD}"'})) == (
        '{"code": "password = \\"[REDACTED]\\""}'
    )
    assert redact(f'DB_PASSWORD="{CONFIG_PASSWORD}" PORT=5432') == (
        'DB_PASSWORD="[REDACTED]" PORT=5432'
    )
    assert redact(f"Authorization: token {JWT}!") == "Authorization: token [REDACTED]!"


ORDINARY = [
    "KEY_COLUMN = 3",
    "KEY_COLUMN=3",
    "SORT_KEY=created_at",
    "PRIMARY_KEY=id",
    "CACHE_KEY=user_profile_v2",
    "PARTITION_KEY=tenant_id HOTKEY=F5",
    "TOKEN_LIMIT=4096 MAX_TOKENS=100",
    "GITHUB_TOKEN=$GITHUB_TOKEN",
    "API_TOKEN=${API_TOKEN}",
    "docker run -u 1000:1000 image:latest",
    "git push -u origin main",
    "sort -u names.txt | uniq -c",
    'curl -u "$USER:$PASS" https://x.io',
    "curl -H 'Accept: application/json' https://x.io/a:b",
    "task_live_update and desk_test_plan",
    "sk_live is Stripe's live-mode prefix",
    "AIza is how Google keys begin",
    'eyJ is base64 for {"',
    "version 1.2.3 and eyJhbGciOiJIUzI1NiJ9 alone",
    "risk_test_suite_0123456789",
    '{"token_type": "bearer", "expires_in": 3600}',
    'print("password:", mask(password))',
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_near_the_new_shapes_is_untouched(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "curl " + "x" * 200_000,
        "curl -u " * 30_000,
        "eyJ" + "a" * 100_000 + ".eyJ" * 20_000,
        "A_KEY=" * 30_000,
        '\\"password\\": ' * 20_000,
        "\\n" * 100_000 + "sk_live_",
        "AIza" * 50_000,
    ],
)
def test_new_patterns_stay_linear(text: str) -> None:
    assert len(redact(text)) > 0


SECRETS = sorted({secret for _, secret in SHAPES})


def secret_conversation() -> list[dict[str, Any]]:
    """A session whose user text, tool-call arguments and tool outputs hold every shape, long
    enough that the middle is summarised at a 2,000-token window."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Deploy the billing service; the config is in .env."},
    ]
    for index, (text, _secret) in enumerate(SHAPES):
        call_id = f"call_{index}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {index}: checking the credentials.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "bash",
                            "arguments": json.dumps({"command": f"echo step {index}\n{text}"}),
                        },
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": f"output {index}:\n{text}\n"}
        )
        messages.append({"role": "user", "content": f"Noted ({text}). Continue with step {index}."})
    messages.append({"role": "user", "content": "Now finish the deploy."})
    return messages


CONFIG = CompactionConfig(context_length=4000, counter="rough")


def test_the_conversation_holds_every_secret() -> None:
    text = json.dumps(secret_conversation())
    assert all(secret in text for secret in SECRETS)
    assert not any(
        secret in json.dumps(redact_messages(secret_conversation())) for secret in SECRETS
    )


def _db_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*") if p.is_file())


def _stored_after_recording(messages: list[dict[str, Any]], result: Any, path: Path) -> bytes:
    with History() as history:
        run_id = history.record(messages, result, label="deploy", note="billing")
        assert history.run(run_id) is not None
    stored = _db_bytes(path)
    assert b"Now finish the deploy." in stored  # the conversation is there, in clear text
    assert b"checking the credentials" in stored
    return stored


def test_no_secret_reaches_the_history_file(_history_db: Path) -> None:
    # The run as history_factory builds it: input, phases and final messages all hold secrets.
    messages = secret_conversation()
    result = make_result(messages)
    for phase in result.phases:
        phase.messages = messages if phase.name != "summarize" else phase.messages
    prompt = build_prompt(serialize_turns(messages), 2000)
    assert all(secret in prompt for secret in SECRETS)
    result.phase("summarize").details["prompt"] = prompt
    stored = _stored_after_recording(messages, result, _history_db)
    for secret in SECRETS:
        assert secret.encode() not in stored, secret


# The extractive summariser redacts the lines it extracts; a value whose only secret marker is
# the name it is assigned to (`ENCRYPTION_KEY=<hex>`) used to come out as "Hashes: <hex>" with
# the name gone. Identifiers mined from a text that names a secret are now checked against the
# redacted text first.
@pytest.mark.parametrize("secret", SECRETS)
def test_no_secret_reaches_the_history_file_through_a_real_run(
    _history_db: Path, secret: str
) -> None:
    messages = secret_conversation()
    result = Compactor(CONFIG).compress(messages, force=True)
    assert result.phase("summarize").details["turns"] > 0
    stored = _stored_after_recording(messages, result, _history_db)
    assert secret.encode() not in stored


def _llm(server: LLMServer) -> LLMSummarizer:
    return LLMSummarizer("openai/main", api_base=server.base_url, api_key="test-key", timeout=10)


@pytest.mark.parametrize("stream", [False, True])
def test_no_secret_reaches_the_llm_and_the_phase_reports_what_was_sent(
    llm_server: LLMServer, stream: bool
) -> None:
    llm = _llm(llm_server)
    on_token = (lambda _t: None) if stream else None
    result = Compactor(CONFIG, llm).compress(secret_conversation(), force=True, on_token=on_token)
    assert len(llm_server.requests) == 1
    body = json.dumps(llm_server.requests[0].body)
    for secret in SECRETS:
        assert secret not in body, secret
    assert body.count(REDACTED) >= len(SECRETS)
    sent = llm_server.requests[0].body["messages"][-1]["content"]
    details = result.phase("summarize").details
    assert details["prompt"] == sent  # the report shows what left the machine
    assert llm.last_prompt == sent


def test_a_failed_call_still_reports_the_redacted_prompt(llm_server: LLMServer) -> None:
    llm_server.fail(500)
    result = Compactor(CONFIG, _llm(llm_server)).compress(secret_conversation(), force=True)
    assert result.phase("summarize").details["fallback_used"] == "static"
    prompt = result.phase("summarize").details["prompt"]
    assert REDACTED in prompt
    assert not any(secret in prompt for secret in SECRETS)


def test_compress_report_prompt_is_the_redacted_one_sent(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTION_API_KEY", "test-key")
    source, out, report = tmp_path / "s.json", tmp_path / "out.json", tmp_path / "report.json"
    source.write_text(json.dumps(secret_conversation()), encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "compress",
            str(source),
            "--context-length",
            "4000",
            "--counter",
            "rough",
            "--summarizer",
            "llm",
            "--model",
            "openai/main",
            "--api-base",
            llm_server.base_url,
            "-o",
            str(out),
            "--report",
            str(report),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert len(llm_server.requests) == 1
    sent = llm_server.requests[0].body["messages"][-1]["content"]
    data = json.loads(report.read_text(encoding="utf-8"))
    summarize = next(phase for phase in data["phases"] if phase["name"] == "summarize")
    assert summarize["details"]["prompt"] == sent
    for secret in SECRETS:
        assert secret not in summarize["details"]["prompt"], secret
