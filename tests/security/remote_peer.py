"""The remote peer of issue 29, as a real host on another network: a network namespace joined to
this one by a veth pair. tuicd listens over TLS (a self-signed certificate) with Basic Auth on the
host side of the veth; everything below comes from addresses inside the namespace.

Attacks:
- 1,100 slowloris connections (half trickle a TLS ClientHello, half a request head after the
  handshake; one byte every 7 s; at most 60 s) from 20 addresses, and a burst of 300 concurrent
  wrong passwords from one more, while the real user (its own address) makes an authenticated
  request on a fresh TLS connection every 200 ms: each of the real user's answers must be 200
  within 1 s, no slow socket may be kept open, and the burst may run at most
  auth_rate_limit_max bcrypt verifications. Then 60 wrong passwords, each from a new IPv6
  address of one /64: limited as one host.
- plain HTTP: to the TLS port; and a daemon on the network address without TLS and without
  services.server.allow_insecure_remote must refuse to start, naming the setting (control: with
  the setting it starts and the peer gets in).
- an authenticated remote caller (the password is known): creating a session; `ui tab` with a
  file:// URL; `POST /fs/write-external` of a registered repository's `.git/config` (an fsmonitor
  that runs a command) and of a hook; the daemon's git reading a repository whose config names
  an fsmonitor; `x-tuic-session` naming a local agent to write into the progress journal as it;
  replaying a password typed at a no-echo prompt from the event history.

Each attack has a control proving its check would see success. Prints "N of M attacks held" and
the load figures; exits non-zero if any attack succeeded or a control broke.

Usage: python3 remote_peer.py --tuicd PATH
(Internally re-runs itself inside the namespace with --peer ROLE.)
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    Tally, Tuicd, exit_on_signals, basic, hash_password, make_cert, require, wait_for,
)

USER, PASSWORD = "owner", "correct horse battery staple"
REAL_USER_BOUND = 1.0
SLOWLORIS = 1100
SLOWLORIS_ADDRESSES = 20
SLOWLORIS_INTERVAL = 7.0
SLOWLORIS_MAX_SECONDS = 60.0
BURST = 300
RATE_LIMIT_MAX = 5  # services.auth.auth_rate_limit_max's default
IPV6_ROTATING = 60


# ---------------------------------------------------------------- inside the namespace (peers)

def client_context(cafile: str | None) -> ssl.SSLContext:
    if cafile:
        return ssl.create_default_context(cafile=cafile)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def peer_realuser(a: dict):
    """An authenticated GET every 200 ms on a fresh TLS connection until the stop file appears
    (bounded in count and time); one JSON line per request: start, seconds, status."""
    ctx = client_context(a["cafile"])
    auth = basic(USER, PASSWORD)
    end = time.monotonic() + a["max_seconds"]
    with open(a["out"], "a") as out:
        for _ in range(a["max_requests"]):
            if os.path.exists(a["stop"]) or time.monotonic() > end:
                break
            started = time.monotonic()
            status, error = None, None
            try:
                conn = http.client.HTTPSConnection(a["host"], a["port"], context=ctx, timeout=5,
                                                   source_address=(a["source"], 0))
                conn.request("GET", "/sessions", headers={"Authorization": auth})
                response = conn.getresponse()
                response.read()
                status = response.status
                conn.close()
            except Exception as e:  # noqa: BLE001 - recorded as a failed answer
                error = f"{type(e).__name__}: {e}"
            took = time.monotonic() - started
            out.write(json.dumps({"at": time.time() - took, "seconds": took, "status": status, "error": error}) + "\n")
            out.flush()
            time.sleep(max(0.0, 0.2 - took))


def client_hello() -> bytes:
    """The bytes of a real TLS ClientHello, for trickling before the handshake."""
    ctx = client_context(None)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


async def slow_one(i: int, a: dict, stats: dict, hello: bytes):
    source = a["sources"][i % len(a["sources"])]
    tls = i % 2 == 1
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            a["host"], a["port"], local_addr=(source, 0), ssl=client_context(None) if tls else None,
            server_hostname=a["host"] if tls else None), timeout=10)
    except (ConnectionRefusedError, asyncio.TimeoutError):
        stats["connect_failed"] += 1
        return
    except Exception:  # noqa: BLE001 - reached the daemon, which closed it during the handshake
        stats["closed_in_handshake"] += 1
        return
    stats["connected"] += 1
    stats["open"] += 1
    stats["max_open"] = max(stats["max_open"], stats["open"])
    opened = time.monotonic()
    payload = (f"GET /sessions HTTP/1.1\r\nHost: {a['host']}\r\nUser-Agent: slow\r\n" * 50).encode() if tls else hello
    closed_by_daemon = False
    try:
        for byte in payload:
            if stats["stop"].is_set():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(4096), timeout=SLOWLORIS_INTERVAL)
            except asyncio.TimeoutError:
                continue
            if not data:  # EOF (or an alert, then EOF): the daemon let go of it
                closed_by_daemon = True
                break
            # Anything it sent (a 408, a TLS alert): wait for the close.
            while data:
                data = await asyncio.wait_for(reader.read(4096), timeout=SLOWLORIS_INTERVAL)
            closed_by_daemon = True
            break
    except (ConnectionError, OSError, ssl.SSLError, asyncio.TimeoutError):
        closed_by_daemon = True
    finally:
        stats["open"] -= 1
        if closed_by_daemon:
            stats["closed_by_daemon"] += 1
            stats["lifetimes"].append(time.monotonic() - opened)
        else:
            stats["kept"] += 1
        writer.close()


async def slowloris(a: dict) -> dict:
    stats = {"connected": 0, "connect_failed": 0, "closed_in_handshake": 0, "open": 0, "max_open": 0, "closed_by_daemon": 0, "kept": 0,
             "lifetimes": [], "stop": asyncio.Event()}
    hello = client_hello()
    started = time.monotonic()
    tasks = []
    for start in range(0, a["count"], 100):
        batch = [asyncio.create_task(slow_one(i, a, stats, hello)) for i in range(start, min(a["count"], start + 100))]
        tasks += batch
        # The next hundred once these have connected (or failed): bounded by the connect timeout.
        await asyncio.wait(batch, timeout=0.5)
    Path(a["ramped"]).write_text(json.dumps({"seconds": time.monotonic() - started, "connected": stats["connected"]}))
    remaining = a["max_seconds"] - (time.monotonic() - started)
    # Every connection ends on its own once the daemon closes it; the rest are stopped at the bound.
    _, pending = await asyncio.wait(tasks, timeout=max(1.0, remaining))
    at_bound = stats["open"]
    stats["stop"].set()
    if pending:
        await asyncio.wait(pending, timeout=SLOWLORIS_INTERVAL + 5)
    lifetimes = sorted(stats.pop("lifetimes"))
    stats.pop("stop")
    stats.update(open_at_bound=at_bound, seconds=time.monotonic() - started,
                 lifetime_p50=statistics.median(lifetimes) if lifetimes else None,
                 lifetime_max=lifetimes[-1] if lifetimes else None)
    return stats


async def burst_one(i: int, a: dict) -> tuple[str, float]:
    started = time.monotonic()
    request = (f"GET /sessions HTTP/1.1\r\nHost: {a['host']}:{a['port']}\r\n"
               f"Authorization: {basic(USER, f'guess-{i}')}\r\nConnection: close\r\n\r\n").encode()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            a["host"], a["port"], local_addr=(a["source"], 0), ssl=client_context(None), server_hostname=a["host"]),
            timeout=30)
        writer.write(request)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout=30)
        writer.close()
        status = line.decode(errors="replace").split(" ")[1] if line.startswith(b"HTTP/") else "closed"
    except (ConnectionError, OSError, ssl.SSLError):
        status = "closed"
    except asyncio.TimeoutError:
        status = "timeout"
    return status, time.monotonic() - started


async def burst(a: dict) -> dict:
    started = time.monotonic()
    outcomes = await asyncio.gather(*(burst_one(i, a) for i in range(a["count"])))
    counts: dict[str, int] = {}
    for status, _ in outcomes:
        counts[status] = counts.get(status, 0) + 1
    return {"counts": counts, "seconds": time.monotonic() - started, "slowest": max(t for _, t in outcomes)}


def peer_requests(a: dict) -> list[dict]:
    """Runs each request in order: {method, path, body?, headers?, tls, auth, password?, source?}."""
    results = []
    for r in a["requests"]:
        headers = dict(r.get("headers") or {})
        if r.get("auth", True):
            headers["Authorization"] = basic(USER, r.get("password", PASSWORD))
        body = None
        if r.get("body") is not None:
            body = json.dumps(r["body"]).encode()
            headers.setdefault("Content-Type", "application/json")
        try:
            if r.get("tls", True):
                conn = http.client.HTTPSConnection(a["host"], r.get("port", a["port"]), timeout=10,
                                                   context=client_context(a["cafile"]),
                                                   source_address=(r.get("source", a["source"]), 0))
            else:
                conn = http.client.HTTPConnection(a["host"], r.get("port", a["port"]), timeout=10,
                                                  source_address=(r.get("source", a["source"]), 0))
            conn.request(r["method"], r["path"], body=body, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            conn.close()
            results.append({"status": response.status, "body": raw.decode(errors="replace")[:3000]})
        except Exception as e:  # noqa: BLE001 - the outcome is what the test looks at
            results.append({"status": None, "error": f"{type(e).__name__}: {e}"})
    return results


def peer_sse(a: dict) -> dict:
    """GET a["path"] (an SSE stream) over TLS with the password; reads until a["until"] appears in
    it or a["seconds"] pass."""
    import socket
    raw = socket.create_connection((a["host"], a["port"]), timeout=10, source_address=(a["source"], 0))
    conn = client_context(a["cafile"]).wrap_socket(raw, server_hostname=a["host"])
    conn.sendall((f"GET {a['path']} HTTP/1.1\r\nHost: {a['host']}:{a['port']}\r\n"
                  f"Authorization: {basic(USER, PASSWORD)}\r\nAccept: text/event-stream\r\n\r\n").encode())
    text, end = "", time.monotonic() + a["seconds"]
    conn.settimeout(0.5)
    while a["until"] not in text and time.monotonic() < end and len(text) < 4_000_000:
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        text += chunk.decode(errors="replace")
    conn.close()
    return {"text": text, "found": a["until"] in text}


def run_peer(role: str, a: dict):
    if role == "realuser":
        peer_realuser(a)
    elif role == "slowloris":
        Path(a["out"]).write_text(json.dumps(asyncio.run(slowloris(a))))
    elif role == "burst":
        Path(a["out"]).write_text(json.dumps(asyncio.run(burst(a))))
    elif role == "requests":
        Path(a["out"]).write_text(json.dumps(peer_requests(a)))
    elif role == "sse":
        Path(a["out"]).write_text(json.dumps(peer_sse(a)))
    else:
        raise SystemExit(f"unknown peer role {role}")


# ---------------------------------------------------------------- this side (the host)

def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check, timeout=30)


class Namespace:
    """A network namespace joined by a veth pair; the host side gets .1, the peer the others."""

    def __init__(self, peer_addresses: int):
        pid = os.getpid()
        self.name, self.host_if, self.peer_if = f"tsec{pid}", f"tsh{pid}", f"tsp{pid}"
        used = sh("ip", "-o", "-4", "addr").stdout
        third = next(n for n in [pid % 250, *range(250)] if f"10.231.{n}." not in used)
        self.net = f"10.231.{third}"
        self.host_ip = f"{self.net}.1"
        self.peer_ips = [f"{self.net}.{2 + i}" for i in range(peer_addresses)]
        self.created = False
        try:
            self._create(third)
        except BaseException:
            self.delete()
            raise

    def _create(self, third: int):
        sh("ip", "netns", "add", self.name)
        self.created = True
        sh("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if)
        sh("ip", "link", "set", self.peer_if, "netns", self.name)
        sh("ip", "addr", "add", f"{self.host_ip}/24", "dev", self.host_if)
        sh("ip", "link", "set", self.host_if, "up")
        for ip in self.peer_ips:
            self.run_in("ip", "addr", "add", f"{ip}/24", "dev", self.peer_if)
        self.run_in("ip", "link", "set", "lo", "up")
        self.run_in("ip", "link", "set", self.peer_if, "up")
        # IPv6: one /64 the host shares with IPV6_ROTATING peer addresses, and a second /64 for the
        # real user (no duplicate address detection: usable at once).
        self.v6 = f"fd31:{third:x}::"
        self.host_ip6 = f"{self.v6}1"
        sh("ip", "-6", "addr", "add", f"{self.host_ip6}/64", "dev", self.host_if, "nodad")
        sh("ip", "-6", "addr", "add", f"fd31:{third:x}:0:1::1/64", "dev", self.host_if, "nodad")
        self.rotating_ip6 = [f"{self.v6}{0x100 + i:x}" for i in range(IPV6_ROTATING)]
        for ip in self.rotating_ip6:
            self.run_in("ip", "-6", "addr", "add", f"{ip}/64", "dev", self.peer_if, "nodad")
        self.other_ip6 = f"fd31:{third:x}:0:1::2"
        self.run_in("ip", "-6", "addr", "add", f"{self.other_ip6}/64", "dev", self.peer_if, "nodad")

    def run_in(self, *cmd: str):
        return sh("ip", "netns", "exec", self.name, *cmd)

    def delete(self):
        if self.created:
            sh("ip", "netns", "del", self.name, check=False)
            self.created = False
        sh("ip", "link", "del", self.host_if, check=False)


class Peers:
    """Processes running this file's peer roles inside the namespace."""

    def __init__(self, ns: Namespace, work: Path):
        self.ns, self.work = ns, work
        self.processes: list[subprocess.Popen] = []

    def start(self, role: str, args: dict) -> subprocess.Popen:
        log = open(self.work / f"peer-{role}-{len(self.processes)}.log", "wb")
        p = subprocess.Popen(["ip", "netns", "exec", self.ns.name, sys.executable, str(Path(__file__).resolve()),
                              "--peer", role, "--peer-args", json.dumps(args)], stdout=log, stderr=log,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.processes.append(p)
        return p

    def run(self, role: str, args: dict, timeout: float) -> None:
        p = self.start(role, args)
        try:
            code = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(p)
            raise TimeoutError(f"peer {role} did not finish within {timeout:.0f} s")
        if code != 0:
            logs = sorted(self.work.glob(f"peer-{role}-*.log"))
            raise RuntimeError(f"peer {role} exited {code}: {logs[-1].read_text()[-2000:] if logs else ''}")

    @staticmethod
    def kill(p: subprocess.Popen):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=10)

    def stop_all(self):
        for p in self.processes:
            self.kill(p)


