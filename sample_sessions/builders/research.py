"""Sample 5: a long Anthropic Messages research session over three unrelated problems.

An agent investigates, for the "paybright" shop (FastAPI + PostgreSQL + a React checkout):
Stripe webhook signature failures, database connection-pool exhaustion, and a checkout CSS
layout bug, then returns to the webhook. The topics are interleaved, so a focus topic ("the
Stripe webhook") visibly changes what the summary keeps. Written as Anthropic content blocks
(text, thinking, tool_use, tool_result); every assistant turn makes one tool call, so the
canonical message count is about the Anthropic one.
"""

from __future__ import annotations

import json
from typing import Any

from builders.common import IdMaker, search_result, thinking_block, token

Step = tuple[
    str | None, str | None, str, dict[str, Any], str
]  # thinking, text, tool, input, output

SYSTEM = """You are a research and debugging agent for the paybright engineering team. paybright is an online shop: a FastAPI backend (Python 3.12, SQLAlchemy 2.0, PostgreSQL 16 via psycopg 3), a React 18 checkout built with Vite, and Stripe for payments. You can search the web (web_search), open pages (browser_navigate), read repository files (read_file), search the repository (search_files) and run commands in a sandboxed checkout (terminal).

Work like an investigator: state a hypothesis, gather evidence, and say what the evidence shows. Cite the file and line or the page you rely on. Do not change production configuration; propose changes as diffs for the team to review."""

HANDLER = """import logging

import stripe
from fastapi import APIRouter, Header, HTTPException, Request

from paybright.config import settings
from paybright.orders import mark_paid, mark_payment_failed

router = APIRouter()
log = logging.getLogger("paybright.webhooks")


@router.post("/webhooks/stripe")
async def stripe_webhook(request: Request, stripe_signature: str = Header(None)):
    payload = await request.json()
    try:
        event = stripe.Webhook.construct_event(
            json.dumps(payload), stripe_signature, settings.stripe_webhook_secret
        )
    except stripe.error.SignatureVerificationError as error:
        log.warning("stripe signature check failed: %s", error)
        raise HTTPException(status_code=400, detail="invalid signature") from error
    if event["type"] == "payment_intent.succeeded":
        mark_paid(event["data"]["object"]["metadata"]["order_id"])
    elif event["type"] == "payment_intent.payment_failed":
        mark_payment_failed(event["data"]["object"]["metadata"]["order_id"])
    return {"received": True}"""

HANDLER_FIXED = """@router.post("/webhooks/stripe")
async def stripe_webhook(request: Request, stripe_signature: str = Header(None)):
    # Verify the exact bytes Stripe signed: re-serialising parsed JSON changes whitespace and
    # key order, and the HMAC no longer matches.
    payload = await request.body()
    try:
        event = stripe.Webhook.construct_event(
            payload, stripe_signature, settings.stripe_webhook_secret
        )
    except stripe.error.SignatureVerificationError as error:
        log.warning("stripe signature check failed: %s", error)
        raise HTTPException(status_code=400, detail="invalid signature") from error"""

DB_PY = """from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from paybright.config import settings

engine = create_engine(
    settings.database_url,
    pool_size=5,
    max_overflow=10,
    pool_timeout=30,
    pool_pre_ping=True,
)
SessionLocal = sessionmaker(bind=engine, expire_on_commit=False)


def get_session():
    session = SessionLocal()
    try:
        yield session
    finally:
        session.close()"""

CHECKOUT_CSS = """.checkout {
  display: flex;
  gap: 24px;
  max-width: 1120px;
  margin: 0 auto;
  padding: 32px 16px;
}

.checkout__form {
  flex: 1 1 auto;
}

.checkout__summary {
  flex: 0 0 360px;
  position: sticky;
  top: 24px;
  align-self: flex-start;
}

.summary__line {
  display: flex;
  justify-content: space-between;
  gap: 12px;
}

.summary__name {
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}

.card-element {
  width: 100%;
  padding: 12px;
  border: 1px solid var(--border);
  border-radius: 8px;
}

@media (max-width: 768px) {
  .checkout { flex-direction: column; }
  .checkout__summary { position: static; flex-basis: auto; }
}"""


