"""The ACP suite: tuicd driving the real ACP agents against the scripted model server.

    python3 tests/acp/run.py --tuicd target/debug/tuicd [--cli claude codex gemini] [--check cancel ...]

Each agent (claude: @zed-industries/claude-code-acp, codex: @zed-industries/codex-acp, gemini:
Gemini CLI --acp; launched the way `tests/agents/bed.py launch-acp` says) gets one Bed (model
server + tuicd carrying the agent's launch environment + a git repository) and one connection,
and the checks run in order through tuicd's HTTP API and its WebSocket stream (contract:
docs of the ACP routes): connect, reply, permission (answered over REST), mobile_permission
(answered by tapping the allow_once option on /mobile in headless Chromium at a phone viewport:
tests/acp/mobile_permission.mjs over tuicd's TCP listener with Basic Auth), cancel, resume (20
reconnects mid-turn, 0 frames lost), kill + reconnect + load, disconnect. The truth is what reached
the model (the model server's log), what the command left behind, and the frames on the stream.

Prints `ok <name>` / `FAIL <name>: <reason>`, then `N passed, M failed`; exits 1 when any
failed. Every wait is a condition with a deadline. Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENTS = HERE.parent / "agents"
sys.path.insert(0, str(AGENTS))
sys.path.insert(0, str(HERE))

import bed  # noqa: E402
from tuic import Bed, UnixConnection, wait_for  # noqa: E402
from wsunix import Events, Refused, WebSocket  # noqa: E402

CLIS = ["claude", "codex", "gemini"]

# Known faults of the agents themselves (not tuicd's), checked as what they are: the check
# passes when tuicd reports the agent's own answer faithfully.
KNOWN = {
    # Gemini CLI 0.61.0 --acp: session/load re-initialises the session's chat file (a fresh
    # header and `$set messages` holding only the session context) before reading it, then
    # usually finds nothing resumable: "No previous sessions found for this project." (-32603,
    # in the error's data); sometimes it loads and replays the session context only.
    ("gemini", "load"): "No previous sessions found",
}

REPLY = "hello through tuicd"
# Claude Code runs a bare `echo` without asking (read-only); a redirect makes every agent ask.
SHELL = "echo hi > marker.txt"
# The same for the permission answered from /mobile, leaving its own file.
MOBILE_SHELL = "echo phone > mobile.txt"
# tuicd's TCP listener (loopback, Basic Auth) for /mobile, and the page driver.
USER = "phone"
PASSWORD = "correct horse"
MOBILE_SCRIPT = HERE / "mobile_permission.mjs"
LONG_REPLY = " ".join(f"word{i:03d}" for i in range(150))  # 1199 chars: 100 chunks of 12


class Failed(Exception):
    pass


def check(condition, reason: str):
    if not condition:
        raise Failed(reason)


def call(b: Bed, method: str, path: str, body=None, timeout: float = 130) -> tuple[int, object]:
    """One request to tuicd on its Unix socket: (status, parsed JSON body or None)."""
    conn = UnixConnection(str(b.tuicd.socket), timeout=timeout)
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"content-type": "application/json"} if data is not None else {})
    response = conn.getresponse()
    raw = response.read()
    conn.close()
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        value = {"raw": raw[:300].decode(errors="replace")}
    return response.status, value


def must(b: Bed, method: str, path: str, body=None, want: int | tuple = 200, timeout: float = 130):
    status, value = call(b, method, path, body, timeout)
    wanted = want if isinstance(want, tuple) else (want,)
    check(status in wanted, f"{method} {path}: {status} {json.dumps(value)[:400]} (want {want})")
    return value


class Stream:
    """The connection's WebSocket stream, read frame by frame; checks the sequence as it goes
    (each journaled frame's seq is the previous one's + 1)."""

    def __init__(self, b: Bed, cid: str, after: int | None):
        path = f"/acp/connections/{cid}/stream" + (f"?after={after}" if after is not None else "")
        self.ws = WebSocket.connect(str(b.tuicd.socket), path)
        self.hello = self.ws.recv_json(timeout=10)
        check(self.hello and self.hello.get("kind") == "hello", f"first frame is not hello: {self.hello}")
        self.last = after if after is not None else self.hello.get("first_sequence", 1) - 1
        self.frames: list[dict] = []

    def next(self, timeout: float) -> dict:
        frame = self.ws.recv_json(timeout=timeout)
        check(frame is not None, "the stream closed")
        check(frame["seq"] == self.last + 1,
              f"sequence gap or duplicate: got {frame['seq']} after {self.last} ({frame.get('kind')})")
        self.last = frame["seq"]
        self.frames.append(frame)
        check(frame.get("kind") != "gap", f"gap frame: {frame}")
        return frame

    def until(self, predicate, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                kinds = [(f["seq"], f.get("kind"), method_of(f)) for f in self.frames[-6:]]
                raise Failed(f"timed out after {timeout:.0f} s waiting for {what} (last frames {kinds})")
            try:
                frame = self.next(left)
            except (socket.timeout, TimeoutError):
                continue
            if predicate(frame):
                return frame

    def close(self):
        self.ws.close()


def method_of(frame: dict) -> str | None:
    message = frame.get("message") or {}
    return message.get("method") or (("response:" + str(message.get("id"))) if "id" in message else None)


def is_response(frame: dict, request_id) -> bool:
    message = frame.get("message") or {}
    return (frame.get("kind") == "agent" and "method" not in message and str(message.get("id")) == str(request_id)
            and ("result" in message or "error" in message))


def chunk_text(frame: dict, sid: str, kinds=("agent_message_chunk",)) -> str | None:
    message = frame.get("message") or {}
    if frame.get("kind") != "agent" or message.get("method") != "session/update":
        return None
    params = message.get("params") or {}
    update = params.get("update") or {}
    if params.get("sessionId") != sid or update.get("sessionUpdate") not in kinds:
        return None
    content = update.get("content") or {}
    return content.get("text", "") if content.get("type") == "text" else ""


def acp_spec(cli: str, b: Bed) -> dict:
    return bed.launch_acp(cli, b.model.url, b.root / f"home-{cli}", b.repo)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tcp_config(tuicd: str, port: int) -> dict:
    """tuicd's config.json: the HTTP server on loopback `port` behind Basic Auth (for /mobile)."""
    hashed = subprocess.run([tuicd, "hash-password", "--cost", "4"], input=PASSWORD.encode(), capture_output=True,
                            timeout=30, check=True).stdout.decode().strip()
    return {"services": {"server": {"enabled": True, "port": port, "bind_address": "127.0.0.1"},
                         "auth": {"username": USER, "password_hash": hashed, "auth_rate_limit_max": 100}}}