class EventWatch:
    """GET /events?types=ui-tab on the socket, read raw in a thread: every byte it gets, decoded
    (an event's JSON is one chunk, so a URL in it is never split by the chunked framing)."""

    def __init__(self, socket_path: Path):
        import socket
        self.text = ""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(socket_path))
        self.sock.sendall(b"GET /events?types=ui-tab HTTP/1.1\r\nHost: tuic\r\n\r\n")
        self.running = True
        threading.Thread(target=self._read, daemon=True).start()
        wait_for("the event stream's 200", lambda: "\r\n\r\n" in self.text, timeout=10)
        assert self.text.startswith("HTTP/1.1 200"), self.text[:200]

    def _read(self):
        import select
        while self.running:
            readable, _, _ = select.select([self.sock], [], [], 0.2)
            if not readable:
                continue
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            self.text += chunk.decode(errors="replace")

    def stop(self):
        self.running = False
        self.sock.close()


class Established:
    """Samples (ss, every 0.25 s) how many TCP connections from `sources` the daemon's side holds
    established on host:port: the daemon's own view of the slow sockets it keeps."""

    def __init__(self, host: str, port: int, sources: list[str]):
        self.host, self.port, self.sources = host, port, set(sources)
        self.max, self.last, self.running = 0, 0, True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def count(self) -> int:
        out = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{self.port} )"],
                             capture_output=True, text=True, timeout=10).stdout
        n = 0
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[-2].rsplit(":", 1)[0] == self.host and \
                    fields[-1].rsplit(":", 1)[0] in self.sources:
                n += 1
        return n

    def _sample(self):
        end = time.monotonic() + SLOWLORIS_MAX_SECONDS + 60
        while self.running and time.monotonic() < end:
            self.last = self.count()
            self.max = max(self.max, self.last)
            time.sleep(0.25)

    def stop(self):
        self.running = False
        self.thread.join(timeout=10)
        self.last = self.count()


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    import math
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def bcrypt_runs(daemon: Tuicd) -> int:
    return daemon.log().count("bcrypt verification")