def _step(
    tool: str,
    tool_input: dict[str, Any],
    output: str,
    thinking: str | None = None,
    text: str | None = None,
) -> Step:
    """One assistant turn: optional thinking and text, then one tool call and its output."""
    return (thinking, text, tool, tool_input, output)


def _run(command: str, output: str, thinking: str | None = None, text: str | None = None) -> Step:
    return _step("terminal", {"command": command}, output, thinking, text)


def _stripe_cli_log(lines: int, failing: bool, seed: int = 0) -> str:
    events = [
        "payment_intent.created",
        "charge.succeeded",
        "payment_intent.succeeded",
        "checkout.session.completed",
        "payment_intent.payment_failed",
        "charge.refunded",
    ]
    out = []
    for n in range(lines):
        event = events[n % len(events)]
        evt = "evt_3P" + token(f"evt{seed}-{n}", 21)
        status = 400 if failing and n % 7 != 3 else 200
        out.append(f"2024-06-1{n % 3 + 1} 14:{n % 60:02d}:{n * 7 % 60:02d}   --> {event} [{evt}]")
        out.append(
            f"2024-06-1{n % 3 + 1} 14:{n % 60:02d}:{(n * 7 + 1) % 60:02d}  <--  [{status}] POST "
            f"http://localhost:8000/webhooks/stripe [{evt}]"
        )
    return "\n".join(out)


def _api_log(lines: int, seed: int = 0) -> str:
    out = []
    for n in range(lines):
        stamp = f"2024-06-12T{14 + seed % 8:02d}:{n % 60:02d}:{n * 13 % 60:02d}.{(n + seed) * 977 % 1000:03d}Z"
        if n % 5 == 2:
            out.append(
                f'{{"ts": "{stamp}", "level": "WARNING", "logger": "paybright.webhooks", '
                '"msg": "stripe signature check failed: No signatures found matching the expected '
                'signature for payload", "request_id": "' + token(f"r{seed}-{n}", 16) + '"}'
            )
        else:
            out.append(
                f'{{"ts": "{stamp}", "level": "INFO", "logger": "uvicorn.access", "msg": '
                f'"10.0.{n % 4}.{n % 200 + 10}:0 - \\"POST /webhooks/stripe HTTP/1.1\\" '
                f'{400 if n % 5 == 2 else 200}", "request_id": "' + token(f"r{seed}-{n}", 16) + '"}'
            )
    return "\n".join(out)


def _pool_log(lines: int, seed: int = 0) -> str:
    out = []
    for n in range(lines):
        stamp = f"2024-06-12 {15 + seed % 8:02d}:{n % 60:02d}:{(n + seed) * 11 % 60:02d},{(n + seed) * 131 % 1000:03d}"
        if n % 6 == 0:
            out += [
                f"{stamp} ERROR paybright.api Exception in ASGI application",
                "Traceback (most recent call last):",
                '  File "/app/.venv/lib/python3.12/site-packages/sqlalchemy/pool/impl.py", line 169, in _do_get',
                "    raise exc.TimeoutError(",
                "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, "
                "connection timed out, timeout 30.00 (Background on this error at: https://sqlalche.me/e/20/3o7r)",
            ]
        else:
            out.append(
                f'{stamp} INFO uvicorn.access 10.0.2.{n % 90 + 10}:0 - "GET /api/products?page={n % 9 + 1} '
                f'HTTP/1.1" 200 ({30 + n * 17 % 900} ms)'
            )
    return "\n".join(out)


def _pg_activity(rows: int, seed: int = 0) -> str:
    header = (
        " pid  | usename  | application_name | state               | wait_event   |"
        " xact_age  | query\n" + "-" * 120
    )
    lines = [header]
    for n in range(rows):
        idle = n % 3 != 0
        lines.append(
            f" {41200 + seed * 97 + n * 7:<5} | paybright | gunicorn-w{n % 4}     | "
            f"{'idle in transaction' if idle else 'active':<19} | {'ClientRead' if idle else '':<12} | "
            f"00:0{n % 6}:{n * 7 % 60:02d}  | "
            + (
                "SELECT products.id, products.name, products.price_cents FROM products WHERE products.id = ANY(%(ids)s)"
                if idle
                else "UPDATE orders SET status='paid' WHERE id = %(id)s"
            )
        )
    lines.append(f"({rows} rows)")
    return "\n".join(lines)


