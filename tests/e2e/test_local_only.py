"""The app answers only to loopback names (issue 33): it shows a person's conversations, run
history and every agent session on the machine, with no authentication, so a web page whose DNS
name is rebound to 127.0.0.1 must not be able to open the app's WebSocket from the person's own
browser. `.streamlit/config.toml` sets `server.allowedHosts` to the loopback names; this starts
the real server (as `streamlit run app.py` from the repository, which reads that file) and asks
for the WebSocket upgrade the page would, with a foreign Host and Origin and with loopback ones.
Run with `.venv/bin/pytest -m e2e tests/e2e/test_local_only.py`.
"""

from __future__ import annotations

import base64
import os
import socket
from urllib.parse import urlsplit

import pytest
from e2e_helpers import AppServer

pytestmark = pytest.mark.e2e


def upgrade_status(server: AppServer, host: str, origin: str) -> str:
    """The status line the server answers a WebSocket upgrade of the app's stream with."""
    address = urlsplit(server.url)
    port = address.port
    assert address.hostname is not None and port is not None
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        "GET /_stcore/stream HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        f"Origin: {origin}:{port}\r\n"
        "Upgrade: websocket\r\n"
        "Connection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Protocol: streamlit\r\n"
        "\r\n"
    )
    with socket.create_connection((address.hostname, port), timeout=10) as connection:
        connection.sendall(request.encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode(errors="replace")


@pytest.mark.parametrize(
    "host", ["evil.example", "attacker.localhost.evil.example", "127.0.0.1.nip.io"]
)
def test_a_foreign_host_cannot_open_the_apps_websocket(app_server: AppServer, host: str) -> None:
    status = upgrade_status(app_server, host, f"http://{host}")
    assert " 101 " not in f"{status} ", status
    assert status.startswith("HTTP/1.1 4"), status


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_a_loopback_host_opens_the_apps_websocket(app_server: AppServer, host: str) -> None:
    status = upgrade_status(app_server, host, f"http://{host}")
    assert status.startswith("HTTP/1.1 101"), status