def mcp_tool(name: str, arguments: dict, headers: dict | None = None) -> dict:
    return {"method": "POST", "path": "/mcp",
            "headers": {"Accept": "application/json, text/event-stream"} | (headers or {}),
            "body": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}}


def tool_result(answer: dict) -> tuple[bool | None, str]:
    """(isError, text) of a tools/call answer as the peer saw it (JSON or one SSE data line)."""
    body = answer.get("body", "")
    if body.startswith("event:") or body.startswith("data:"):
        body = next((line[5:].strip() for line in body.splitlines() if line.startswith("data:")), "")
    try:
        value = json.loads(body)
    except ValueError:
        return None, f"{answer.get('status')} {body[:300]}"
    if "result" not in value:
        return None, f"{answer.get('status')} {json.dumps(value)[:300]}"
    text = value["result"]["content"][0]["text"] if value["result"].get("content") else ""
    return bool(value["result"].get("isError")), text[:400]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuicd")
    parser.add_argument("--peer")
    parser.add_argument("--peer-args")
    args = parser.parse_args()
    if args.peer:
        run_peer(args.peer, json.loads(args.peer_args))
        return 0
    if not args.tuicd:
        parser.error("--tuicd is required")
    require(["ip", "ss", "openssl", "git"])

    exit_on_signals()

    tally = Tally("remote-peer")
    work = Path(tempfile.mkdtemp(prefix="tuic-sec-peer-"))
    ns = peers = daemon = None
    figures: dict = {}
    try:
        # .2 the real user, .3-.22 the slowloris, .23 the burst, .24 the caller with the password.
        ns = Namespace(1 + SLOWLORIS_ADDRESSES + 2)
        real_ip, slow_ips = ns.peer_ips[0], ns.peer_ips[1:1 + SLOWLORIS_ADDRESSES]
        burst_ip, caller_ip = ns.peer_ips[1 + SLOWLORIS_ADDRESSES], ns.peer_ips[2 + SLOWLORIS_ADDRESSES]
        print(f"[remote-peer] namespace {ns.name}: tuicd on {ns.host_ip}, the peer on {ns.net}.2-{ns.peer_ips[-1]}")
        peers = Peers(ns, work)
        cert, key = make_cert(work, f"IP:{ns.host_ip},IP:{ns.host_ip6}")
        password_hash = hash_password(args.tuicd, PASSWORD, cost=10)
        port = free_port_on(ns.host_ip)
        config = {"services": {"server": {"enabled": True, "port": port, "bind_address": ns.host_ip},
                               "auth": {"username": USER, "password_hash": password_hash},
                               "tls": {"cert_path": str(cert), "key_path": str(key)}}}
        daemon = Tuicd(args.tuicd, config, root=work / "d1", env={"RUST_LOG": "info,tuicd::server::auth=debug"})
        base = {"host": ns.host_ip, "port": port, "cafile": str(cert)}
        wait_for("the TLS listener on the veth address", lambda: listening(ns.host_ip, port), timeout=20)

        load_attacks(tally, daemon, peers, work, base, real_ip, slow_ips, burst_ip, figures)
        caller_attacks(tally, daemon, peers, work, base, caller_ip)
        daemon.cleanup()
        daemon = None
        ipv6_attacks(tally, args.tuicd, peers, work, ns, config)
        plain_http_attacks(tally, args.tuicd, peers, work, ns, caller_ip, password_hash)
    except BaseException as e:  # noqa: BLE001 - reported; cleanup below still runs
        tally.control("the remote-peer run completed", False, f"{type(e).__name__}: {e}")
        if daemon:
            print(daemon.log()[-3000:])
    finally:
        if peers:
            peers.stop_all()
        if daemon:
            daemon.cleanup()
        if ns:
            ns.delete()
        subprocess.run(["rm", "-rf", str(work)], check=False)
    if figures:
        print("[remote-peer] figures: " + json.dumps(figures))
    return tally.finish()


