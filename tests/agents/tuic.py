"""A small client for tuicd's HTTP API over its Unix socket, and the test bed's processes.

Used by the recorder (record.py) and the benchmark (bench.py): start a model server and a tuicd
in a temp dir, launch a real CLI in a tuicd session the way bed.py says, type into it and read
its screen and state. Python stdlib only.
"""

from __future__ import annotations

import http.client
import shutil
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
def _bed_root() -> Path:
    """The test beds' temp dirs: under target/ (git-ignored), unless a directory above it is open
    to group or others (a clone under /tmp: Gemini CLI refuses settings files below one) or the
    path is too long for a socket; then under the user's own cache dir."""
    inside = HERE.parent.parent / "target" / "agents-bed"
    ancestors = [p for p in inside.parents if p.exists()]
    # A Unix socket path has at most 107 bytes: `<bed>/bed-xxxxxxxx/tuic/mcp.sock` must fit.
    if all(p.stat().st_mode & 0o022 == 0 for p in ancestors) and len(str(inside)) <= 70:
        return inside
    return Path.home() / ".cache" / "tuic-agents-bed"


BED_ROOT = _bed_root()

import bed  # noqa: E402


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 330):
        super().__init__("tuic", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def wait_for(what: str, check, timeout: float = 30.0, interval: float = 0.05):
    """Polls `check` until it returns something truthy; fails naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class Tuicd:
    """A tuicd on a socket in its own config dir."""

    def __init__(self, binary: str, root: Path, env: dict | None = None, config: dict | None = None):
        """`env` is merged into the daemon's own environment (spawned agents inherit it);
        `config`, when given, is written as the daemon's config.json before it starts (e.g. a TCP
        listener with Basic Auth: `services.server` / `services.auth`)."""
        self.dir = root / "tuic"
        self.dir.mkdir(mode=0o700, parents=True)
        if config is not None:
            (self.dir / "config.json").write_text(json.dumps(config))
        self.socket = self.dir / "mcp.sock"
        self.log = open(root / "tuicd.log", "wb")
        # A CI runner's markers (CI=true, GITHUB_ACTIONS) put Gemini CLI in headless mode even on a
        # TTY; the agents here stand for ones a person started at a desk, so the daemon (and every
        # agent it spawns) runs without them.
        ci_markers = {"CI", "GITHUB_ACTIONS", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID"}
        env = {
            k: v for k, v in os.environ.items()
            if not k.startswith("TUIC_") and k not in ci_markers and not k.startswith("CI_")
        } | (env or {})
        env["RUST_LOG"] = env.get("RUST_LOG", "info")
        env["TUIC_CREDENTIALS_STORE"] = "file"
        self.process = subprocess.Popen(
            [binary, "--config-dir", str(self.dir)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.log, env=env,
        )
        wait_for("tuicd /health", self._healthy, timeout=30)

    def _healthy(self):
        try:
            return self.request("GET", "/health")
        except OSError:
            return None

    def request(self, method: str, path: str, body=None):
        conn = UnixConnection(str(self.socket))
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        value = json.loads(raw) if raw else None
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {raw[:300]!r}")
        return value

    def _rpc(self, method: str, params: dict, session: str | None = None, headers: dict | None = None):
        """One JSON-RPC request on POST /mcp: (the answer, its mcp-session-id header)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        conn = UnixConnection(str(self.socket))
        sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"} | (headers or {})
        if session:
            sent["mcp-session-id"] = session
        conn.request("POST", "/mcp", body=json.dumps(body).encode(), headers=sent)
        response = conn.getresponse()
        raw = response.read().decode()
        session_id = response.getheader("mcp-session-id")
        conn.close()
        if raw.startswith("event:") or raw.startswith("data:"):
            raw = next(line[5:].strip() for line in raw.splitlines() if line.startswith("data:"))
        return json.loads(raw), session_id

    def mcp_initialize(self, headers: dict | None = None) -> str:
        """An MCP protocol session (e.g. `{"x-tuic-session": uuid}` binds it to that identity); its id."""
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "tuic-tests", "version": "0"}}
        answer, session_id = self._rpc("initialize", params, headers=headers)
        if "error" in answer or not session_id:
            raise RuntimeError(f"mcp initialize: {answer}")
        return session_id

    def mcp_call(self, tool: str, arguments: dict, session: str | None = None, headers: dict | None = None):
        """One MCP tools/call: (isError, the parsed JSON text). A JSON-RPC error raises."""
        answer, _ = self._rpc("tools/call", {"name": tool, "arguments": arguments}, session, headers)
        if "error" in answer:
            raise RuntimeError(f"mcp {tool}: {answer['error']}")
        text = answer["result"]["content"][0]["text"]
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        return bool(answer["result"].get("isError")), value

    def mcp(self, tool: str, arguments: dict, session: str | None = None):
        """One MCP tools/call on POST /mcp (stateless JSON answer), returning the parsed JSON text."""
        return self.mcp_call(tool, arguments, session)[1]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class ModelServer:
    def __init__(self, root: Path):
        port_file = root / "model.port"
        self.log_path = root / "model.jsonl"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "model_server.server", "--port-file", str(port_file), "--log", str(self.log_path)],
            cwd=HERE, stdin=subprocess.DEVNULL,
        )
        self.port = int(wait_for("the model server's port", lambda: port_file.exists() and port_file.read_text()))
        self.url = f"http://127.0.0.1:{self.port}"

    def log(self) -> list[dict]:
        with urllib.request.urlopen(self.url + "/_log", timeout=10) as response:
            return json.loads(response.read())

    def requests(self, main_only: bool = True) -> list[dict]:
        return [r for r in self.log() if "event" not in r and r.get("protocol") != "unknown" and (r["main"] or not main_only)]

    def answered(self) -> int:
        return sum(1 for r in self.log() if r.get("event") == "answered" and r.get("main"))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@e")
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    (path / "README.md").write_text("# scratch\n")
    (path / "app.py").write_text("print('hello')\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    return path


class Bed:
    """A temp dir holding a model server, a tuicd and a git repository for the CLIs to work in."""

    def __init__(self, tuicd_binary: str, env=None, config: dict | None = None):
        """`env`: merged into tuicd's environment; a dict, or a function of this Bed (its model
        server and repository are up by then), e.g. `lambda b: b.spec("claude")["env"]` so that
        agents tuicd spawns itself start the way `launch` starts them. `config`: tuicd's
        config.json, written before it starts (default: none, tuicd's defaults)."""
        # Not under /tmp: Gemini CLI refuses settings files below a directory others can write.
        BED_ROOT.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="bed-", dir=BED_ROOT))
        self.model = ModelServer(self.root)
        self.repo = make_repo(self.root / "repo")
        self.tuicd = Tuicd(tuicd_binary, self.root, env(self) if callable(env) else env, config)

    def spec(self, cli: str) -> dict:
        """Writes `cli`'s config files into its home under this Bed; returns bed.py's launch spec."""
        return bed.launch(cli, self.model.url, self.root / f"home-{cli}", self.repo)

    def launch(self, cli: str, rows: int = 40, cols: int = 120, capture: bool = False) -> tuple[str, dict]:
        """Starts `cli` in a new tuicd session; returns (session_id, launch spec)."""
        spec = self.spec(cli)
        if capture:
            self.tuicd.request("POST", "/diagnostics/capture", {"enabled": True})
        created = self.tuicd.request("POST", "/sessions", {
            "shell": spec["argv"][0], "args": spec["argv"][1:], "cwd": str(self.repo), "env": spec["env"],
            "rows": rows, "cols": cols, "agent_type": cli,
        })
        return created["session_id"], spec

    def screen(self, session: str) -> list[str]:
        return self.tuicd.request("GET", f"/sessions/{session}/output?format=log&limit=1")["screen"]

    def wait_still(self, session: str, quiet: float, timeout: float = 60) -> list[str]:
        """Waits until the session's screen has not changed for `quiet` seconds (a spinner keeps
        it moving); returns the rows."""
        last, since = None, time.monotonic()
        deadline = time.monotonic() + timeout
        while True:
            rows = self.screen(session)
            if rows != last:
                last, since = rows, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return rows
            if time.monotonic() > deadline:
                raise TimeoutError(f"the screen never stood still for {quiet} s within {timeout:.0f} s")
            time.sleep(0.05)

    def state(self, session: str) -> dict:
        return self.tuicd.request("GET", f"/sessions/{session}")["state"]

    def write(self, session: str, data: str) -> None:
        self.tuicd.request("POST", f"/sessions/{session}/write", {"data": data})

    def close(self):
        self.tuicd.stop()
        self.model.stop()
        if not os.environ.get("TUIC_AGENTS_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)