def _page(title: str, paragraphs: list[str], repeat: int) -> str:
    body = [f"# {title}", ""]
    for n in range(repeat):
        body.append(paragraphs[n % len(paragraphs)])
        body.append("")
    return "\n".join(body)


STRIPE_DOC = [
    "Stripe signs every webhook request it sends. The Stripe-Signature header carries a timestamp (t=) and one or more signatures (v1=); the signature is an HMAC-SHA256 of the string `timestamp.payload` computed with your endpoint's signing secret (whsec_…).",
    "Verification needs the raw request body exactly as received. Frameworks that parse the body as JSON and serialise it again change whitespace or key order, and the computed HMAC no longer matches: the library then reports that no signatures match the expected signature for the payload.",
    "Each endpoint has its own signing secret. The secret printed by `stripe listen` is different from the one shown for a Dashboard endpoint; using the wrong one fails every event, not just some.",
    "The default tolerance for the timestamp is 300 seconds, which protects against replays. A server clock that drifts by more than that makes every verification fail with a timestamp error rather than a signature mismatch.",
    "Return a 2xx quickly and do slow work asynchronously; Stripe retries failed deliveries with exponential backoff for up to three days.",
]

POOL_DOC = [
    "QueuePool keeps up to pool_size connections open and allows max_overflow extra connections under load. A checkout waits pool_timeout seconds for a free connection and then raises TimeoutError.",
    "A connection returns to the pool only when the Session that holds it is closed or its transaction ends. Sessions left open across an await, or generators whose cleanup never runs, keep connections checked out: the pool drains although the database is idle.",
    "In PostgreSQL such sessions show as `idle in transaction` in pg_stat_activity. Setting idle_in_transaction_session_timeout on the server limits the damage but hides the leak.",
    "Each worker process has its own pool: with 4 gunicorn workers and pool_size=5, max_overflow=10, the application may open up to 60 connections; keep that below max_connections minus what other clients need.",
]

CSS_DOC = [
    "A flex item's default min-width is auto, which for most items means it cannot shrink below the width of its content. A long unbreakable string or an element with an intrinsic width inside the item then forces the item — and the container — wider than the viewport.",
    "Setting min-width: 0 (or overflow: hidden) on the flex item lets it shrink below its content size, so text-overflow: ellipsis on a descendant can take effect.",
    "Iframes inserted by payment widgets have an intrinsic width; give their container width: 100% and min-width: 0 so the iframe follows the layout.",
]


def _stripe_steps() -> list[Step]:
    return [
        _step(
            "read_file",
            {"path": "paybright/webhooks/stripe.py"},
            HANDLER,
            thinking="The team says signature verification fails for all live webhooks since Monday's deploy. Start with the handler.",
            text="Let me look at the webhook handler first.",
        ),
        _run(
            "kubectl logs deploy/paybright-api --since=1h | grep webhooks | tail -n 120",
            _api_log(120),
        ),
        _step(
            "web_search",
            {
                "query": "stripe webhook No signatures found matching the expected signature for payload fastapi raw body"
            },
            json.dumps(
                {
                    "results": [
                        {
                            "title": "Check the webhook signatures | Stripe Documentation",
                            "url": "https://docs.stripe.com/webhooks/signature",
                            "snippet": "Verify the events that Stripe sends to your webhook endpoints using the raw request body and your endpoint's secret.",
                        },
                        {
                            "title": "Resolve webhook signature verification errors",
                            "url": "https://docs.stripe.com/webhooks/signature#troubleshooting",
                            "snippet": "The most common cause is a framework that modifies the raw body before verification.",
                        },
                        {
                            "title": "FastAPI: get the raw request body",
                            "url": "https://fastapi.tiangolo.com/advanced/using-request-directly/",
                            "snippet": "Use await request.body() to get the bytes exactly as received.",
                        },
                    ]
                },
                indent=1,
            ),
            thinking="Every Stripe POST fails 4 out of 5 times with 'No signatures found matching the expected signature for payload'. The handler re-serialises request.json() — that alone would break verification.",
            text="The handler verifies `json.dumps(await request.json())`, not the raw body. Let me check what Stripe says about verification.",
        ),
        _step(
            "browser_navigate",
            {"url": "https://docs.stripe.com/webhooks/signature"},
            _page("Check the webhook signatures (notes)", STRIPE_DOC, 15),
        ),
        _run(
            "stripe listen --forward-to localhost:8000/webhooks/stripe --print-json=false 2>&1 | head -n 160",
            _stripe_cli_log(80, True),
            text="Why only 4 in 5 and not all? Let me compare with the Stripe CLI forwarding locally.",
        ),
        _step(
            "search_files",
            {"pattern": "construct_event|STRIPE_WEBHOOK_SECRET", "path": "."},
            search_result(
                [
                    ("paybright/webhooks/stripe.py", 17, "event = stripe.Webhook.construct_event("),
                    (
                        "paybright/config.py",
                        22,
                        'stripe_webhook_secret: str = Field(alias="STRIPE_WEBHOOK_SECRET")',
                    ),
                    (
                        "deploy/values-prod.yaml",
                        41,
                        "STRIPE_WEBHOOK_SECRET: {secretKeyRef: {name: stripe, key: webhook-secret-live}}",
                    ),
                    (".env.example", 6, "STRIPE_WEBHOOK_SECRET=whsec_replace_me"),
                ]
            ),
            thinking="The ones that pass are events whose JSON happens to round-trip identically (no floats, ASCII-only, same key order). Payment intents with metadata containing non-ASCII names fail — json.dumps escapes them.",
        ),
    ]


