"""DNS rebinding through the SSH tunnel the README recommends (issue 29), in real Chromium.

`ssh -L 127.0.0.1:PORT:<config dir>/mcp.sock` is stood in for by a TCP -> Unix-socket relay (the
forwarder). A page from http://evil.test:PORT/ is served first by the attacker's server on that
port; the attacker's server stops and the forwarder takes the same port (the rebind: evil.test
now reaches the tunnel), and the page, same-origin with the tunnel now, tries to create a session
running a command, type into a shell, change the config, open a session's WebSocket and talk MCP.

Every attempt must be refused with 403 naming the Host; no marker file may appear, no session be
created and the config stay the same (all checked over the real socket). Controls in the same
run: through the same forwarder, Host localhost:PORT creates a session whose command makes a
marker (so the tunnel works and markers would be seen), and a Chromium page at localhost:PORT is
let in.

Usage: python3 rebinding.py --tuicd PATH
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import HERE, Tally, Tuicd, exchange, exit_on_signals, wait_for  # noqa: E402

# Ports Chromium refuses to connect to (net/base/port_util.cc): never pick one.
CHROMIUM_UNSAFE = {3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080}


def free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in CHROMIUM_UNSAFE:
            return port


ATTACK_PAGE = """<!doctype html><title>evil-page</title><body>evil-page<script>
const VICTIM = %(victim)s, MARKERS = %(markers)s, PORT = %(port)d;
window.phase = "polling";
async function attempt(name, path, init) {
  try {
    const r = await fetch(path, Object.assign({cache: "no-store"}, init));
    return {name, status: r.status, body: (await r.text()).slice(0, 400)};
  } catch (e) { return {name, error: String(e)}; }
}
function json(method, body) {
  return {method, headers: {"content-type": "application/json"}, body: JSON.stringify(body)};
}
function socketAttempt() {
  return new Promise((resolve) => {
    const out = {name: "open the victim session's WebSocket and type into it", opened: false};
    let ws;
    try { ws = new WebSocket(`ws://evil.test:${PORT}/sessions/${VICTIM}/stream`); }
    catch (e) { out.error = String(e); return resolve(out); }
    const done = () => { clearTimeout(timer); resolve(out); };
    const timer = setTimeout(() => { out.error = "no open or close within 10 s"; done(); }, 10000);
    ws.onopen = () => { out.opened = true; ws.send(`touch ${MARKERS.ws}\\n`); setTimeout(() => ws.close(), 500); };
    ws.onerror = () => { out.errored = true; };
    ws.onclose = (e) => { out.close_code = e.code; done(); };
  });
}
async function attack() {
  const results = [];
  results.push(await attempt("read the session list", "/sessions"));
  results.push(await attempt("create a session running a command", "/sessions",
    json("POST", {shell: "/bin/sh", args: ["-c", `touch ${MARKERS.create}; exec sleep 30`], cwd: "/"})));
  results.push(await attempt("type a command into the victim's shell", `/sessions/${VICTIM}/write`,
    json("POST", {data: `touch ${MARKERS.write}\\n`})));
  results.push(await attempt("change the config (let evil.test in)", "/config",
    json("PUT", {services: {server: {allowed_hosts: ["evil.test"], allowed_origins: [`http://evil.test:${PORT}`]}}})));
  results.push(await attempt("MCP initialize", "/mcp", {method: "POST",
    headers: {"content-type": "application/json", "accept": "application/json, text/event-stream"},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25",
      capabilities: {}, clientInfo: {name: "evil", version: "0"}}})}));
  results.push(await socketAttempt());
  return results;
}
// A rebinding page polls its own origin until someone other than the attacker answers.
(async function poll() {
  const until = Date.now() + 25000;
  while (Date.now() < until) {
    try {
      const r = await fetch("/probe", {cache: "no-store"});
      if (r.headers.get("x-attacker") !== "yes") {
        window.rebound = {status: r.status, body: (await r.text()).slice(0, 300)};
        window.results = await attack();
        return;
      }
    } catch (e) { /* the port is between owners: try again */ }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  window.results = [{name: "rebind", error: "the origin never changed owner"}];
})();
</script>"""


class AttackerServer:
    """The attacker's web server on 127.0.0.1:port, answering every request then closing."""

    def __init__(self, port: int, page: str):
        body = page.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self):  # noqa: N802 - the stdlib's name
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("cache-control", "no-store")
                self.send_header("x-attacker", "yes")
                self.send_header("connection", "close")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Forwarder:
    """What `ssh -L 127.0.0.1:PORT:<socket>` does: every TCP connection on the port is copied both
    ways to the daemon's Unix socket. Keeps what went each way, per connection, for the checks."""

    def __init__(self, port: int, unix_path: str):
        self.unix_path = unix_path
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self.conversations: list[dict] = []
        self.lock = threading.Lock()
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket):
        record = {"up": bytearray(), "down": bytearray()}
        with self.lock:
            self.conversations.append(record)
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self.unix_path)
            ends = {client: (upstream, record["up"]), upstream: (client, record["down"])}
            deadline = time.monotonic() + 60
            while ends and time.monotonic() < deadline:
                readable, _, _ = select.select(list(ends), [], [], 0.5)
                for src in readable:
                    dst, log = ends[src]
                    data = src.recv(65536)
                    if not data:
                        return
                    log.extend(data)
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            client.close()
            upstream.close()

    def stop(self):
        self.running = False
        self.listener.close()

    def exchanges(self) -> list[tuple[str, str]]:
        """(request head, response head + start of body) for each connection's first request."""
        with self.lock:
            out = []
            for c in self.conversations:
                up = bytes(c["up"]).decode(errors="replace")
                down = bytes(c["down"]).decode(errors="replace")
                out.append((up.split("\r\n\r\n")[0], down[:800]))
            return out


