"""Shared pieces of the attacks-from-outside tests (issue 29): a tuicd in its own config dir, an
HTTP client on its Unix socket, deadline waits, and the tally of attacks held. Python stdlib only.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def wait_for(what: str, check, timeout: float = 20.0, interval: float = 0.05):
    """Polls `check` until it returns something truthy; fails naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 15):
        super().__init__("tuic", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def exchange(conn: http.client.HTTPConnection, method: str, path: str, body=None, headers: dict | None = None):
    """One request: (status, parsed JSON or text, raw bytes)."""
    data = None
    sent = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent.setdefault("content-type", "application/json")
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        value = raw.decode(errors="replace")
    return response.status, value, raw


def hash_password(binary: str, password: str, cost: int = 4) -> str:
    out = subprocess.run([binary, "hash-password", "--cost", str(cost)], input=password.encode(),
                         capture_output=True, check=True, timeout=60)
    return out.stdout.decode().strip()


def make_cert(directory: Path, san: str) -> tuple[Path, Path]:
    """A self-signed EC certificate for `san` (e.g. "IP:10.1.2.3,DNS:localhost"), key 0600."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", "/CN=tuicd-security-test", "-addext", f"subjectAltName={san}",
         "-addext", "basicConstraints=critical,CA:FALSE", "-keyout", str(key), "-out", str(cert)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    os.chmod(key, 0o600)
    return cert, key


class Tuicd:
    """A tuicd on its own config dir (0700, under a fresh temp dir); stderr goes to a log file."""

    def __init__(self, binary: str, config: dict | None = None, root: Path | None = None, env: dict | None = None,
                 config_dir: Path | None = None, wait: bool = True):
        self.binary = binary
        self.root = root or Path(tempfile.mkdtemp(prefix="tuic-sec-"))
        self.owns_root = root is None
        self.root.mkdir(parents=True, exist_ok=True)
        self.dir = config_dir or (self.root / "tuic")
        if config_dir is None:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if config is not None:
            (self.dir / "config.json").write_text(json.dumps(config))
        self.socket = self.dir / "mcp.sock"
        self.log_path = self.root / f"tuicd-{time.monotonic_ns()}.log"
        log = open(self.log_path, "wb")
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TUIC_")}
        full_env = clean | {"RUST_LOG": "info", "TUIC_CREDENTIALS_STORE": "file"} | (env or {})
        self.process = subprocess.Popen([binary, "--config-dir", str(self.dir)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=log, env=full_env,
                                        start_new_session=True)
        log.close()
        if wait:
            wait_for("tuicd to answer /health on its socket", self._healthy, timeout=30)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def _healthy(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"tuicd exited with {self.process.returncode}:\n{self.log()[-3000:]}")
        try:
            status, _, _ = self.request("GET", "/health")
            return status == 200
        except OSError:
            return False

    def request(self, method: str, path: str, body=None, headers: dict | None = None):
        """One request on the real socket, Host: tuic: (status, value, raw)."""
        return exchange(UnixConnection(str(self.socket)), method, path, body, headers)

    def ok(self, method: str, path: str, body=None, headers: dict | None = None):
        status, value, raw = self.request(method, path, body, headers)
        if status >= 400:
            raise RuntimeError(f"{method} {path} on the socket: {status} {raw[:400]!r}")
        return value

    def wait_exit(self, timeout: float = 20.0) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self):
        if self.process.poll() is None:
            # The daemon leads its own process group (start_new_session): its terminals' shells
            # are in their own sessions; the daemon ends them itself on SIGTERM.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def cleanup(self):
        self.stop()
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)


class Tally:
    """Each attack is one line: HELD or SUCCEEDED (with what was seen). Controls are checks that
    prove an attack's assertion could see success; a failed control fails the run too."""

    def __init__(self, name: str):
        self.name = name
        self.attacks: list[tuple[str, bool, str]] = []
        self.broken: list[tuple[str, str]] = []

    def attack(self, what: str, held: bool, seen: str = ""):
        self.attacks.append((what, held, seen))
        mark = "HELD     " if held else "SUCCEEDED"
        print(f"[{self.name}] {mark} {what}" + (f"\n      seen: {seen}" if seen and not held else
                                                  (f" ({seen})" if seen else "")), flush=True)

    def control(self, what: str, ok: bool, seen: str = ""):
        if not ok:
            self.broken.append((what, seen))
        print(f"[{self.name}] control {'ok    ' if ok else 'BROKEN'} {what}" + (f": {seen}" if seen and not ok else ""),
              flush=True)

    def check(self, what: str, fn):
        """Runs `fn` (returning (held, seen)); an exception counts as a broken control, not a pass."""
        try:
            held, seen = fn()
        except Exception as e:  # noqa: BLE001 - the run reports it and fails
            self.control(f"{what} (the attack could not be run)", False, f"{type(e).__name__}: {e}")
            return
        self.attack(what, held, seen)

    def finish(self) -> int:
        held = sum(1 for _, h, _ in self.attacks if h)
        print(f"[{self.name}] {held} of {len(self.attacks)} attacks held", flush=True)
        for what, h, seen in self.attacks:
            if not h:
                print(f"[{self.name}]   not held: {what}: {seen}", flush=True)
        for what, seen in self.broken:
            print(f"[{self.name}]   broken control: {what}: {seen}", flush=True)
        return 0 if held == len(self.attacks) and not self.broken and self.attacks else 1


def exit_on_signals():
    """timeout(1) sends SIGTERM: raise instead, so that every `finally` (daemons in their own
    process groups, namespaces, users) runs."""
    def on_signal(signum, _frame):
        raise SystemExit(f"stopped by signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def require(tools: list[str]):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print(f"missing prerequisites: {', '.join(missing)} (tests/run-all.sh installs them)", file=sys.stderr)
        sys.exit(2)
    if os.geteuid() != 0:
        print("these tests need root (network namespaces, useradd)", file=sys.stderr)
        sys.exit(2)