def free_port_on(ip: str) -> int:
    import socket
    with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET) as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def listening(ip: str, port: int) -> bool:
    import socket
    try:
        with socket.create_connection((ip, port), timeout=1):
            return True
    except OSError:
        return False


def load_attacks(tally: Tally, daemon: Tuicd, peers: Peers, work: Path, base: dict, real_ip: str,
                 slow_ips: list[str], burst_ip: str, figures: dict):
    real_out, stop = work / "realuser.jsonl", work / "realuser.stop"
    real = peers.start("realuser", base | {"source": real_ip, "out": str(real_out), "stop": str(stop),
                                           "max_seconds": 120, "max_requests": 600})

    def answers() -> list[dict]:
        try:
            return [json.loads(line) for line in real_out.read_text().splitlines() if line.strip()]
        except OSError:
            return []

    baseline = wait_for("the real user's first five answers", lambda: len(answers()) >= 5 and answers(), timeout=30)
    tally.control("the real user gets in before the attack (200)", all(a["status"] == 200 for a in baseline),
                  json.dumps(baseline[:5])[:400])
    attack_start = time.time()

    sampler = Established(base["host"], base["port"], slow_ips)
    slow_out, ramped = work / "slowloris.json", work / "slowloris.ramped"
    slow = peers.start("slowloris", base | {"sources": slow_ips, "count": SLOWLORIS, "out": str(slow_out),
                                            "ramped": str(ramped), "max_seconds": SLOWLORIS_MAX_SECONDS})
    wait_for("the slowloris connections to be opened", ramped.exists, timeout=60, interval=0.1)
    print(f"[remote-peer] slowloris ramped: {ramped.read_text()}")

    bcrypt_before = bcrypt_runs(daemon)
    burst_out = work / "burst.json"
    peers.run("burst", base | {"source": burst_ip, "count": BURST, "out": str(burst_out)}, timeout=90)
    burst_result = json.loads(burst_out.read_text())
    bcrypt_burst = bcrypt_runs(daemon) - bcrypt_before
    print(f"[remote-peer] burst: {json.dumps(burst_result)}; bcrypt verifications meanwhile: {bcrypt_burst}")

    try:
        slow.wait(timeout=SLOWLORIS_MAX_SECONDS + 30)
    except subprocess.TimeoutExpired:
        peers.kill(slow)
    slow_result = json.loads(slow_out.read_text()) if slow_out.exists() else {}
    sampler.stop()
    print(f"[remote-peer] slowloris: {json.dumps(slow_result)}")
    attack_end = time.time()
    # One more second of the real user after the attack, then stop it.
    wait_for("the real user's answers after the attack",
             lambda: sum(1 for a in answers() if a["at"] > attack_end) >= 3, timeout=30)
    stop.touch()
    real.wait(timeout=30)

    during = [a for a in answers() if attack_start <= a["at"] <= attack_end]
    everything = answers()
    slow_answers = [a for a in everything if a["status"] != 200 or a["seconds"] >= REAL_USER_BOUND]
    latencies = [a["seconds"] for a in during] or [float("nan")]
    figures.update({
        "real_user_requests_during_attack": len(during),
        "real_user_p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "real_user_p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "real_user_max_ms": round(max(latencies) * 1000, 1),
        "real_user_max_ms_whole_run": round(max(a["seconds"] for a in everything) * 1000, 1),
        "slowloris_connected": slow_result.get("connected"),
        "slowloris_connect_failed": slow_result.get("connect_failed"),
        "slowloris_max_open_at_once_client_view": slow_result.get("max_open"),
        "slowloris_max_established_daemon_side": sampler.max,
        "slowloris_established_daemon_side_at_end": sampler.last,
        "slowloris_kept_open_at_60s_bound": slow_result.get("open_at_bound"),
        "slowloris_closed_by_daemon": slow_result.get("closed_by_daemon"),
        "slowloris_lifetime_p50_s": slow_result.get("lifetime_p50"),
        "slowloris_lifetime_max_s": slow_result.get("lifetime_max"),
        "slowloris_phase_s": slow_result.get("seconds"),
        "burst_statuses": burst_result.get("counts"),
        "burst_seconds": burst_result.get("seconds"),
        "burst_bcrypt_runs": bcrypt_burst,
    })
    print(f"[remote-peer] real user during the attack: {len(during)} requests, p50 {figures['real_user_p50_ms']} ms, "
          f"p99 {figures['real_user_p99_ms']} ms, max {figures['real_user_max_ms']} ms")
    tally.control("the real user made requests all through the attack (one per 200 ms)",
                  len(during) >= max(5, (attack_end - attack_start) / 0.2 * 0.5), f"{len(during)} requests in "
                  f"{attack_end - attack_start:.1f} s")
    reached = (slow_result.get("connected") or 0) + (slow_result.get("closed_in_handshake") or 0)
    tally.control("at least 1,000 slowloris sockets reached the daemon", reached >= 1000, json.dumps(slow_result)[:300])
    tally.attack("lock-out: under 1,100 slowloris + a 300-guess burst every real user's request answers 200 within 1 s",
                 bool(during) and not slow_answers,
                 f"{len(slow_answers)} of {len(everything)} late or failed, e.g. {json.dumps(slow_answers[:5])}"
                 if slow_answers else f"{len(everything)} answers, max {figures['real_user_max_ms_whole_run']} ms")
    tally.attack("slowloris: the daemon keeps no slow socket open until the 60 s bound",
                 slow_result.get("open_at_bound") == 0 and slow_result.get("kept") == 0,
                 f"open at the bound: {slow_result.get('open_at_bound')}, never closed: {slow_result.get('kept')}")
    counts = burst_result.get("counts", {})
    tally.attack("burst: none of 300 wrong passwords is let in", "200" not in counts, json.dumps(counts))
    tally.attack(f"burst: the failed-login limiter is not raced (at most {RATE_LIMIT_MAX} bcrypt runs for 300 guesses)",
                 bcrypt_burst <= RATE_LIMIT_MAX, f"{bcrypt_burst} bcrypt verifications; statuses {json.dumps(counts)}")
    tally.control("the daemon logs bcrypt verifications (so the count above means something)",
                  bcrypt_runs(daemon) >= 1, "no 'bcrypt verification' line at debug level")


