"""What the agents-outlive-the-daemon checks share: a tuicd on a socket in a temp dir, its REST API,
and waits on conditions with deadlines. Python 3.11 stdlib only."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 30):
        super().__init__("tuic", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def wait_for(what: str, check, timeout: float = 30.0, interval: float = 0.02):
    """Polls `check` until it returns something truthy; fails naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class Api:
    def __init__(self, socket_path: Path):
        self.socket = socket_path

    def call(self, method: str, path: str, body=None, timeout: float = 30):
        conn = UnixConnection(str(self.socket), timeout)
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        return response.status, (json.loads(raw) if raw else None)

    def ok(self, method: str, path: str, body=None, want=(200, 201)):
        status, value = self.call(method, path, body)
        if status not in want:
            raise AssertionError(f"{method} {path}: {status} {value}")
        return value

    def answers(self) -> bool:
        try:
            return self.call("GET", "/health", timeout=2)[0] == 200
        except OSError:
            return False


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z " not in f.read()
    except OSError:
        return False


def temp_dir(prefix: str) -> Path:
    # Short: the socket path must fit in 107 bytes.
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o700)
    return path


def stop(process: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 20):
    if process.poll() is None:
        process.send_signal(sig)
        process.wait(timeout)


def env_without(*names: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in names}
    env["RUST_LOG"] = env.get("RUST_LOG", "info")
    return env
