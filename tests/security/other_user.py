"""Another local user (issue 29): a throwaway account made with useradd and removed at the end.

Attacks, each run as that user:
- connect to the daemon's socket (at its path, and through a hard link in a directory anyone may
  enter, so that the socket's own 0600 mode is what refuses): must fail with EACCES;
- 50 wrong passwords on 127.0.0.1 under another user name: the owner's right password must still
  answer 200 right after (and the guesser must have been limited: 429);
- a config dir the other user owns, or one anyone may write, holding a config.json that turns on
  remote access with the other user's password: tuicd must refuse to start, naming the reason, and
  that password must never get in. Control: the same config in a dir of the owner's starts and
  lets that password in, so the config would have worked.

Prints "N of M attacks held"; exits non-zero if any attack succeeded or a control broke.

Usage: python3 other_user.py --tuicd PATH
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Tally, Tuicd, exit_on_signals, basic, hash_password, require, wait_for  # noqa: E402

OWNER, OWNER_PASSWORD = "owner", "the owner's password"
EVE_PASSWORD = "eve's own password"
GUESSES = 50
# The other user cannot run an interpreter under root's home (pyenv): the system's, which anyone may.
OTHER_PYTHON = "/usr/bin/python3"

# Run as the other user: the outcome of one thing it tries, as JSON on stdout.
AS_EVE = r"""
import base64, errno, http.client, json, socket, sys
what, arg = sys.argv[1], json.loads(sys.argv[2])
if what == "connect":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(arg["path"])
        s.sendall(b"GET /sessions HTTP/1.1\r\nHost: tuic\r\nConnection: close\r\n\r\n")
        print(json.dumps({"connected": True, "answer": s.recv(200).decode(errors="replace")}))
    except OSError as e:
        print(json.dumps({"connected": False, "errno": errno.errorcode.get(e.errno, str(e.errno))}))
elif what == "guess":
    statuses = []
    for i in range(arg["count"]):
        c = http.client.HTTPConnection("127.0.0.1", arg["port"], timeout=10)
        auth = "Basic " + base64.b64encode(f"{arg['user']}:guess-{i}".encode()).decode()
        c.request("GET", "/sessions", headers={"Authorization": auth})
        r = c.getresponse()
        r.read()
        statuses.append(r.status)
        c.close()
    print(json.dumps({"statuses": statuses}))