def caller_attacks(tally: Tally, daemon: Tuicd, peers: Peers, work: Path, base: dict, caller_ip: str):
    """A remote caller who knows the password, from its own address in the namespace."""
    counter = [0]

    def remote(*requests: dict) -> list[dict]:
        counter[0] += 1
        out = work / f"requests-{counter[0]}.json"
        peers.run("requests", base | {"source": caller_ip, "requests": list(requests), "out": str(out)}, timeout=60)
        return json.loads(out.read_text())

    # Plain HTTP to the TLS port, with the right password.
    (plain,) = remote({"method": "GET", "path": "/sessions", "tls": False})
    tally.attack("plain HTTP with the password to the TLS port is not answered", plain.get("status") != 200,
                 json.dumps(plain)[:300])

    # Creating a session (running a command) is loopback-only.
    marker = work / "marker-remote-session"
    (created,) = remote({"method": "POST", "path": "/sessions",
                         "body": {"shell": "/bin/sh", "args": ["-c", f"touch {marker}; exec sleep 30"], "cwd": "/"}})
    tally.attack("a remote caller creates a session running a command", created.get("status") == 403,
                 json.dumps(created)[:300])

    # ui tab with file:// (and the https control), watched on the socket's event stream.
    watch = EventWatch(daemon.socket)
    try:
        files, https = remote(mcp_tool("ui", {"action": "tab", "title": "t", "url": "file:///etc/passwd"}),
                              mcp_tool("ui", {"action": "tab", "title": "t", "url": "https://example.com/tuic-sec"}))
        wait_for("the https tab's ui-tab event", lambda: "https://example.com/tuic-sec" in watch.text, timeout=10)
        tally.control("a remote https:// tab is opened and its ui-tab event seen", True)
        file_error, file_text = tool_result(files)
        tally.attack("a remote `ui tab` opens a file:// URL",
                     file_error is True and "file:///etc/passwd" not in watch.text,
                     f"isError={file_error} {file_text}; event stream has file://: {'file:///etc/passwd' in watch.text}")
        https_error, https_text = tool_result(https)
        tally.control("the remote https:// tab call succeeded", https_error is False, https_text)
    except TimeoutError as e:
        tally.control("a remote https:// tab is opened and its ui-tab event seen", False, str(e))
    finally:
        watch.stop()

    # A registered repository whose .git/config a remote caller tries to own.
    repo = work / "repo"
    git_env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@e")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=git_env)
    (repo / "README.md").write_text("# scratch\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=git_env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True, env=git_env)
    daemon.ok("POST", "/repos", {"path": str(repo)})
    config_path = repo / ".git" / "config"
    original = config_path.read_text()
    fsmonitor_marker = work / "marker-fsmonitor"
    hostile = original + f'[core]\n\tfsmonitor = "touch {fsmonitor_marker}; false"\n'
    hook = repo / ".git" / "hooks" / "pre-commit"
    status, _, raw = daemon.request("POST", "/fs/write-external", {"path": str(repo / "notes.txt"), "content": "x\n"})
    tally.control("write-external into the registered repository works on the socket", status == 200,
                  f"{status} {raw[:200]!r}")
    wrote_config, wrote_hook, read_info = remote(
        {"method": "POST", "path": "/fs/write-external", "body": {"path": str(config_path), "content": hostile}},
        {"method": "POST", "path": "/fs/write-external",
         "body": {"path": str(hook), "content": f"#!/bin/sh\ntouch {fsmonitor_marker}\n"}},
        {"method": "GET", "path": "/repo/info?" + urllib.parse.urlencode({"path": str(repo)})})
    config_now = config_path.read_text()
    tally.attack("a remote caller writes .git/config (core.fsmonitor) through /fs/write-external",
                 wrote_config.get("status") == 403 and config_now == original,
                 f"{wrote_config.get('status')} {wrote_config.get('body', wrote_config.get('error'))[:300]}; "
                 f".git/config {'changed' if config_now != original else 'unchanged'}")
    tally.attack("a remote caller writes a git hook through /fs/write-external",
                 wrote_hook.get("status") == 403 and not hook.exists(),
                 f"{wrote_hook.get('status')} {wrote_hook.get('body', wrote_hook.get('error'))[:300]}; "
                 f"hook {'exists' if hook.exists() else 'absent'}")
    tally.attack("the remote write made the daemon's next git read run a command",
                 not fsmonitor_marker.exists(),
                 f"{fsmonitor_marker} exists after GET /repo/info ({read_info.get('status')})"
                 if fsmonitor_marker.exists() else f"no marker after GET /repo/info ({read_info.get('status')})")
    fsmonitor_marker.unlink(missing_ok=True)

    # The daemon's own git and a repository's config (as a cloned repo or an agent would leave it).
    config_path.write_text(hostile)
    subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, env=git_env, timeout=30)
    tally.control("the hostile .git/config runs its command under plain `git status`", fsmonitor_marker.exists(),
                  "git did not run core.fsmonitor: the check below would prove nothing")
    fsmonitor_marker.unlink(missing_ok=True)
    (remote_read,) = remote({"method": "GET", "path": "/repo/info?" + urllib.parse.urlencode({"path": str(repo)})})
    local_status, _, local_raw = daemon.request("GET", "/repo/info?" + urllib.parse.urlencode({"path": str(repo)}))
    tally.control("GET /repo/info answers (remote and socket)", remote_read.get("status") == 200 and local_status == 200,
                  f"remote {remote_read.get('status')} {remote_read.get('body', '')[:200]}; socket {local_status} "
                  f"{local_raw[:200]!r}")
    tally.attack("the daemon's git runs a repository's core.fsmonitor (GET /repo/info, remote and socket)",
                 not fsmonitor_marker.exists(), f"{fsmonitor_marker} exists" if fsmonitor_marker.exists() else "")
    config_path.write_text(original)

    # x-tuic-session: naming a local agent's terminal to write into the journal as it.
    agent = daemon.ok("POST", "/sessions", {"shell": "/bin/sh", "args": ["-c", "exec sleep 60"], "cwd": str(repo),
                                            "display_name": "local-agent"})
    forged_text, local_text = f"forged-{os.getpid()}", f"genuine-{os.getpid()}"
    (forged,) = remote(mcp_tool("progress", {"type": "done", "text": forged_text},
                                {"x-tuic-session": agent["tuic_session"]}))
    genuine = _socket_tool(daemon, "progress", {"type": "done", "text": local_text}, agent["tuic_session"])
    journal = json.dumps(daemon.ok("GET", "/progress?limit=1000"))
    tally.control("the agent's own progress report (on the socket) reaches the journal",
                  local_text in journal, f"{genuine}; journal: {journal[:300]}")
    forged_error, forged_result = tool_result(forged)
    tally.attack("a remote caller's x-tuic-session writes into the journal as a local agent",
                 forged_error is True and forged_text not in journal,
                 f"isError={forged_error} {forged_result}; in journal: {forged_text in journal}")
    daemon.request("DELETE", f"/sessions/{agent['session_id']}")

    # A password typed at a no-echo prompt, replayed from the event history by a remote reader.
    secret, sentinel = f"hunter2-{os.getpid()}-secret", f"sentinel-{os.getpid()}"
    prompt = daemon.ok("POST", "/sessions", {"shell": "/bin/sh", "cwd": "/", "display_name": "sudo-prompt",
                                             "args": ["-c", "stty -echo; printf 'Password: '; read -r pw; "
                                                            "echo; echo read-done; exec sleep 60"]})
    wait_for("the password prompt", lambda: "Password:" in _output(daemon, prompt["session_id"]), timeout=10)
    daemon.ok("POST", f"/sessions/{prompt['session_id']}/write", {"data": secret + "\r"})
    wait_for("the prompt to have read the password", lambda: "read-done" in _output(daemon, prompt["session_id"]),
             timeout=10)
    _socket_tool(daemon, "ui", {"action": "toast", "title": sentinel}, None)
    out = work / "replay.json"
    peers.run("sse", base | {"source": caller_ip, "path": "/events?last_event_id=0", "until": sentinel,
                             "seconds": 10, "out": str(out)}, timeout=30)
    replay = json.loads(out.read_text())
    tally.control("the remote replay of the event history reached past the typed password (a later toast)",
                  replay["found"], replay["text"][:300])
    tally.attack("a remote caller replays a password typed at a no-echo prompt from /events?last_event_id=0",
                 secret not in replay["text"],
                 ("the replay holds it: " + next(line for line in replay["text"].splitlines() if secret in line)[:300])
                 if secret in replay["text"] else "")
    print(f"[remote-peer] the typed line's event in the replay: "
          + (next((line for line in replay["text"].splitlines() if "user-input" in line), "(none)")[:200]))
    daemon.request("DELETE", f"/sessions/{prompt['session_id']}")


