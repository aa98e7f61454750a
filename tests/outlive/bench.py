#!/usr/bin/env python3
"""The figures of agents outliving the daemon (docs/outlive.md), in one run:

upgrade: 100 live sessions (20 printing a numbered line every few milliseconds, 80 shells), two
WebSocket clients on each, all following the binary stream and reconnecting at their cursor when
the connection closes; `tuicd upgrade` twice. Reports every program still running, each client's
bytes checked frame by frame (a frame must start where the last ended) and, for the counters, line
by line (0 lost, 0 repeated), and the longest wall-clock gap between two frames a counter's client
saw (the output stall).

crash: the same 100 sessions, kill -9, a new daemon: the time until all 100 are listed again,
every program alive, and how many counter lines each counter's client missed between the last
line the dead daemon sent and the first the new one did (output the dead daemon had read and not
yet sent is lost with it).

Usage: bench.py TUICD [SESSIONS [FLOODING]]. Bounded: every wait has a deadline.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "acp"))
from common import Api, alive, env_without, stop, temp_dir, wait_for  # noqa: E402
from wsunix import Closed, WebSocket  # noqa: E402

COUNTER = ("import itertools, sys, time\n"
           "for i in itertools.count():\n"
           "    sys.stdout.write(f'{i}\\n')\n"
           "    if i % 100 == 0:\n"
           "        sys.stdout.flush(); time.sleep(0.01)\n")


class Follower(threading.Thread):
    """One stream client: binary frames from its cursor, reconnecting whenever the connection
    closes; checks that every frame starts where the last ended."""

    def __init__(self, socket_path: str, sid: str):
        super().__init__(daemon=True)
        self.socket_path, self.sid = socket_path, sid
        self.next = 0
        self.data = bytearray()
        self.frames: list[tuple[float, int]] = []  # (monotonic time, cursor after)
        self.gaps = 0
        self.connections = 0
        self.stop_at: float | None = None
        self.error: str | None = None
        # Set before a crash: when the connection ends, start over at cursor 0 (see below).
        self.restart = False
        self.last_before = -1

    def restart_at_zero(self) -> int:
        """After a crash the new daemon's cursors start at 0: the client starts over there,
        keeping a line cut short by the crash. Returns the last whole line it had."""
        lines = counter_lines(bytes(self.data))
        end = self.data.rfind(b"\r\n")
        self.data = bytearray(self.data[end + 2:] if end >= 0 else self.data)
        self.next = 0
        return lines[-1] if lines else -1

    def run(self):
        try:
            while self.stop_at is None or time.monotonic() < self.stop_at:
                try:
                    ws = WebSocket.connect(self.socket_path, f"/sessions/{self.sid}/stream?binary=1&cursor={self.next}")
                except OSError:
                    time.sleep(0.005)
                    continue
                except Exception:  # refused while the daemon restarts
                    time.sleep(0.005)
                    continue
                self.connections += 1
                try:
                    self.read(ws)
                except (Closed, OSError):
                    pass
                finally:
                    ws.close()
                if self.restart:
                    self.last_before = self.restart_at_zero()
                    self.restart = False
        except Exception as e:  # noqa: BLE001
            self.error = repr(e)

    def read(self, ws: WebSocket):
        ws.sock.settimeout(0.2)
        while self.stop_at is None or time.monotonic() < self.stop_at:
            try:
                b0, b1 = ws._need(2)
            except socket.timeout:
                continue
            ws.sock.settimeout(10)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", ws._need(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", ws._need(8))[0]
            payload = ws._need(n)
            ws.sock.settimeout(0.2)
            if opcode == 0x8:
                return
            if opcode == 0x2:
                cursor = struct.unpack("!Q", payload[:8])[0]
                if cursor != self.next:
                    self.gaps += 1
                self.data += payload[8:]
                self.next = cursor + len(payload) - 8
                self.frames.append((time.monotonic(), self.next))


def counter_lines(data: bytes) -> list[int]:
    text = data.decode(errors="replace")
    return [int(x) for x in text.split("\r\n")[:-1] if x.isdigit()]


def continuity(lines: list[int]) -> tuple[int, int]:
    """(missing, repeated) lines in what should be consecutive numbers."""
    missing = repeated = 0
    for a, b in zip(lines, lines[1:]):
        if b <= a:
            repeated += 1
        elif b > a + 1:
            missing += b - a - 1
    return missing, repeated


def longest_stall(frames: list[tuple[float, int]], around: list[float]) -> float:
    worst = 0.0
    for at in around:
        near = [t for t, _ in frames if at - 2 <= t <= at + 5]
        worst = max([worst] + [b - a for a, b in zip(near, near[1:])])
    return worst


def start_daemon(tuicd: str, config_dir: Path) -> subprocess.Popen:
    env = env_without("TUIC_KEEPER")
    env["RUST_LOG"] = "info"
    log = open(config_dir / "tuicd.log", "ab")
    return subprocess.Popen([tuicd, "--config-dir", str(config_dir)], env=env, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)


def create_sessions(api: Api, total: int, flooding: int) -> tuple[list[dict], list[str]]:
    sessions = []
    for i in range(total):
        if i < flooding:
            body = {"shell": "python3", "args": ["-u", "-c", COUNTER], "cwd": "/"}
        else:
            body = {"shell": "/bin/sh", "args": ["-c", "echo up; exec cat"], "cwd": "/"}
        sessions.append(api.ok("POST", "/sessions", body))
    floods = [s["session_id"] for s in sessions[:flooding]]
    return [api.ok("GET", f"/sessions/{s['session_id']}") for s in sessions], floods


def upgrade(tuicd: str, config_dir: Path) -> float:
    started = time.monotonic()
    out = subprocess.run([tuicd, "--config-dir", str(config_dir), "upgrade"], capture_output=True, text=True,
                         timeout=120, env=env_without("TUIC_KEEPER"))
    if out.returncode != 0:
        raise AssertionError(f"tuicd upgrade: {out.stdout} {out.stderr}")
    return time.monotonic() - started


def main() -> int:
    tuicd = sys.argv[1]
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    flooding = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    root = temp_dir("tuic-bench-")
    config_dir = root / "tuic"
    config_dir.mkdir(mode=0o700)
    (config_dir / "config.json").write_text('{"max_sessions": %d}' % max(total, 50))
    api = Api(config_dir / "mcp.sock")
    daemon = start_daemon(tuicd, config_dir)
    followers: list[Follower] = []
    try:
        wait_for("tuicd", api.answers, 30)
        pid = api.ok("GET", "/health")["pid"]
        sessions, floods = create_sessions(api, total, flooding)
        followers = [Follower(str(api.socket), s["session_id"]) for s in sessions for _ in range(2)]
        for f in followers:
            f.start()
        wait_for("every client connected", lambda: all(f.connections for f in followers), 60)
        time.sleep(1)  # a baseline second of output before the upgrade
        upgrades = []
        for _ in range(2):
            at = time.monotonic()
            took = upgrade(tuicd, config_dir)
            upgrades.append(at)
            wait_for("every client reconnected", lambda: all(f.connections >= len(upgrades) + 1 for f in followers), 60)
            print(f"upgrade: `tuicd upgrade` returned in {took * 1000:.0f} ms")
            time.sleep(1)  # output after the upgrade
        health = api.ok("GET", "/health")
        log = (config_dir / "tuicd.log").read_text(errors="replace")
        waited = [int(m) for m in re.findall(r"output_waited_ms=(\d+)", log)]
        serving = [int(m) for m in re.findall(r"since_frozen_ms=(\d+)", log)]
        print(f"upgrade: from the sessions freezing, the new image read their output again after {waited} ms "
              f"and accepted connections after {serving} ms")
        for f in followers:
            f.stop_at = time.monotonic()
        for f in followers:
            f.join(15)
        running = sum(alive(s["pid"]) for s in sessions)
        flood_clients = [f for f in followers if f.sid in floods]
        missing = repeated = 0
        for f in flood_clients:
            m, r = continuity(counter_lines(bytes(f.data)))
            missing, repeated = missing + m, repeated + r
        frame_gaps = sum(f.gaps for f in followers)
        stall = max(longest_stall(f.frames, upgrades) for f in flood_clients)
        got = sum(len(f.data) for f in followers)
        errors = [f.error for f in followers if f.error]
        print(f"upgrade: same pid {health['pid'] == pid}; {health['session_count']} sessions listed; "
              f"{running}/{total} programs running; {len(followers)} clients got {got} bytes; "
              f"frames not starting where the last ended: {frame_gaps}; counter lines missing {missing}, "
              f"repeated {repeated}; longest gap between two frames a counter's client saw around an upgrade "
              f"{stall * 1000:.0f} ms; client errors {len(errors)}")

        # Crash: the clients follow the counters again, from the new daemon's cursor 0.
        followers = [Follower(str(api.socket), sid) for sid in floods]
        for f in followers:
            f.start()
        wait_for("the counter clients reading", lambda: all(len(f.data) > 1000 for f in followers), 30)
        # The counters' sessions stop reading, and the clients catch up with what was read: what
        # the dead daemon had read and not yet sent would die with its ring, which is not what
        # this measures. What the counters write from here on waits in the kernel.
        for sid in floods:
            api.ok("POST", f"/sessions/{sid}/pause")

        def caught_up():
            totals = {sid: api.ok("GET", f"/sessions/{sid}")["total_written"] for sid in floods}
            time.sleep(0.05)
            again = {sid: api.ok("GET", f"/sessions/{sid}")["total_written"] for sid in floods}
            return totals == again and all(f.next == totals[f.sid] for f in followers)
        wait_for("the clients caught up with the paused counters", caught_up, 30)
        for f in followers:
            f.restart = True
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)
        wait_for("every client cut off", lambda: not any(f.restart for f in followers), 10)
        last = {f.sid: f.last_before for f in followers}
        started = time.monotonic()
        daemon = start_daemon(tuicd, config_dir)
        wait_for("tuicd again", api.answers, 30)
        listed = wait_for("every session listed again", lambda: len(api.ok("GET", "/sessions")) == total or None, 30)
        took = time.monotonic() - started
        wait_for("the counters read again", lambda: all(len(counter_lines(bytes(f.data))) > 10 for f in followers), 30)
        lost = []
        for f in followers:
            first = counter_lines(bytes(f.data))[0]
            lost.append(first - last[f.sid] - 1)
        wrote = sum(len(f.data) for f in followers)
        for f in followers:
            f.stop_at = time.monotonic()
        running = sum(alive(s["pid"]) for s in sessions)
        print(f"crash: kill -9 then a new daemon: all {total} sessions listed {took * 1000:.0f} ms after it was "
              f"started ({bool(listed)}); {running}/{total} programs running; the counters resumed with "
              f"{sum(lost)} lines lost over {len(lost)} counters (min {min(lost)}, max {max(lost)}), "
              f"{wrote} bytes read since")
        return 0
    finally:
        for f in followers:
            f.stop_at = time.monotonic()
        stop(daemon)


if __name__ == "__main__":
    sys.exit(main())
