"""What the agents-outlive-the-daemon checks share: a tuicd on a socket in a temp dir and its REST
API; the Unix-socket HTTP client and the waits with deadlines are the agent bed's
(tests/agents/tuic.py). Python 3.11 stdlib only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "agents"))
from tuic import UnixConnection, wait_for  # noqa: E402,F401  (the bed's own client and waits)


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