def _stripe_followup() -> list[Step]:
    return [
        _run(
            "git diff --no-index paybright/webhooks/stripe.py /tmp/stripe_fixed.py",
            "--- a/paybright/webhooks/stripe.py\n+++ b/paybright/webhooks/stripe.py\n"
            + "\n".join(f"+{line}" for line in HANDLER_FIXED.split("\n")),
            thinking="Back to the webhook. Write the fix as a diff and a test that signs a payload with a non-ASCII name.",
            text="Proposed fix: verify the raw bytes.",
        ),
        _run(
            "pytest -x tests/webhooks -q",
            "F\n=================================== FAILURES ===================================\n"
            "______________________ test_signature_with_unicode_metadata ______________________\n\n"
            ">       assert response.status_code == 200\nE       assert 400 == 200\n\n"
            "tests/webhooks/test_stripe.py:48: AssertionError\n----------------------------- Captured log call -----------------------------\n"
            "WARNING  paybright.webhooks:stripe.py:21 stripe signature check failed: No signatures found matching the expected signature for payload\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/webhooks/test_stripe.py::test_signature_with_unicode_metadata - assert 400 == 200\n1 failed in 0.42s",
        ),
        _run(
            "cp /tmp/stripe_fixed.py paybright/webhooks/stripe.py && pytest -x tests/webhooks -q",
            "....\n4 passed in 0.37s",
            thinking="The test ran against the old handler: I only wrote the diff to /tmp. Apply and rerun.",
        ),
        _run(
            "stripe listen --forward-to localhost:8000/webhooks/stripe 2>&1 | head -n 120",
            _stripe_cli_log(60, False),
        ),
    ]


def _pool_steps() -> list[Step]:
    return [
        _step(
            "read_file",
            {"path": "paybright/db.py"},
            DB_PY,
            text="Switching to the connection-pool timeouts.",
        ),
        _run(
            "kubectl logs deploy/paybright-api --since=30m | grep -B1 -A5 TimeoutError | head -n 300",
            _pool_log(150),
        ),
        _run(
            "psql $DATABASE_URL -c \"SELECT pid, usename, application_name, state, wait_event, now() - xact_start AS xact_age, left(query, 100) AS query FROM pg_stat_activity WHERE datname = 'paybright' ORDER BY xact_start\"",
            _pg_activity(60),
            thinking="QueuePool limit of size 5 overflow 10 reached. The database is nearly idle, so connections are being held, not used.",
        ),
        _step(
            "browser_navigate",
            {"url": "https://docs.sqlalchemy.org/en/20/core/pooling.html"},
            _page("Connection pooling (notes)", POOL_DOC, 12),
        ),
        _step(
            "search_files",
            {"pattern": "SessionLocal\\(\\)", "path": "paybright"},
            search_result(
                [
                    ("paybright/db.py", 16, "session = SessionLocal()"),
                    (
                        "paybright/catalog/prices.py",
                        28,
                        "session = SessionLocal()  # TODO: use get_session",
                    ),
                    ("paybright/catalog/stream.py", 12, "session = SessionLocal()"),
                ]
            ),
        ),
        _step(
            "read_file",
            {"path": "paybright/catalog/stream.py"},
            "async def stream_products(ids):\n    session = SessionLocal()\n    for chunk in batched(ids, 100):\n"
            "        rows = session.execute(select(Product).where(Product.id.in_(chunk))).scalars().all()\n"
            '        for row in rows:\n            yield ProductOut.model_validate(row).model_dump_json() + "\\n"\n'
            "    session.close()  # never reached when the client disconnects mid-stream",
            thinking="catalog/stream.py opens a session inside an async generator used by a StreamingResponse; when the client disconnects the generator is never closed, so the session and its connection stay checked out 'idle in transaction'.",
            text="Found the leak candidate: a session opened inside a streaming generator.",
        ),
    ]


