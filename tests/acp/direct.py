"""A minimal ACP client over stdio, straight to a real ACP agent (no tuicd in between).

    python3 tests/acp/direct.py CLI [--quiet] [--keep]      CLI: claude | codex | gemini

Starts the scripted model server (tests/agents/model_server) in a temp bed, writes the agent's
config the way `tests/agents/bed.py launch-acp` does, launches it and runs:
initialize -> session/new -> session/prompt "[[reply=hello from the model]] hi" -> a second
prompt f"[[shell={SHELL}]]" that must raise session/request_permission (answered with the allow
option) -> session/load of the session (when loadSession is advertised, on a second launch).
Prints every frame (one line each, `<` from the agent, `>` to it) and a summary JSON of the facts
(capabilities, update kinds, permission flow). Exits 1 when a step failed.

`AcpClient` is also what tests/acp/bench.py measures the direct path with. Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENTS = HERE.parent / "agents"
sys.path.insert(0, str(AGENTS))

import bed  # noqa: E402
from tuic import BED_ROOT, ModelServer, make_repo  # noqa: E402

# The CI markers a person's desk does not have (see tuic.Tuicd): the agent runs without them.
CI_MARKERS = {"CI", "GITHUB_ACTIONS", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID"}

REPLY = "hello from the model"
# A command every agent asks about (Claude Code runs a bare `echo` without asking: read-only);
# its trace is the file, read after the turn.
SHELL = "echo hi > marker.txt"
# Agents whose session/load loses the history (see FACTS.md): reported, not failed.
LOAD_BROKEN = {"gemini": "Gemini CLI 0.61.0 re-initialises the session file before reading it"}


def launch_env(extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TUIC_") and k not in CI_MARKERS and not k.startswith("CI_")}
    return env | extra


class AcpError(Exception):
    pass


class AcpClient:
    """One agent child speaking ACP (newline-delimited JSON-RPC) on its stdin/stdout.

    Every frame is kept in `frames` as (direction, time.time() at read/write, message). Requests
    from the agent are answered by `on_request(message) -> result | None` (None: method not
    found); session/request_permission is answered with an allow option unless `on_request`
    says otherwise."""

    def __init__(self, argv: list[str], env: dict, cwd: Path, stderr_path: Path | None = None, echo=None):
        self.echo = echo
        self.stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=str(cwd),
            start_new_session=True,
        )
        self.frames: list[tuple[str, float, dict]] = []
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.lock = threading.Lock()
        self.invalid: list[bytes] = []
        self.permission_choice = "allow"  # "allow" | "reject" | "cancel" | "hold"
        self.held: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            now = time.time()
            try:
                message = json.loads(line)
            except ValueError:
                self.invalid.append(line[:200])
                continue
            with self.lock:
                self.frames.append(("<", now, message))
            if self.echo:
                self.echo("<", message)
            if "method" in message and "id" in message:
                self._answer_request(message)
            self.inbox.put((now, message))
        self.inbox.put((time.time(), None))

    def send(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        with self.lock:
            self.frames.append((">", time.time(), message))
            self.process.stdin.write(data)
            self.process.stdin.flush()
        if self.echo:
            self.echo(">", message)

    def request(self, method: str, params: dict) -> int:
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _answer_request(self, message: dict) -> None:
        method = message["method"]
        if method == "session/request_permission":
            if self.permission_choice == "hold":
                self.held.append(message)
                return
            self.answer_permission(message, self.permission_choice)
            return
        self.send({"jsonrpc": "2.0", "id": message["id"],
                   "error": {"code": -32601, "message": f"method not found: {method}"}})

    def answer_permission(self, message: dict, choice: str) -> None:
        options = message["params"].get("options") or []
        if choice == "cancel":
            outcome = {"outcome": "cancelled"}
        else:
            kinds = ["allow_once", "allow_always"] if choice == "allow" else ["reject_once", "reject_always"]
            option = next((o for k in kinds for o in options if o.get("kind") == k), None)
            if option is None:
                raise AcpError(f"no {choice} option in {options}")
            outcome = {"outcome": "selected", "optionId": option["optionId"]}
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

    def wait(self, rid: int, timeout: float, on_message=None) -> dict:
        """Waits for the response to request `rid`; calls on_message(time, message) for every
        other frame from the agent meanwhile. Returns the response's result; raises AcpError on a
        JSON-RPC error, TimeoutError at the deadline, EOFError when the agent exited."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no response to request {rid} within {timeout:.0f} s")
            try:
                at, message = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise EOFError(f"the agent exited (code {self.process.poll()}) before answering request {rid}")
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise AcpError(json.dumps(message["error"])[:500])
                return message.get("result") or {}
            if on_message:
                on_message(at, message)

    def initialize(self, timeout: float = 60) -> dict:
        rid = self.request("initialize", {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
            "clientInfo": {"name": "tuic-acp-direct", "version": "0"},
        })
        return self.wait(rid, timeout)

    def close(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.process.pid, 9)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=10)
        if self.stderr is not subprocess.DEVNULL:
            self.stderr.close()


