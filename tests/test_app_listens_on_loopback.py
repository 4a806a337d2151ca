"""The app, started exactly as the README says, listens on loopback only.

It shows a person's conversations, their run history and the agent sessions on this machine,
with no authentication; Streamlit's default would listen on every interface. The listening
sockets are read from /proc/net/tcp{,6} (no connection to any other address is attempted).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> list[str]:
    """Local addresses (hex, as the kernel writes them) listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == LISTEN:
                found.append(address)
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_the_readme_command_listens_on_loopback_only(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "COMPACTION_LAB_DB": str(tmp_path / "history.db")}
    # The README's command, `streamlit run app.py`, plus only a port so the test cannot clash.
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.25)
        else:
            pytest.fail("the app did not answer its health check on 127.0.0.1 within 60 s")
        addresses = _listening(port)
        # 0100007F is 127.0.0.1 (little-endian hex); IPv6 loopback is ::1.
        loopback = {"0100007F", "00000000000000000000000001000000"}
        assert addresses and set(addresses) <= loopback, addresses
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