def _css_steps() -> list[Step]:
    return [
        _step(
            "read_file",
            {"path": "web/src/checkout/checkout.css"},
            CHECKOUT_CSS,
            text="Now the checkout layout bug: the order summary is pushed off-screen on mobile widths around 400px.",
        ),
        _run(
            "npx playwright screenshot --viewport-size=390,844 http://localhost:5173/checkout /tmp/co.png && node scripts/computed-widths.mjs",
            "\n".join(
                f"{sel:<28} width={w}px  min-width={mw}  overflow={o}"
                for sel, w, mw, o in [
                    (".checkout", 390, "auto", "visible"),
                    (".checkout__form", 552, "auto", "visible"),
                    (".card-element", 520, "auto", "visible"),
                    ("iframe[name^=__privateStripe]", 520, "auto", "visible"),
                    (".checkout__summary", 390, "auto", "visible"),
                    (".summary__line", 358, "auto", "visible"),
                    (".summary__name", 301, "auto", "hidden"),
                ]
                * 6
            ),
        ),
        _step(
            "browser_navigate",
            {"url": "https://developer.mozilla.org/en-US/docs/Web/CSS/min-width"},
            _page("min-width and flex items (notes)", CSS_DOC, 12),
        ),
    ]


WIDTH_ROWS = [
    (f".checkout > :nth-child({n}) {part}", extra)
    for n in (1, 2)
    for part, extra in (
        (".checkout__form", 162),
        (".card-element", 130),
        ("iframe", 130),
        (".summary__line", -32),
        (".summary__name", -89),
        ("button.pay", -64),
    )
]


def _steps() -> list[tuple[str | None, list[Step]]]:
    """(user message or None, steps) blocks in story order."""
    blocks: list[tuple[str | None, list[Step]]] = [
        (
            "Three things broke this week and I need you to research each: (1) Stripe webhooks fail signature verification in production since Monday's deploy, (2) the API throws connection-pool timeouts under modest load, (3) the checkout page layout breaks on phones. Start with the webhooks, they cost us money.",
            _stripe_steps(),
        ),
        (
            "Good. Pause the webhook for now and look at the pool timeouts, ops is paging about them.",
            _pool_steps(),
        ),
        (
            "While you're at it, the designers want to know why the checkout overflows on phones.",
            _css_steps(),
        ),
    ]
    # More rounds of evidence on each topic, so the session is long like a real investigation.
    extra: list[Step] = []
    for n in range(18):
        extra.append(
            _run(
                f"kubectl logs pod/paybright-api-7d9f8-{token(str(n), 5).lower()} --since=10m | tail -n 60",
                _pool_log(14, n) if n % 2 else _api_log(20, n),
            )
        )
        extra.append(
            _run(
                f"stripe events list --limit 40 --starting-after evt_{token('s' + str(n), 10)}",
                _stripe_cli_log(14, n < 9, n),
            )
        )
    blocks.append(
        (
            "Keep collecting evidence on both the webhook and the pool across all api pods, I want to be sure it's not one bad pod.",
            extra,
        )
    )
    css_more: list[Step] = [
        _run(
            f"node scripts/computed-widths.mjs --viewport {w}",
            "\n".join(f"{sel:<32} width={w + extra}px min-width=auto" for sel, extra in WIDTH_ROWS),
        )
        for w in (320, 360, 375, 390, 414, 430, 768, 1024)
    ]
    blocks.append(("For the CSS, check every common phone width, not just 390.", css_more))
    pool_more: list[Step] = [
        _run(
            f"psql $DATABASE_URL -c \"SELECT count(*) FILTER (WHERE state = 'idle in transaction') FROM pg_stat_activity\" # sample {n}",
            f" count \n-------\n    {12 + n % 4}\n(1 row)\n" + _pg_activity(10, n),
        )
        for n in range(10)
    ]
    blocks.append(
        (
            "Sample pg_stat_activity a few more times so we can see whether the idle-in-transaction count grows.",
            pool_more,
        )
    )
    blocks.append(
        (
            "OK. Now back to the Stripe webhook: write the fix, test it with a signed payload that has a non-ASCII customer name, and confirm with the Stripe CLI. Then give me a summary of all three issues with the recommended change for each.",
            _stripe_followup(),
        )
    )
    return blocks