def _output(daemon: Tuicd, session_id: str) -> str:
    status, value, _ = daemon.request("GET", f"/sessions/{session_id}/output?format=text")
    return value.get("data", "") if status == 200 and isinstance(value, dict) else ""


def _socket_tool(daemon: Tuicd, name: str, arguments: dict, tuic_session: str | None) -> str:
    headers = {"accept": "application/json, text/event-stream"}
    if tuic_session:
        headers["x-tuic-session"] = tuic_session
    status, value, raw = daemon.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                         "params": {"name": name, "arguments": arguments}}, headers)
    return f"{status} {raw[:300]!r}"


def ipv6_attacks(tally: Tally, binary: str, peers: Peers, work: Path, ns: Namespace, config: dict):
    """Wrong passwords from a new IPv6 address each time, all in one /64: limited as one host."""
    port = free_port_on(ns.host_ip6)
    config = json.loads(json.dumps(config))
    config["services"]["server"].update(port=port, bind_address=ns.host_ip6)
    daemon = Tuicd(binary, config, root=work / "d6", env={"RUST_LOG": "info,tuicd::server::auth=debug"})
    try:
        wait_for("the IPv6 TLS listener", lambda: listening(ns.host_ip6, port), timeout=20)
        out = work / "ipv6.json"
        guesses = [{"method": "GET", "path": "/sessions", "password": f"guess-{i}", "source": ip}
                   for i, ip in enumerate(ns.rotating_ip6)]
        before = bcrypt_runs(daemon)
        peers.run("requests", {"host": ns.host_ip6, "port": port, "cafile": str(Path(config["services"]["tls"]["cert_path"])),
                               "source": ns.rotating_ip6[0], "out": str(out),
                               "requests": guesses + [{"method": "GET", "path": "/sessions", "source": ns.other_ip6}]},
                  timeout=60)
        answers = json.loads(out.read_text())
        runs = bcrypt_runs(daemon) - before - 1  # the last request is the real user's right password
        statuses = [a.get("status") for a in answers[:-1]]
        counts = {str(k): statuses.count(k) for k in sorted(set(statuses), key=str)}
        tally.control("the IPv6 guesses reached the daemon (401 or 429 answers)",
                      all(st in (401, 429) for st in statuses), json.dumps(answers[:3])[:300])
        tally.attack(f"{IPV6_ROTATING} wrong passwords, each from a new IPv6 address of one /64, are not each "
                     f"bcrypt-checked (at most {RATE_LIMIT_MAX})", runs <= RATE_LIMIT_MAX and 200 not in statuses,
                     f"{runs} bcrypt verifications; statuses {json.dumps(counts)}")
        tally.control("the real user from another /64 then gets in (200)", answers[-1].get("status") == 200,
                      json.dumps(answers[-1])[:300])
    finally:
        daemon.cleanup()