class Suite:
    def __init__(self, cli: str, tuicd: str):
        self.cli = cli
        self.specs: dict = {}
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.bed = Bed(tuicd, lambda b: self.specs.setdefault("spec", acp_spec(cli, b))["env"],
                       config=tcp_config(tuicd, self.port))
        self.spec = self.specs["spec"]
        self.cid: str | None = None
        self.sid: str | None = None
        self.caps: dict = {}
        self.events = Events(str(self.bed.tuicd.socket), types="acp-notice")
        self.notes: dict = {}

    def close(self):
        self.events.close()
        self.bed.close()

    def path(self, tail: str = "") -> str:
        return f"/acp/connections/{self.cid}{tail}"

    def prompt(self, text: str) -> tuple[dict, Stream]:
        """Opens the stream at the current sequence, then sends the prompt: (202 body, stream)."""
        snapshot = must(self.bed, "GET", self.path())
        stream = Stream(self.bed, self.cid, snapshot["sequence"])
        sent = must(self.bed, "POST", self.path(f"/sessions/{self.sid}/prompt"), {"prompt": text}, want=202)
        check(isinstance(sent.get("request_id"), (int, str)) and isinstance(sent.get("sequence"), int),
              f"prompt answer: {sent}")
        return sent, stream

    # --- the checks, in order -------------------------------------------------------------

    def connect(self) -> str:
        b = self.bed
        must(b, "PUT", "/config", {"ego_executable": self.spec["argv"][0], "ego_args": self.spec["argv"][1:]})
        snap = must(b, "POST", "/acp/connections", {"cwd": str(b.repo)}, want=201)
        check(snap["state"] == "ready", f"state {snap['state']!r} ({snap.get('settled_reason')})")
        check(snap["generation"] == 1, f"generation {snap['generation']}")
        self.cid = snap["id"]
        self.caps = snap.get("agent_capabilities") or {}
        self.events.wait(lambda n, d: d.get("connection") == self.cid and d.get("notice") == "ready", 10,
                         "the ready notice")
        created = must(b, "POST", self.path("/sessions"), {"cwd": str(b.repo)}, want=201)
        self.sid = created["session_id"]
        check(self.sid, f"no session id: {created}")
        snap = must(b, "GET", self.path())
        check(any(s["session_id"] == self.sid and s["attached"] for s in snap["sessions"]),
              f"the new session is not in the snapshot: {snap['sessions']}")
        # Without `after` the stream starts at the oldest retained frame: the launch's history.
        stream = Stream(b, self.cid, None)
        try:
            check(stream.hello.get("state") == "ready" and stream.hello.get("first_sequence") == snap["first_sequence"],
                  f"hello {stream.hello} vs snapshot first_sequence {snap['first_sequence']}")
            stream.until(lambda f: f["seq"] >= snap["sequence"], 10, f"frame {snap['sequence']}")
        finally:
            stream.close()
        check(stream.frames[0]["seq"] == snap["first_sequence"], f"first frame {stream.frames[0]}")
        methods = [method_of(f) for f in stream.frames]
        check("initialize" in methods and "session/new" in methods, f"the journal lacks the launch: {methods[:12]}")
        check(any(f.get("kind") == "state" and f.get("state") == "ready" for f in stream.frames),
              "no state ready frame in the journal")
        return (f"{snap['agent_info']} loadSession={self.caps.get('loadSession')} "
                f"sessionCapabilities={self.caps.get('sessionCapabilities')}")

    def reply(self) -> str:
        sent, stream = self.prompt(f"[[reply={REPLY}]] hi")
        try:
            texts: list[str] = []

            def done(frame):
                text = chunk_text(frame, self.sid)
                if text is not None:
                    texts.append(text)
                return is_response(frame, sent["request_id"])

            end = stream.until(done, 120, "the prompt's response frame")
        finally:
            stream.close()
        first = stream.frames[0]
        check(first.get("kind") == "client" and first["seq"] == sent["sequence"]
              and (first.get("message") or {}).get("method") == "session/prompt",
              f"the first frame after the snapshot is not the prompt as sent (seq {sent['sequence']}): {first}")
        check("".join(texts) == REPLY, f"streamed {''.join(texts)!r}, want {REPLY!r}")
        stop = (end["message"].get("result") or {}).get("stopReason")
        check(stop == "end_turn", f"stopReason {stop!r} ({end['message']})")
        check(any(REPLY in r.get("prompt", "") for r in self.bed.model.requests()), "the prompt never reached the model")
        # GET sessions: the agent's session/list when advertised (an agent may list only sessions
        # it has persisted, i.e. after a turn; Claude writes its transcript just after the turn).
        listed: dict = {}

        def is_listed():
            listed.update(must(self.bed, "GET", self.path("/sessions")))
            return self.sid in [s.get("session_id") or s.get("sessionId") for s in listed["sessions"]]

        try:
            wait_for("the session in GET sessions", is_listed, timeout=15, interval=0.2)
        except TimeoutError:
            raise Failed(f"the session is not listed after a turn (source {listed.get('source')}): {listed}")
        return f"{len(texts)} chunks; listed by {listed.get('source')}"

    def permission(self) -> str:
        marker = self.bed.repo / "marker.txt"
        check(not marker.exists(), "marker.txt exists before the turn")
        sent, stream = self.prompt(f"[[shell={SHELL}]] [[after=The command ran.]] run it")
        try:
            _, notice = self.events.wait(
                lambda n, d: d.get("connection") == self.cid and d.get("notice") == "interaction_pending", 120,
                "interaction_pending")
            check(notice.get("session_id") == self.sid, f"notice session {notice.get('session_id')!r}")
            items = must(self.bed, "GET", self.path("/interactions"))["interactions"]
            check(len(items) == 1, f"interactions: {items}")
            item = items[0]
            check(item["kind"] == "permission" and item["request_id"] == notice.get("request_id")
                  and item.get("session_id") == self.sid and item.get("tool_call"),
                  f"interaction {item} vs notice {notice}")
            check(not marker.exists(), "the command ran before it was allowed")
            option = next((o for o in item["options"] if o.get("kind") == "allow_once"), None)
            check(option is not None, f"no allow_once option: {item['options']}")
            # A wrong option id is refused naming the options.
            status, bad = call(self.bed, "POST", self.path(f"/permissions/{item['request_id']}/response"),
                               {"option_id": "no-such-option"})
            check(status == 400, f"a wrong option id: {status} {bad}")
            must(self.bed, "POST", self.path(f"/permissions/{item['request_id']}/response"),
                 {"option_id": option["optionId"]})
            status, again = call(self.bed, "POST", self.path(f"/permissions/{item['request_id']}/response"),
                                 {"option_id": option["optionId"]})
            check(status in (404, 409), f"a second answer: {status} {again}")
            end = stream.until(lambda f: is_response(f, sent["request_id"]), 120, "the turn's end")
        finally:
            stream.close()
        stop = (end["message"].get("result") or {}).get("stopReason")
        check(stop == "end_turn", f"stopReason {stop!r}")
        check(marker.exists() and marker.read_text().strip() == "hi", "the command did not run")
        answer = next((f for f in stream.frames if f.get("kind") == "client"
                       and str((f.get("message") or {}).get("id")) == str(item["request_id"])), None)
        check(answer is not None, "tuicd's answer to the permission request is not on the stream")
        self.events.wait(lambda n, d: d.get("connection") == self.cid and d.get("notice") == "interaction_settled",
                         10, "interaction_settled")
        check(must(self.bed, "GET", self.path("/interactions"))["interactions"] == [], "interactions left")
        return f"options {[o.get('optionId') for o in item['options']]}, answered {option['optionId']}"

    def mobile_permission(self) -> str:
        """The same question, answered by a person on /mobile: the page taps the option named as
        the allow_once option is (ids differ per agent; the page shows names)."""
        marker = self.bed.repo / "mobile.txt"
        check(not marker.exists(), "mobile.txt exists before the turn")
        # The page needs the TCP listener: reachable, and behind the password.
        try:
            with urllib.request.urlopen(self.base + "/health", timeout=5) as r:
                raise Failed(f"GET /health over TCP without credentials: {r.status}, want 401")
        except urllib.error.HTTPError as e:
            check(e.code == 401, f"GET /health over TCP without credentials: {e.code}, want 401")
        sent, stream = self.prompt(f"[[shell={MOBILE_SHELL}]] [[after=The command ran.]] run it")
        try:
            # /events' waits look at the notices seen before too: only this turn's (journaled
            # after its prompt) count.
            _, notice = self.events.wait(
                lambda n, d: d.get("connection") == self.cid and d.get("notice") == "interaction_pending"
                and d.get("sequence", 0) > sent["sequence"], 120, "interaction_pending")
            check(notice.get("session_id") == self.sid, f"notice session {notice.get('session_id')!r}")
            items = must(self.bed, "GET", self.path("/interactions"))["interactions"]
            check(len(items) == 1, f"interactions: {items}")
            item = items[0]
            check(item["kind"] == "permission" and item["request_id"] == notice.get("request_id"),
                  f"interaction {item} vs notice {notice}")
            check(not marker.exists(), "the command ran before it was allowed")
            option = next((o for o in item["options"] if o.get("kind") == "allow_once"), None)
            check(option is not None, f"no allow_once option: {item['options']}")
            names = [o.get("name") for o in item["options"]]
            check(names.count(option.get("name")) == 1, f"the allow_once option's name is not unique: {names}")
            shots = self.bed.root / f"mobile-{self.cli}"
            argv = ["node", str(MOBILE_SCRIPT), self.base, USER, PASSWORD, self.cid, self.sid,
                    str(item["request_id"]), option["name"], str(shots)]
            try:
                page = subprocess.run(argv, capture_output=True, timeout=120, cwd=HERE)
            except subprocess.TimeoutExpired:
                raise Failed("mobile_permission.mjs ran past 120 s")
            said = (page.stdout.decode(errors="replace") + page.stderr.decode(errors="replace")).strip()
            check(page.returncode == 0, f"the page (exit {page.returncode}): {said[-600:]}")
            end = stream.until(lambda f: is_response(f, sent["request_id"]), 120, "the turn's end")
        except BaseException:
            # The question may still be open: end the turn so the next check starts from an idle
            # session and fails, or passes, on its own account.
            call(self.bed, "POST", self.path(f"/sessions/{self.sid}/cancel"))
            try:
                wait_for("the cancelled turn's end", lambda: not any(
                    s["turn_running"] for s in call(self.bed, "GET", self.path())[1]["sessions"]
                    if s["session_id"] == self.sid), 30)
            except Exception:
                pass  # the original failure is the one to report
            raise
        finally:
            stream.close()
        stop = (end["message"].get("result") or {}).get("stopReason")
        check(stop == "end_turn", f"stopReason {stop!r}")
        check(marker.exists() and marker.read_text().strip() == "phone", "the command did not run")
        answer = next((f for f in stream.frames if f.get("kind") == "client"
                       and str((f.get("message") or {}).get("id")) == str(item["request_id"])), None)
        check(answer is not None, "tuicd's answer to the permission request is not on the stream")
        outcome = ((answer["message"].get("result") or {}).get("outcome") or {})
        check(outcome.get("optionId") == option["optionId"],
              f"the answer sent to the agent: {outcome}, want optionId {option['optionId']!r}")
        self.events.wait(lambda n, d: d.get("connection") == self.cid and d.get("notice") == "interaction_settled"
                         and d.get("sequence", 0) > sent["sequence"], 10, "interaction_settled")
        check(must(self.bed, "GET", self.path("/interactions"))["interactions"] == [], "interactions left")
        return (f"tapped {option['name']!r} ({option['optionId']}) of {len(names)} options on /mobile, "
                f"the page says answered; the command ran, the turn ended")

    def cancel(self) -> str:
        before = len(self.bed.model.requests())
        sent, stream = self.prompt("[[delay=5000]] [[reply=too late]] wait")
        try:
            wait_for("the delayed prompt at the model",
                     lambda: any("too late" in r.get("prompt", "") for r in self.bed.model.requests()[before:]), 60)
            started = time.monotonic()
            # No body: tuicd answers cancel without reading one, and a body still unsent then
            # meets a closed socket (EPIPE) about one time in three.
            answer = must(self.bed, "POST", self.path(f"/sessions/{self.sid}/cancel"))
            check(answer.get("cancelled") is True, f"cancel answer {answer}")
            end = stream.until(lambda f: is_response(f, sent["request_id"]), 30, "the cancelled turn's end")
            took = time.monotonic() - started
        finally:
            stream.close()
        stop = (end["message"].get("result") or {}).get("stopReason")
        check(stop == "cancelled", f"stopReason {stop!r} ({json.dumps(end['message'])[:300]})")
        check(any(f.get("kind") == "client" and (f.get("message") or {}).get("method") == "session/cancel"
                  for f in stream.frames), "no session/cancel frame on the stream")
        snap = must(self.bed, "GET", self.path())
        session = next(s for s in snap["sessions"] if s["session_id"] == self.sid)
        check(session["turn_running"] is False,
              f"turn_running still true right after the turn's response frame was streamed (a prompt sent "
              f"on seeing the end would get 409): {session}")
        return f"ended {took:.2f} s after cancel"

    def resume(self) -> str:
        snap = must(self.bed, "GET", self.path())
        start = snap["sequence"]
        try:
            WebSocket.connect(str(self.bed.tuicd.socket), self.path(f"/stream?after={start + 1000}")).close()
            raise Failed("after beyond the newest: upgraded, want 400")
        except Refused as e:
            check(e.status == 400, f"after beyond the newest: {e.status}, want 400")
        sent = must(self.bed, "POST", self.path(f"/sessions/{self.sid}/prompt"),
                    {"prompt": f"[[stream=50]] [[reply={LONG_REPLY}]] long"}, want=202)
        last = start
        frames: list[dict] = []
        reconnects = 0
        ended = False
        deadline = time.monotonic() + 120
        while not ended:
            check(time.monotonic() < deadline, f"the turn did not end within 120 s ({reconnects} reconnects)")
            stream = Stream(self.bed, self.cid, last)
            reconnects += 1
            # Read a few frames (or for a short while), then drop the socket mid-turn; the last 20
            # visits stay until the turn's end.
            budget = 3 if reconnects <= 20 else 10 ** 9
            window = time.monotonic() + (0.15 if reconnects <= 20 else 120)
            got = 0
            try:
                while got < budget and time.monotonic() < window:
                    try:
                        frame = stream.next(max(0.01, window - time.monotonic()))
                    except (socket.timeout, TimeoutError):
                        break
                    frames.append(frame)
                    got += 1
                    if is_response(frame, sent["request_id"]):
                        ended = True
                        break
            finally:
                last = stream.last
                stream.close()
        seqs = [f["seq"] for f in frames]
        check(seqs == list(range(start + 1, start + 1 + len(seqs))), "the concatenation has a gap or a duplicate")
        texts = [t for t in (chunk_text(f, self.sid) for f in frames) if t is not None]
        check("".join(texts) == LONG_REPLY, f"joined text differs: {len(''.join(texts))} chars vs {len(LONG_REPLY)}")
        mid_turn = reconnects - 1
        check(mid_turn >= 20, f"only {mid_turn} reconnects happened before the turn's end")
        return f"{len(frames)} frames, {len(texts)} chunks, {reconnects} connections, 0 lost, 0 duplicated"

    def kill_reconnect_load(self) -> str:
        b = self.bed
        snap = must(b, "POST", self.path("/kill"))
        # The contract: the kill's answer is the settled snapshot. Checked at the end, so the
        # rest (reconnect, load) still runs when only that is off.
        immediate = None
        if not (snap["state"] == "settled" and snap.get("settled_reason") == "killed"):
            immediate = f"POST kill answered state {snap['state']!r} reason {snap.get('settled_reason')!r}, want settled/killed"
        self.events.wait(lambda n, d: d.get("connection") == self.cid and d.get("notice") == "settled", 10, "settled notice")
        snap = must(b, "GET", self.path())
        check(snap["state"] == "settled" and snap.get("settled_reason") == "killed",
              f"after the settled notice: {snap['state']} {snap.get('settled_reason')}")
        status, refused = call(b, "POST", self.path(f"/sessions/{self.sid}/prompt"), {"prompt": "hi"})
        check(status == 409, f"a prompt to a settled connection: {status} {refused}")
        snap = must(b, "POST", self.path("/reconnect"))
        check(snap["generation"] == 2 and snap["state"] == "ready", f"after reconnect: gen {snap['generation']} {snap['state']}")
        old = next((s for s in snap["sessions"] if s["session_id"] == self.sid), None)
        check(old is not None and old["attached"] is False, f"the old session after reconnect: {old}")
        if not (snap.get("agent_capabilities") or {}).get("loadSession"):
            check(immediate is None, immediate)
            return "generation 2 ready; loadSession not advertised"
        stream = Stream(b, self.cid, snap["sequence"])
        try:
            status, loaded = call(b, "POST", self.path(f"/sessions/{self.sid}/load"), {"cwd": str(b.repo)})
            known = KNOWN.get((self.cli, "load"))
            if known and status == 502:
                check(known in json.dumps(loaded),
                      f"load: 502 as expected from this agent, but the body lacks the agent's error data "
                      f"(contract: code = the rpc code, data = the agent's data; {known!r} is in it): {loaded}")
                outcome = f"generation 2 ready; load 502 as expected (known agent fault: {known!r})"
                check(immediate is None, f"{immediate} (the rest passed: {outcome})")
                return outcome
            check(status == 200, f"load: {status} {json.dumps(loaded)[:300]}")
            replay: list[str] = []
            # The load's response frame comes after the replayed history.
            stream.until(lambda f: (f.get("kind") == "agent" and "method" not in (f.get("message") or {})
                                    and "result" in (f.get("message") or {})), 30, "the load's response")
        finally:
            stream.close()
        for frame in stream.frames:
            text = chunk_text(frame, self.sid, ("agent_message_chunk", "user_message_chunk"))
            if text is not None:
                replay.append(text)
        joined = "".join(replay)
        if (self.cli, "load") in KNOWN and REPLY not in joined:
            outcome = (f"generation 2 ready; load 200 but the agent replayed {len(replay)} chunks without the "
                       f"history (known agent fault)")
            check(immediate is None, f"{immediate} (the rest passed: {outcome})")
            return outcome
        check(REPLY in joined, f"the replay lacks the earlier reply ({len(replay)} chunks: {joined[:200]!r})")
        snap = must(b, "GET", self.path())
        again = next(s for s in snap["sessions"] if s["session_id"] == self.sid)
        check(again["attached"] is True, f"the loaded session is not attached: {again}")
        check(immediate is None, f"{immediate} (the rest passed: reconnect gen 2, load replayed {len(replay)} chunks)")
        return f"generation 2 ready; load replayed {len(replay)} history chunks"

    def disconnect(self) -> str:
        answer = must(self.bed, "DELETE", self.path())
        check(answer.get("closed") is True, f"{answer}")
        status, _ = call(self.bed, "GET", self.path())
        check(status == 404, f"GET after DELETE: {status}")
        return "closed"