def build() -> dict[str, Any]:
    ids = IdMaker("research-session")
    messages: list[dict[str, Any]] = []
    for block_index, (user_text, steps) in enumerate(_steps()):
        if user_text is not None:
            messages.append({"role": "user", "content": user_text})
        pending_user: list[dict[str, Any]] = []
        for thinking, text, tool, tool_input, output in steps:
            if pending_user:
                messages.append({"role": "user", "content": pending_user})
            blocks: list[dict[str, Any]] = []
            if thinking:
                blocks.append(thinking_block(thinking, "sig" + thinking))
            if text:
                blocks.append({"type": "text", "text": text})
            call_id = ids.anthropic()
            blocks.append({"type": "tool_use", "id": call_id, "name": tool, "input": tool_input})
            messages.append({"role": "assistant", "content": blocks})
            pending_user = [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": [{"type": "text", "text": output}],
                }
            ]
        if pending_user:
            messages.append({"role": "user", "content": pending_user})
        # The agent's written conclusion of each block, in its own assistant turn.
        conclusion = CONCLUSIONS[block_index]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": conclusion}]})
    return {"model": "claude-sonnet-4-20250514", "system": SYSTEM, "messages": messages}


CONCLUSIONS = [
    "Stripe webhook, first findings: the handler verifies `json.dumps(await request.json())` instead of the raw body, so the HMAC only matches when the JSON round-trips byte for byte; events with non-ASCII metadata (customer names) fail with `No signatures found matching the expected signature for payload`. The signing secret itself is right (live endpoint secret from the stripe secret). Fix: pass `await request.body()` to construct_event.",
    "Pool timeouts: `sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00` while PostgreSQL is mostly idle; pg_stat_activity shows many `idle in transaction` sessions from gunicorn workers. Cause: paybright/catalog/stream.py opens a session in an async generator and only closes it at the end, so every client that disconnects mid-stream leaks a connection. Fix: open the session with `with SessionLocal() as session:` inside the generator (or use get_session as a dependency) so cleanup runs on disconnect.",
    "Checkout layout: `.checkout__form` is a flex item with the default `min-width: auto`, and the Stripe card iframe inside it has an intrinsic width of 520px, so at 390px the form is 552px wide and pushes the summary off-screen. Fix: `.checkout__form { min-width: 0; }` and `.card-element { min-width: 0; }`.",
    "Across all pods: the webhook failures and the pool leak appear on every api pod, with the same error lines — not one bad pod. Webhook failures stop on pods that got the canary build with the raw-body fix.",
    "Every phone width from 320 to 430px overflows by the same 162px (the iframe's intrinsic width minus the viewport); 768px and up are fine because of the column layout breakpoint.",
    "idle-in-transaction connections grow between samples (12 → 15) and drop only when pods restart: a leak, not load.",
    "Summary of all three:\n1. Stripe webhook — verify the raw request body (`await request.body()`) instead of re-serialised JSON; tested with a signed payload containing 'Zoë Ångström', 4 tests pass, and the Stripe CLI shows 200 for every forwarded event.\n2. Connection pool — close sessions inside the streaming generator with a context manager; optionally set idle_in_transaction_session_timeout = 60s on the server as a safety net.\n3. Checkout CSS — `min-width: 0` on `.checkout__form` and `.card-element`.",
]
