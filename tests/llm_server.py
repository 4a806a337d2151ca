"""A loopback OpenAI-compatible server for testing the LLM summariser through the real litellm.

Why a real server and not a mock of `litellm.completion`: the failure policy depends on how
litellm and the OpenAI SDK turn HTTP statuses, slow answers and SSE streams into exceptions and
chunks; only a real socket exercises that path (httpx does the same in its own test suite).

The server runs `ThreadingHTTPServer` on 127.0.0.1, port 0, in a daemon thread. Each test scripts
its answer (`answer`, `empty`, `fail`, `hang`), optionally for one model name only, and then reads
`requests` — every request the server saw, with its parsed JSON body and headers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_SUMMARY = "\n\n".join(
    [
        "## Active Task\nFix the failing login test.",
        "## Goal\nMake the auth module pass its tests.",
        "## Completed Actions\n1. Ran pytest: 1 failed.",
        "## Relevant Files\n- auth/login.py (read)",
    ]
)


@dataclass
class Reply:
    """What the server does for one request.

    kind: "text" (a completion with `text`, possibly empty), "status" (an error status with an
    OpenAI-style error body), "hang" (wait `hang_seconds`, bounded, then answer `text`) or
    "scripted" (`respond(body)` returns the assistant message to answer with — text and/or
    `tool_calls` —: an agent's model, scripted to call tools turn after turn).
    """

    kind: str = "text"
    text: str = DEFAULT_SUMMARY
    status: int = 200
    message: str = ""
    hang_seconds: float = 0.0
    respond: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass
class RecordedRequest:
    """One request as the server saw it; header names are lower-cased."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def prompt_text(self) -> str:
        """All message contents of the request joined, for assertions on what was sent."""
        parts = []
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return "\n".join(parts)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "service_unavailable",
}


def _usage_for(body: dict[str, Any], text: str) -> dict[str, int]:
    """Deterministic, roughly realistic token counts (4 chars a token) the tests can compare."""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = len(text) // 4
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def split_chunks(text: str, size: int = 40) -> list[str]:
    """How the server cuts a streamed answer: fixed-size pieces, so tests can predict them."""
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(repr=False)
class LLMServer:
    """The scriptable server. Use as a context manager or through the `llm_server` fixture."""

    default: Reply = field(default_factory=Reply)
    per_model: dict[str, Reply] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    #: Usage the server reported in its most recent successful answer.
    last_usage: dict[str, int] | None = None
    #: The pieces of the most recent streamed answer, in the order they were sent.
    last_chunks: list[str] = field(default_factory=list)
    chunk_size: int = 40

    def __repr__(self) -> str:
        where = self.base_url if self._httpd is not None else "not started"
        return f"<LLMServer {where}, {len(self.requests)} requests>"

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------
    def answer(self, text: str, model: str | None = None) -> None:
        self._set(Reply(kind="text", text=text), model)

    def empty(self, model: str | None = None) -> None:
        self._set(Reply(kind="text", text=""), model)

    def fail(self, status: int, message: str = "", model: str | None = None) -> None:
        self._set(Reply(kind="status", status=status, message=message), model)

    def hang(self, seconds: float, model: str | None = None) -> None:
        self._set(Reply(kind="hang", hang_seconds=seconds), model)

    def script(
        self, respond: Callable[[dict[str, Any]], dict[str, Any]], model: str | None = None
    ) -> None:
        """Answer each request with the assistant message `respond(body)` returns."""
        self._set(Reply(kind="scripted", respond=respond), model)

    def _set(self, reply: Reply, model: str | None) -> None:
        with self._lock:
            if model is None:
                self.default = reply
            else:
                self.per_model[model] = reply

    def reply_for(self, model: str) -> Reply:
        with self._lock:
            return self.per_model.get(model, self.default)

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LLMServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        # Wake any handler still "hanging" so its thread ends with the test.
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout) closes its socket; writing the late answer then fails.
        # That is the scenario under test, not a server bug, so it is not printed.
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: LLMServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        owner = self.owner
        with owner._lock:
            owner.requests.append(
                RecordedRequest(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
            )
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        model = str(body.get("model", ""))
        reply = owner.reply_for(model)
        if reply.kind == "status":
            message = reply.message or f"scripted error {reply.status} for model {model}"
            if reply.status == 404 and not reply.message:
                message = f"The model `{model}` does not exist or you do not have access to it."
            error = {
                "message": message,
                "type": _ERROR_TYPES.get(reply.status, "api_error"),
                "code": "model_not_found" if reply.status == 404 else None,
            }
            self._send_json(reply.status, {"error": error})
            return
        if reply.kind == "scripted" and reply.respond is not None:
            if body.get("stream"):
                self._send_json(400, {"error": {"message": "scripted replies do not stream"}})
                return
            self._complete_message(body, model, reply.respond(body))
            return
        if reply.kind == "hang":
            # Bounded: the wait ends early when the server stops, so no thread outlives the test.
            owner._stopping.wait(reply.hang_seconds)
        if body.get("stream"):
            self._stream(body, model, reply.text)
        else:
            self._complete(body, model, reply.text)

    def _complete(self, body: dict[str, Any], model: str, text: str) -> None:
        self._complete_message(body, model, {"role": "assistant", "content": text})

    def _complete_message(self, body: dict[str, Any], model: str, message: dict[str, Any]) -> None:
        text = str(message.get("content") or "")
        usage = _usage_for(body, text)
        self.owner.last_usage = usage
        self._send_json(
            200,
            {
                "id": "chatcmpl-loopback",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", **message},
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": usage,
            },
        )

    def _stream(self, body: dict[str, Any], model: str, text: str) -> None:
        usage = _usage_for(body, text)
        chunks = split_chunks(text, self.owner.chunk_size)
        self.owner.last_chunks = list(chunks)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in self._events(model, chunks, body, usage):
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.owner.last_usage = usage

    @staticmethod
    def _events(
        model: str, chunks: list[str], body: dict[str, Any], usage: dict[str, int]
    ) -> Iterator[dict[str, Any]]:
        base = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "model": model}
        base["created"] = int(time.time())
        yield {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
        }
        for piece in chunks:
            yield {
                **base,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
        yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        # Like OpenAI: the usage chunk (empty choices) only when the client asked for it.
        if (body.get("stream_options") or {}).get("include_usage"):
            yield {**base, "choices": [], "usage": usage}

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