CHECKS = ["connect", "reply", "permission", "mobile_permission", "cancel", "resume", "kill_reconnect_load", "disconnect"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--cli", nargs="*", default=CLIS, choices=CLIS)
    parser.add_argument("--check", action="append", choices=CHECKS,
                        help="run only these checks (connect always runs first); repeatable")
    args = parser.parse_args()
    checks = CHECKS if not args.check else ["connect"] + [c for c in CHECKS if c in args.check and c != "connect"]
    passed = failed = 0
    for cli in args.cli:
        suite = None
        try:
            suite = Suite(cli, args.tuicd)
        except Exception as e:  # noqa: BLE001 - report and go on with the next agent
            print(f"FAIL {cli} bed: {e}", flush=True)
            failed += 1
            continue
        try:
            for name in checks:
                try:
                    detail = getattr(suite, name)()
                    print(f"ok {cli} {name}" + (f": {detail}" if detail else ""), flush=True)
                    passed += 1
                except Exception as e:  # noqa: BLE001 - every failure is reported, the next check runs
                    print(f"FAIL {cli} {name}: {type(e).__name__}: {e}", flush=True)
                    if not isinstance(e, Failed):
                        traceback.print_exc(limit=3)
                    failed += 1
                    if name == "connect":
                        break
        finally:
            suite.close()
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
