#!/usr/bin/env python3
"""Crash recovery under systemd, checked against a harness that speaks the file-descriptor store
protocol as systemd documents it (sd_notify(3): `FDSTORE=1` + `FDNAME=` with the descriptor in
SCM_RIGHTS, `FDSTOREREMOVE=1`; sd_listen_fds(3): the next start gets the stored descriptors from 3
on, with `LISTEN_FDS`, `LISTEN_FDNAMES` and `LISTEN_PID` set to its own pid).

1. tuicd starts with `NOTIFY_SOCKET` pointing at the harness; `/health` says `crash_recovery:
   systemd`; each session's PTY master and pidfd arrive in the store, and leave it when the
   session is closed.
2. kill -9: the programs keep running (the store holds their terminals open).
3. tuicd starts again with the stored descriptors: the sessions are listed under the same ids,
   input reaches their programs, and one whose program ended meanwhile is forgotten.
4. SIGTERM: tuicd ends its sessions and the store is emptied.

Usage: sd_fdstore.py TUICD. Prints `ok ...` lines; exits 1 on the first failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Api, alive, env_without, stop, temp_dir, wait_for  # noqa: E402


class FdStore:
    """The notify socket's end of the protocol: what tuicd stored, by name."""

    def __init__(self, path: Path):
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(str(path))
        self.socket.setblocking(False)
        self.held: dict[str, int] = {}
        self.removed: list[str] = []

    def drain(self):
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.socket, 4096, 4)
            except BlockingIOError:
                return
            fields = dict(line.split("=", 1) for line in message.decode().splitlines() if "=" in line)
            name = fields.get("FDNAME", "stored")
            if fields.get("FDSTORE") == "1":
                assert len(fds) == 1, f"FDSTORE with {len(fds)} descriptors"
                if name in self.held:
                    os.close(self.held.pop(name))
                self.held[name] = fds[0]
            elif fields.get("FDSTOREREMOVE") == "1":
                for fd in fds:
                    os.close(fd)
                if name in self.held:
                    os.close(self.held.pop(name))
                self.removed.append(name)

    def wait_held(self, names: set[str]):
        def ok():
            self.drain()
            return names <= set(self.held)
        wait_for(f"{sorted(names)} in the store", ok, 10)


def start(tuicd: str, config_dir: Path, notify: Path, passed: dict[str, int] | None = None) -> subprocess.Popen:
    env = env_without("TUIC_KEEPER", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")
    env["NOTIFY_SOCKET"] = str(notify)
    log = open(config_dir / "tuicd.log", "ab")
    if not passed:
        return subprocess.Popen([tuicd, "--config-dir", str(config_dir)], env=env, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL)
    names = list(passed)
    env["LISTEN_FDS"] = str(len(names))
    env["LISTEN_FDNAMES"] = ":".join(names)
    sources = [passed[n] for n in names]

    def place():
        # As systemd does: the stored descriptors at 3, 4, ... in the order of LISTEN_FDNAMES.
        high = [os.dup(fd) for fd in sources]
        for i, fd in enumerate(high):
            os.dup2(fd, 3 + i, inheritable=True)

    # `$$` is the shell's pid, which `exec` keeps: LISTEN_PID names tuicd itself.
    script = 'LISTEN_PID=$$ exec "$0" "$@"'
    return subprocess.Popen(["/bin/sh", "-c", script, tuicd, "--config-dir", str(config_dir)], env=env,
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL, preexec_fn=place,
                            close_fds=False)


def main() -> int:
    tuicd = sys.argv[1]
    root = temp_dir("tuic-sd-")
    config_dir = root / "tuic"
    config_dir.mkdir(mode=0o700)
    store = FdStore(root / "notify")
    api = Api(config_dir / "mcp.sock")
    daemon = start(tuicd, config_dir, store.path)
    try:
        wait_for("tuicd answering", api.answers, 30)
        health = api.ok("GET", "/health")
        assert health["crash_recovery"] == "systemd", health
        print("ok /health says crash_recovery: systemd")

        def create(script: str) -> dict:
            created = api.ok("POST", "/sessions", {"shell": "/bin/sh", "args": ["-c", script], "cwd": "/"})
            sid = created["session_id"]
            wait_for(f"{sid}'s first output", lambda: api.ok("GET", f"/sessions/{sid}")["total_written"] > 0)
            return api.ok("GET", f"/sessions/{sid}")

        cat = create("echo up; exec cat")
        gone = create("echo up; exec cat")
        go = root / "go"
        ends = create(f"echo up; while [ ! -e {go} ]; do sleep 0.05; done")
        ids = [s["session_id"] for s in (cat, gone, ends)]
        store.wait_held({f"{kind}.{sid}" for sid in ids for kind in ("m", "p")})
        print(f"ok each session's master and pidfd are in the store ({len(store.held)} descriptors)")

        api.ok("DELETE", f"/sessions/{gone['session_id']}")
        wait_for("the closed session's descriptors removed",
                 lambda: (store.drain(), {f"m.{ids[1]}", f"p.{ids[1]}"} <= set(store.removed))[1], 10)
        assert not any(ids[1] in name for name in store.held), store.held
        print("ok a closed session's descriptors leave the store (FDSTOREREMOVE)")

        daemon.kill()
        daemon.wait(10)
        store.drain()
        assert alive(cat["pid"]) and alive(ends["pid"]), "the programs died with the daemon"
        go.write_text("")
        wait_for("the waiting program to end", lambda: not alive(ends["pid"]), 10)
        print("ok after kill -9 the programs run on; one ends while no daemon runs")

        started = time.monotonic()
        daemon = start(tuicd, config_dir, store.path, dict(store.held))
        wait_for("tuicd answering again", api.answers, 30)
        listed = wait_for("cat listed again", lambda: [s for s in api.ok("GET", "/sessions")
                                                      if s["session_id"] == ids[0]], 10)
        took = time.monotonic() - started
        sessions = api.ok("GET", "/sessions")
        assert [s["session_id"] for s in sessions] == [ids[0]], f"only cat is taken back: {sessions}"
        assert listed[0]["pid"] == cat["pid"] and listed[0]["alias"] == cat["alias"], listed
        api.ok("POST", f"/sessions/{ids[0]}/write", {"data": "from the store\n"})
        wait_for("the echo", lambda: "from the store\r\nfrom the store" in
                 api.ok("GET", f"/sessions/{ids[0]}/output?since_cursor=0")["data"], 10)
        print(f"ok the next start takes back the running session from LISTEN_FDS ({took * 1000:.0f} ms to "
              f"listed); input reaches it; the ended one is forgotten")

        stop(daemon)
        wait_for("the store emptied", lambda: (store.drain(), not store.held)[1], 10)
        assert not alive(cat["pid"]), "SIGTERM ends the sessions"
        print("ok SIGTERM ends the sessions and empties the store")
        return 0
    finally:
        stop(daemon, signal.SIGKILL)
        for fd in store.held.values():
            os.close(fd)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, TimeoutError) as e:
        print(f"FAIL {e}")
        sys.exit(1)