def plain_http_attacks(tally: Tally, binary: str, peers: Peers, work: Path, ns: Namespace, caller_ip: str,
                       password_hash: str):
    """A daemon on the network address without TLS: refused unless allow_insecure_remote."""
    def config(port: int, extra: dict) -> dict:
        return {"services": {"server": {"enabled": True, "port": port, "bind_address": ns.host_ip} | extra,
                             "auth": {"username": USER, "password_hash": password_hash}}}

    def peer_get(port: int) -> dict:
        out = work / f"plain-{port}.json"
        peers.run("requests", {"host": ns.host_ip, "port": port, "cafile": None, "source": caller_ip, "out": str(out),
                               "requests": [{"method": "GET", "path": "/sessions", "tls": False}]}, timeout=30)
        return json.loads(out.read_text())[0]

    port = free_port_on(ns.host_ip)
    refused = Tuicd(binary, config(port, {}), root=work / "d2", wait=False)
    try:
        try:
            code = refused.wait_exit(timeout=20)
        except subprocess.TimeoutExpired:
            code = None
        log = refused.log()
        answer = peer_get(port)
        named = "allow_insecure_remote" in log and ns.host_ip in log
        tally.attack("plain HTTP on the network address without allow_insecure_remote: tuicd refuses to start, "
                     "naming the setting", code not in (None, 0) and named and answer.get("status") != 200,
                     f"exit {code}; the peer got {json.dumps(answer)[:200]}; log: {log[-600:]}"
                     if not named else f"exit {code}; the peer got {answer.get('status') or answer.get('error')}")
        reason = [line for line in log.splitlines() if "allow_insecure_remote" in line]
        print(f"[remote-peer] the refusal: {reason[-1][:300] if reason else log[-300:]}")
    finally:
        refused.cleanup()

    allowed = Tuicd(binary, config(port, {"allow_insecure_remote": True}), root=work / "d3")
    try:
        wait_for("the plain-HTTP listener", lambda: listening(ns.host_ip, port), timeout=20)
        answer = peer_get(port)
        tally.control("with allow_insecure_remote the peer reaches it over plain HTTP (200)",
                      answer.get("status") == 200, json.dumps(answer)[:200])
    finally:
        allowed.cleanup()


if __name__ == "__main__":
    sys.exit(main())