def update_kind(message: dict) -> str | None:
    if message.get("method") != "session/update":
        return None
    return (message.get("params") or {}).get("update", {}).get("sessionUpdate")


def chunk_text(message: dict) -> str | None:
    """The text of an agent_message_chunk session/update, else None."""
    if update_kind(message) != "agent_message_chunk":
        return None
    content = message["params"]["update"].get("content") or {}
    return content.get("text", "") if content.get("type") == "text" else ""


class DirectBed:
    """A temp dir holding a model server and a git repository; launches the agent directly."""

    def __init__(self, cli: str):
        BED_ROOT.mkdir(parents=True, exist_ok=True)
        self.cli = cli
        self.root = Path(tempfile.mkdtemp(prefix="acp-", dir=BED_ROOT))
        self.model = ModelServer(self.root)
        self.repo = make_repo(self.root / "repo")
        self.spec = bed.launch_acp(cli, self.model.url, self.root / f"home-{cli}", self.repo)
        self.launches = 0

    def client(self, echo=None) -> AcpClient:
        self.launches += 1
        return AcpClient(self.spec["argv"], launch_env(self.spec["env"]), self.repo,
                         self.root / f"agent-{self.launches}.stderr", echo)

    def close(self, keep: bool = False):
        self.model.stop()
        if not keep and not os.environ.get("TUIC_AGENTS_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)


def short(message: dict, limit: int = 300) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def run(cli: str, quiet: bool, keep: bool) -> tuple[dict, list[str]]:
    facts: dict = {"cli": cli}
    failures: list[str] = []
    echo = None if quiet else (lambda d, m: print(d, short(m), flush=True))
    b = DirectBed(cli)
    facts["argv"] = b.spec["argv"]
    client = b.client(echo)
    kinds: list[str] = []
    agent_requests: list[str] = []

    def seen(_at, message):
        kind = update_kind(message)
        if kind and kind not in kinds:
            kinds.append(kind)
        if "method" in message and "id" in message:
            agent_requests.append(message["method"])

    try:
        init = client.initialize()
        caps = init.get("agentCapabilities") or {}
        facts["agentInfo"] = init.get("agentInfo")
        facts["protocolVersion"] = init.get("protocolVersion")
        facts["loadSession"] = caps.get("loadSession", False)
        facts["sessionCapabilities"] = caps.get("sessionCapabilities")
        facts["promptCapabilities"] = caps.get("promptCapabilities")
        facts["mcpCapabilities"] = caps.get("mcpCapabilities")
        facts["authMethods"] = [m.get("id") for m in init.get("authMethods") or []]
        started = time.monotonic()
        new = client.wait(client.request("session/new", {"cwd": str(b.repo), "mcpServers": []}), 120, seen)
        facts["session_new_s"] = round(time.monotonic() - started, 2)
        sid = new["sessionId"]
        facts["session_new_keys"] = sorted(new)
        facts["modes"] = [m.get("id") for m in (new.get("modes") or {}).get("availableModes") or []]
        facts["current_mode"] = (new.get("modes") or {}).get("currentModeId")

        # 1. a plain reply, streamed as agent_message_chunk
        texts: list[str] = []

        def collect(at, message):
            seen(at, message)
            text = chunk_text(message)
            if text is not None and message["params"].get("sessionId") == sid:
                texts.append(text)

        prompt = f"[[reply={REPLY}]] hi"
        result = client.wait(client.request("session/prompt", {
            "sessionId": sid, "prompt": [{"type": "text", "text": prompt}]}), 120, collect)
        facts["reply_stop_reason"] = result.get("stopReason")
        facts["reply_text"] = "".join(texts)
        facts["reply_chunks"] = len(texts)
        if "".join(texts) != REPLY:
            failures.append(f"reply: streamed {''.join(texts)!r}, want {REPLY!r}")
        if result.get("stopReason") != "end_turn":
            failures.append(f"reply: stopReason {result.get('stopReason')!r}")
        if not any(r.get("prompt", "").find("hello from the model") >= 0 for r in b.model.requests()):
            failures.append("reply: the prompt never reached the model")

        # 2. a shell tool call: session/request_permission, answered with allow
        before = len(agent_requests)
        texts.clear()
        result = client.wait(client.request("session/prompt", {
            "sessionId": sid, "prompt": [{"type": "text", "text": f"[[shell={SHELL}]] [[after=The command ran.]] run it"}]}),
            120, collect)
        asked = [m for m in agent_requests[before:]]
        facts["shell_agent_requests"] = asked
        facts["permission_requested"] = "session/request_permission" in asked
        facts["shell_stop_reason"] = result.get("stopReason")
        facts["shell_after_text"] = "".join(texts)
        perms = [m for d, _, m in client.frames if d == "<" and m.get("method") == "session/request_permission"]
        if perms:
            facts["permission_options"] = [(o.get("optionId"), o.get("kind")) for o in perms[-1]["params"].get("options", [])]
            facts["permission_tool_call_keys"] = sorted(perms[-1]["params"].get("toolCall") or {})
        results = [r for r in b.model.requests() if r.get("last_is_tool_result")]
        facts["tool_result_reached_model"] = [r.get("tool_result_text", "")[:120] for r in results]
        marker = b.repo / "marker.txt"
        facts["tool_ran"] = marker.exists() and marker.read_text().strip() == "hi"
        if not facts["permission_requested"]:
            failures.append("shell: no session/request_permission")
        if not facts["tool_ran"]:
            failures.append("shell: the command did not run (no marker.txt with hi)")
        if not results:
            failures.append("shell: no tool result reached the model")
        if result.get("stopReason") != "end_turn":
            failures.append(f"shell: stopReason {result.get('stopReason')!r}")
        facts["update_kinds"] = kinds
        facts["other_agent_requests"] = sorted({m for m in agent_requests if m != "session/request_permission"})
        client.close()

        # 3. session/load on a fresh launch (when advertised): the history comes back as updates
        if facts["loadSession"]:
            client = b.client(echo)
            client.initialize()
            replay: list[str] = []
            replay_text: list[str] = []

            def replayed(at, message):
                kind = update_kind(message)
                if kind:
                    replay.append(kind)
                    if kind in ("user_message_chunk", "agent_message_chunk"):
                        content = message["params"]["update"].get("content") or {}
                        replay_text.append(content.get("text", ""))

            try:
                loaded = client.wait(client.request("session/load", {
                    "sessionId": sid, "cwd": str(b.repo), "mcpServers": []}), 120, replayed)
                facts["load_result_keys"] = sorted(loaded)
                facts["load_replayed_kinds"] = sorted(set(replay))
                facts["load_replayed_frames"] = len(replay)
                joined = "".join(replay_text)
                facts["load_replay_has_reply"] = REPLY in joined
                if REPLY not in joined:
                    if cli in LOAD_BROKEN:
                        facts["load_known_fault"] = LOAD_BROKEN[cli]
                    else:
                        failures.append(f"load: the replay does not contain the reply ({len(replay)} updates)")
            except (AcpError, TimeoutError, EOFError) as e:
                facts["load_error"] = str(e)[:300]
                if cli in LOAD_BROKEN and isinstance(e, AcpError):
                    facts["load_known_fault"] = LOAD_BROKEN[cli]
                else:
                    failures.append(f"load: {e}")
            client.close()
    except (AcpError, TimeoutError, EOFError) as e:
        failures.append(f"{type(e).__name__}: {e}")
        client.close()
    finally:
        facts["invalid_lines"] = len(client.invalid)
        facts["bed"] = str(b.root)
        b.close(keep=keep or bool(failures))
    return facts, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli", nargs="+", choices=["claude", "codex", "gemini"])
    parser.add_argument("--quiet", action="store_true", help="no frame echo")
    parser.add_argument("--keep", action="store_true", help="keep the bed dir")
    args = parser.parse_args()
    failed = 0
    for cli in args.cli:
        facts, failures = run(cli, args.quiet, args.keep)
        print(json.dumps({"facts": facts, "failures": failures}, indent=1, ensure_ascii=False), flush=True)
        for f in failures:
            print(f"FAIL {cli}: {f}")
        if not failures:
            print(f"ok {cli}")
        failed += bool(failures)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