def tunnel_request(port: int, host: str, method: str, path: str, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn._http_vsn_str = "HTTP/1.1"  # noqa: SLF001
    headers = {"Host": host}
    return exchange(conn, method, path, body, headers)


class Node:
    """rebinding.mjs, read line by line with a deadline."""

    def __init__(self, port: int):
        self.process = subprocess.Popen(["node", str(HERE / "rebinding.mjs"), str(port)], cwd=HERE,
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
        self.buffer = b""

    def next(self, phase_wanted: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    print(f"[rebinding] node: {line.decode(errors='replace')}")
                    continue
                if msg.get("phase") == "console":
                    continue
                if msg.get("phase") == "error":
                    raise RuntimeError(f"rebinding.mjs failed: {msg['error']}")
                if msg.get("phase") == phase_wanted:
                    return msg
                raise RuntimeError(f"rebinding.mjs said {msg} while {phase_wanted} was expected")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"rebinding.mjs did not reach {phase_wanted} within {timeout:.0f} s")
            readable, _, _ = select.select([self.process.stdout], [], [], left)
            if readable:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    code = self.process.wait(timeout=10)
                    raise RuntimeError(f"rebinding.mjs exited ({code}) before {phase_wanted}")
                self.buffer += chunk

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--let-evil-in", action="store_true",
                        help="proof that the test can fail: the daemon lists evil.test in allowed_hosts, so the "
                             "attacks must be reported as succeeding")
    args = parser.parse_args()
    for tool in ("node", "/usr/bin/chromium"):
        if not shutil.which(tool):
            print(f"missing prerequisite: {tool}", file=sys.stderr)
            return 2
    if not (HERE.parent / "node_modules" / "playwright-core").is_dir():
        print("missing prerequisite: tests/node_modules/playwright-core (bash tests/mobile/setup.sh)", file=sys.stderr)
        return 2

    exit_on_signals()
    tally = Tally("rebinding")
    work = Path(tempfile.mkdtemp(prefix="tuic-sec-rebind-"))
    os.chmod(work, 0o755)
    markers = {k: str(work / f"marker-{k}") for k in ("create", "write", "ws")}
    control_marker = work / "marker-control"
    daemon = attacker = forwarder = node = None
    try:
        config = {"services": {"server": {"allowed_hosts": ["evil.test"]}}} if args.let_evil_in else None
        daemon = Tuicd(args.tuicd, config)
        victim = daemon.ok("POST", "/sessions", {"shell": "/bin/sh", "cwd": str(work), "display_name": "victim"})
        victim_id = victim["session_id"]
        # The victim's shell is up and would run what is typed into it (proved below by the control).
        status, config_before, _ = daemon.request("GET", "/config")
        assert status == 200, config_before
        port = free_port()
        evil_host = f"evil.test:{port}"
        page = ATTACK_PAGE % {"victim": json.dumps(victim_id), "markers": json.dumps(markers), "port": port}
        attacker = AttackerServer(port, page)
        node = Node(port)
        loaded = node.next("loaded", 45)
        print(f"[rebinding] the attacker's page is open at {loaded['origin']} and polls its origin")

        # The rebind: the attacker's server goes, the tunnel takes the same port.
        attacker.stop()
        attacker = None
        forwarder = Forwarder(port, str(daemon.socket))
        print(f"[rebinding] 127.0.0.1:{port} is now the ssh -L stand-in to {daemon.socket}")
        attacked = node.next("attacked", 45)
        results = attacked["results"]

        tally.control("the page saw the rebind (its own origin answered from the daemon)",
                      any("status" in r for r in results) and all(r.get("name") != "rebind" for r in results),
                      json.dumps(results)[:400])
        for r in results:
            name = r["name"]
            if name.startswith("open the victim"):
                seen = [(req, resp) for req, resp in forwarder.exchanges() if f"/sessions/{victim_id}/stream" in req]
                refused = [resp for _, resp in seen if resp.startswith("HTTP/1.1 403") and f"Host '{evil_host}'" in resp]
                held = not r.get("opened") and bool(seen) and len(refused) == len(seen)
                tally.attack(f"rebound page: {name}", held,
                             f"opened={r.get('opened')} close={r.get('close_code')}; the tunnel saw: "
                             + json.dumps([resp[:200] for _, resp in seen]))
                continue
            status, body = r.get("status"), r.get("body", r.get("error", ""))
            held = status == 403 and f"Host '{evil_host}'" in body
            tally.attack(f"rebound page: {name}", held, f"{status} {body[:300]}")

        # What the daemon holds, over the real socket.
        sessions = daemon.ok("GET", "/sessions")
        tally.attack("rebound page: no session was created", [s["session_id"] for s in sessions] == [victim_id],
                     f"sessions: {[(s['session_id'], s.get('alias')) for s in sessions]}")
        status, config_after, _ = daemon.request("GET", "/config")
        changed = {k: (config_before.get(k), config_after.get(k)) for k in set(config_before) | set(config_after)
                   if config_before.get(k) != config_after.get(k)}
        tally.attack("rebound page: the config is unchanged", config_after == config_before,
                     f"changed (before, after): {json.dumps(changed)[:600]}" if changed else "")

        # Controls through the same forwarder: a loopback Host is let in and its command runs; by
        # the time its marker exists, the attacks' markers would have had longer.
        status, listed, raw = tunnel_request(port, f"localhost:{port}", "GET", "/sessions")
        tally.control("Host localhost:PORT through the same tunnel reads the sessions", status == 200,
                      f"{status} {raw[:200]!r}")
        status, created, raw = tunnel_request(port, f"localhost:{port}", "POST", "/sessions",
                                              {"shell": "/bin/sh", "args": ["-c", f"touch {control_marker}; exec sleep 30"],
                                               "cwd": "/"})
        tally.control("Host localhost:PORT through the same tunnel creates a session", status == 201,
                      f"{status} {raw[:200]!r}")
        status, _, raw = tunnel_request(port, f"localhost:{port}", "POST", f"/sessions/{victim_id}/write",
                                        {"data": f"touch {control_marker}-typed\n"})
        tally.control("Host localhost:PORT through the same tunnel types into the victim's shell", status == 200,
                      f"{status} {raw[:200]!r}")
        try:
            wait_for("the control's markers", lambda: control_marker.exists() and Path(f"{control_marker}-typed").exists(),
                     timeout=15)
            tally.control("the control's commands ran (a marker would be seen)", True)
        except TimeoutError as e:
            tally.control("the control's commands ran (a marker would be seen)", False, str(e))
        status, _, raw = tunnel_request(port, evil_host, "GET", "/sessions")
        tally.control("the same request with Host evil.test through the tunnel is refused", status == 403,
                      f"{status} {raw[:200]!r}")
        for kind, marker in markers.items():
            tally.attack(f"rebound page: no marker file from the {kind} attempt", not Path(marker).exists(),
                         f"{marker} exists" if Path(marker).exists() else "")

        control = node.next("control", 45)
        tally.control("Chromium at http://localhost:PORT through the tunnel is let in",
                      control["health"] == 200 and control["sessions"]["status"] == 200, json.dumps(control)[:300])
    except BaseException as e:  # noqa: BLE001 - reported as a broken run; cleanup below still runs
        tally.control("the rebinding run completed", False, f"{type(e).__name__}: {e}")
        if daemon:
            print(daemon.log()[-2000:])
    finally:
        if node:
            node.stop()
        if attacker:
            attacker.stop()
        if forwarder:
            forwarder.stop()
        if daemon:
            daemon.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