"""


def as_user(user: pwd.struct_passwd, what: str, arg: dict) -> dict:
    out = subprocess.run([OTHER_PYTHON, "-c", AS_EVE, what, json.dumps(arg)], user=user.pw_uid, group=user.pw_gid,
                         extra_groups=[], capture_output=True, text=True, timeout=120, cwd="/",
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if out.returncode != 0:
        raise RuntimeError(f"as {user.pw_name}: {what} failed: {out.stderr[-1000:]}")
    return json.loads(out.stdout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port: int, user: str, password: str) -> int | None:
    import http.client
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/sessions", headers={"Authorization": basic(user, password)})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status
    except OSError:
        return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuicd", required=True)
    args = parser.parse_args()
    require(["useradd", "userdel", OTHER_PYTHON])

    exit_on_signals()

    tally = Tally("other-user")
    name = f"tsec{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="tuic-sec-user-"))
    os.chmod(work, 0o755)  # anyone may enter: what keeps the other user out must be tuicd's own modes
    created = False
    daemons: list[Tuicd] = []
    try:
        subprocess.run(["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                        "--user-group", name], check=True, capture_output=True, timeout=30)
        created = True
        eve = pwd.getpwnam(name)
        print(f"[other-user] the other user: {name} (uid {eve.pw_uid})")
        owner_hash = hash_password(args.tuicd, OWNER_PASSWORD)
        eve_hash = hash_password(args.tuicd, EVE_PASSWORD)

        # The owner's daemon: socket plus remote access on 127.0.0.1 (plain HTTP: loopback).
        port = free_port()
        daemon = Tuicd(args.tuicd, {"services": {"server": {"enabled": True, "port": port, "bind_address": "127.0.0.1"},
                                                 "auth": {"username": OWNER, "password_hash": owner_hash}}},
                       root=work / "owner")
        daemons.append(daemon)
        os.chmod(work / "owner", 0o755)
        wait_for("the owner's TCP listener", lambda: get(port, OWNER, OWNER_PASSWORD) == 200, timeout=20)

        # 1. The socket.
        mode = stat.S_IMODE(os.stat(daemon.socket).st_mode)
        linked = work / "linked.sock"
        os.link(daemon.socket, linked)
        tally.control("the owner reaches the socket (it exists at that path)", daemon.request("GET", "/health")[0] == 200)
        for where, path in (("its path (inside the 0700 config dir)", daemon.socket),
                            ("a hard link in a directory anyone may enter (the socket's own mode)", linked)):
            seen = as_user(eve, "connect", {"path": str(path)})
            tally.attack(f"the other user connects to the socket at {where}",
                         not seen["connected"] and seen.get("errno") == "EACCES", json.dumps(seen)[:300])
        tally.attack("the socket is 0600", mode == 0o600, oct(mode))

        # 2. Another user's failures on 127.0.0.1 under another name.
        guessed = as_user(eve, "guess", {"port": port, "user": "eve", "count": GUESSES})["statuses"]
        owner_after = get(port, OWNER, OWNER_PASSWORD)
        tally.control(f"the other user's {GUESSES} guesses were limited (429 after the limit)",
                      guessed[-1] == 429 and 200 not in guessed, f"{guessed}")
        tally.attack(f"{GUESSES} wrong passwords from another local user (as 'eve') lock the owner out of 127.0.0.1",
                     owner_after == 200, f"the owner's right password then got {owner_after}; the guesser got "
                     f"{guessed.count(401)} x 401, {guessed.count(429)} x 429")
        daemon.cleanup()
        daemons.remove(daemon)

        # 3. A config dir the owner does not own alone, holding the other user's remote access.
        def evil_config(port: int) -> str:
            return json.dumps({"services": {"server": {"enabled": True, "port": port, "bind_address": "127.0.0.1"},
                                            "auth": {"username": "eve", "password_hash": eve_hash}}})

        for label, uid, gid, dir_mode in (("owned by the other user", eve.pw_uid, eve.pw_gid, 0o700),
                                          ("world-writable (0777, the owner's)", 0, 0, 0o777)):
            evil_port = free_port()
            cdir = work / f"cfg-{dir_mode:o}-{uid}"
            cdir.mkdir()
            (cdir / "config.json").write_text(evil_config(evil_port))
            os.chown(cdir / "config.json", uid, gid)
            os.chown(cdir, uid, gid)
            os.chmod(cdir, dir_mode)
            d = Tuicd(args.tuicd, root=work / f"run-{dir_mode:o}-{uid}", config_dir=cdir, wait=False)
            daemons.append(d)
            eve_got = set()
            try:
                # Until it exits (bounded): the other user's password must never get in.
                def exited():
                    eve_got.add(get(evil_port, "eve", EVE_PASSWORD))
                    return d.process.poll() is not None
                wait_for("tuicd to refuse the config dir", exited, timeout=20, interval=0.05)
                code = d.process.returncode
            except TimeoutError:
                code = None
            eve_got.add(get(evil_port, "eve", EVE_PASSWORD))
            log = d.log().strip()
            named = str(cdir) in log and ("owned by" in log or "lets other users write" in log or "mode" in log)
            tally.attack(f"a config dir {label} with the other user's remote access is loaded",
                         code not in (None, 0) and named and 200 not in eve_got,
                         f"exit {code}; the other user's password got {sorted(map(str, eve_got))}"
                         + ("" if named else f"; log: {log[-400:]}"))
            print(f"[other-user] the refusal: {log.splitlines()[-1][:300] if log else '(no log)'}")
            d.cleanup()
            daemons.remove(d)

        # Control: the same config in the owner's own 0700 dir is loaded and lets that password in.
        control_port = free_port()
        own = work / "cfg-own"
        own.mkdir(mode=0o700)
        (own / "config.json").write_text(evil_config(control_port))
        d = Tuicd(args.tuicd, root=work / "run-own", config_dir=own)
        daemons.append(d)
        try:
            wait_for("the control daemon's listener", lambda: get(control_port, "eve", EVE_PASSWORD) == 200, timeout=20)
            tally.control("the same config in the owner's own 0700 dir lets the other user's password in", True)
        except TimeoutError as e:
            tally.control("the same config in the owner's own 0700 dir lets the other user's password in", False, str(e))
    except BaseException as e:  # noqa: BLE001 - reported; cleanup below still runs
        tally.control("the other-user run completed", False, f"{type(e).__name__}: {e}")
    finally:
        for d in daemons:
            d.cleanup()
        if created:
            subprocess.run(["userdel", name], capture_output=True, timeout=30)
            subprocess.run(["groupdel", name], capture_output=True, timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
