"""Claude Code channel push: a peer message pushed as `notifications/claude/channel` into a working
Claude Code turn reaches the model's next request, once, and is not typed into the terminal.

    python3 tests/agents/channels.py --tuicd target/debug/tuicd --bridge target/debug/tuic-bridge

Prints `ok <name>` / `FAIL <name>: <reason>` lines, then `N passed, M failed`; exits 1 on a failure.

What Claude Code 2.1.197 needs before it registers a server's channel handler (its gate, read from
the binary's strings, in this order): the SERVER's initialize result declares
`capabilities.experimental["claude/channel"]` (tuicd does; tuic-bridge's offline answer does not);
the provider is first party (no CLAUDE_CODE_USE_BEDROCK/VERTEX/FOUNDRY/...; ANTHROPIC_BASE_URL does
not matter); the GrowthBook flag `tengu_harbor` is on; no managed policy blocks channels; the
server is named by `--dangerously-load-development-channels server:<name>` (tuicd's spawn passes
it). The flag is read from `cachedGrowthBookFeatures` in ~/.claude.json, but only while GrowthBook
is enabled: CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_TELEMETRY, DO_NOT_TRACK and
DISABLE_GROWTHBOOK each turn it off (the flag then reads false: "Channels are not currently
available"). So this bed drops the first two from the claude recipe's environment and writes the
cached flag; the box has no route to api.anthropic.com, so no remote evaluation overrides it.
With the development flag Claude Code shows "WARNING: Loading development channels" at every
launch; confirming it ("I am using this for local development", Enter) is the person's act: the
test writes that Enter, after checking the dialog waits for it (tuicd must not answer it).
Claude Code's "server:tuic · no MCP server configured with that name" notice only means the server
came from --mcp-config rather than a settings scope; it does not block the channel.
Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tuic import Bed, wait_for  # noqa: E402

CLAUDE = HERE / "node_modules" / ".bin" / "claude"
DIALOG = "I am using this for local development"
FIRST = "Say hello before the long task [[delay=300]]"
LONG = "Work on the long task now [[delay=8000]]"
NOTE = "Peer note 5309 pushed by channel"
MESSAGE = f"{NOTE} [[reply=Noted the channel note.]]"
# Environment that turns GrowthBook (and with it the channel flag) off in Claude Code.
GROWTHBOOK_OFF = ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DO_NOT_TRACK", "DISABLE_GROWTHBOOK")


class Failed(Exception):
    pass


def check(condition, reason: str):
    if not condition:
        raise Failed(reason)


def make_bed(tuicd: str, bridge: str) -> Bed:
    """A Bed whose tuicd (and so every agent it spawns) carries the claude recipe's environment
    with GrowthBook on, and whose claude home caches `tengu_harbor: true`."""

    def env(b: Bed) -> dict:
        spec = b.spec("claude")  # writes home-claude/.claude.json; patched below, never rewritten
        out = {k: v for k, v in spec["env"].items() if k not in GROWTHBOOK_OFF}
        out["PATH"] = os.pathsep.join([str(Path(bridge).resolve().parent), os.environ.get("PATH", "")])
        state_path = Path(out["HOME"]) / ".claude.json"
        state = json.loads(state_path.read_text())
        state["cachedGrowthBookFeatures"] = {"tengu_harbor": True}
        state_path.write_text(json.dumps(state, indent=2))
        return out

    # tuicd's own environment must not carry them either (the PTY inherits it).
    saved = {k: os.environ.pop(k) for k in GROWTHBOOK_OFF if k in os.environ}
    try:
        return Bed(tuicd, env=env)
    finally:
        os.environ.update(saved)


def screen(bed: Bed, session: str) -> str:
    return "\n".join(bed.screen(session))


def tail(bed: Bed, session: str, rows: int = 8) -> str:
    lines = [r.rstrip() for r in bed.screen(session) if r.strip()]
    return " | ".join(lines[-rows:])


def brief(state: dict) -> dict:
    keys = ("agent_state", "idle_confirmed", "awaiting_input", "composer_state", "background_work", "turn_epoch")
    return {k: state.get(k) for k in keys if k in state}


def debug_lines(path: Path, pattern: str) -> list[str]:
    try:
        return [line.strip()[25:] for line in path.read_text(errors="replace").splitlines() if re.search(pattern, line)]
    except OSError:
        return []


def check_channel_push(bed: Bed) -> str:
    tuicd, model = bed.tuicd, bed.model
    started = time.monotonic()
    debug = bed.root / "claude-debug.txt"
    error, spawned = tuicd.mcp_call("agent", {"action": "spawn", "agent_type": "claude", "binary_path": str(CLAUDE),
                                              "cwd": str(bed.repo), "prompt": FIRST,
                                              "args": ["--debug-file", str(debug)]})
    check(not error, f"spawn refused: {spawned}")
    session = spawned["session_id"]
    state = lambda: tuicd.request("GET", f"/sessions/{session}")["state"]  # noqa: E731

    # The development-channels warning: it must wait for the person, then the person confirms.
    try:
        wait_for("the development channels warning", lambda: DIALOG in screen(bed, session), 30)
    except TimeoutError:
        gate = debug_lines(debug, r"[Cc]hannel")
        raise Failed(f"no development channels warning within 30 s (channels flag not taken?); Claude Code's "
                     f"channel log: {gate}; screen: {tail(bed, session)}") from None
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        check(DIALOG in screen(bed, session), f"the warning closed without the person: screen {tail(bed, session)}")
        check(not any(r["prompt"] == FIRST for r in model.requests()), "the first prompt ran before the warning was confirmed")
        time.sleep(0.1)
    bed.write(session, "\r")  # the person: "I am using this for local development"

    answer = tuicd.mcp("session", {"action": "wait", "session_id": session, "until": "idle", "timeout_ms": 60000})
    check(answer.get("met"), f"not idle after the first turn: {answer}; screen: {tail(bed, session)}")
    check(sum(r["prompt"] == FIRST for r in model.requests()) == 1, "the first prompt did not reach the model once")

    # Claude Code's own verdict on the channel (its debug log), before anything is pushed.
    try:
        verdict = wait_for("Claude Code's channel verdict for tuic",
                           lambda: debug_lines(debug, r'MCP server "tuic": Channel notifications'), 15)
    except TimeoutError:
        raise Failed(f"Claude Code logged no channel verdict for server tuic; its channel lines: "
                     f"{debug_lines(debug, r'[Cc]hannel')}") from None
    check("registered" in verdict[-1], f"Claude Code did not register tuic's channel: {verdict[-1]!r}")

    error, receipt = tuicd.mcp_call("session", {"action": "submit", "session_id": session, "input": LONG})
    check(not error and receipt.get("submitted") is True, f"the long prompt was not submitted: {receipt}")
    wait_for("the model to get the long prompt", lambda: any(r["prompt"] == LONG for r in model.requests()), 30)
    wait_for("working", lambda: state().get("agent_state") == "working", 10)

    # A peer sends while the turn runs (the model holds its answer for 8 s).
    sender = tuicd.mcp_initialize()
    error, answer = tuicd.mcp_call("agent", {"action": "register", "name": "tester"}, sender)
    check(not error, f"register refused: {answer}")
    error, sent = tuicd.mcp_call("agent", {"action": "send", "to": session, "message": MESSAGE}, sender)
    check(not error and sent.get("accepted"), f"send refused: {sent}")
    still_running = not any(r.get("event") == "answered" and r.get("prompt") == LONG for r in model.log())
    check(still_running, "the long turn was already answered when the message was sent (the test is too slow)")
    if sent.get("delivery_path") != "sse_channel_and_inbox":
        clients = [line.split("client=")[1].split()[0] for line in (bed.root / "tuicd.log").read_text().splitlines()
                   if "MCP initialize" in line and "client=" in line]
        raise Failed(f"tuicd took delivery_path {sent.get('delivery_path')!r}, not sse_channel_and_inbox, though "
                     f"Claude Code registered the channel ({verdict[-1]!r}); tuicd pushes only to a client that "
                     f"declared capabilities.experimental[\"claude/channel\"] at initialize, and the clients that "
                     f"initialized were {clients} (Claude Code 2.1.197 declares only roots and elicitation)")

    # The model's next main request after the long prompt carries the message, in a channel tag.
    def after_long() -> list[dict]:
        requests = model.requests()
        index = next(i for i, r in enumerate(requests) if r["prompt"] == LONG)
        return requests[index + 1:]

    try:
        wait_for("the model's next main request", lambda: after_long(), 30)
    except TimeoutError:
        raise Failed(f"no main request followed the long prompt within 30 s; state {brief(state())}; "
                     f"screen: {tail(bed, session)}") from None
    following = after_long()[0]
    check(NOTE in following["prompt"],
          f"the next main request does not carry the message: prompt {following['prompt'][:200]!r}")
    check(re.search(r'<channel source="tuic"[^>]*>\s*Message from tester: ' + re.escape(NOTE), following["prompt"]),
          f"the message did not come as tuic's channel: {following['prompt'][:300]!r}")

    # Exactly once: not also typed into the terminal once the agent is idle.
    answer = tuicd.mcp("session", {"action": "wait", "session_id": session, "until": "idle", "timeout_ms": 60000})
    check(answer.get("met"), f"not idle after the channel turn: {answer}; screen: {tail(bed, session)}")
    # A push tuicd did not see shown would be typed after its 5 s echo wait: give that its time.
    try:
        wait_for("the message typed into the terminal too", lambda: "[TUIC message from" in screen(bed, session), 8)
    except TimeoutError:
        pass
    answer = tuicd.mcp("session", {"action": "wait", "session_id": session, "until": "idle", "timeout_ms": 60000})
    check(answer.get("met"), f"not idle at the end: {answer}; screen: {tail(bed, session)}")
    carrying = [r["prompt"][:80] for r in model.requests() if NOTE in r["prompt"]]
    check(len(carrying) == 1, f"the message reached the model {len(carrying)} times: {carrying}")
    check("[TUIC message from" not in screen(bed, session),
          f"the message was also typed into the terminal: {tail(bed, session)}")
    return (f"pushed into the running turn, reached the model's next request once "
            f"({time.monotonic() - started:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--bridge", required=True)
    args = parser.parse_args()
    passed = failed = 0
    started = time.monotonic()
    bed = make_bed(str(Path(args.tuicd).resolve()), args.bridge)
    try:
        value = check_channel_push(bed)
        passed += 1
        print(f"ok claude channel push: {value}", flush=True)
    except (Failed, TimeoutError) as e:
        failed += 1
        print(f"FAIL claude channel push: {e}", flush=True)
    except Exception as e:  # a broken check is a failure too, with where it broke
        failed += 1
        where = traceback.extract_tb(e.__traceback__)[-1]
        print(f"FAIL claude channel push: {type(e).__name__}: {e} (channels.py:{where.lineno})", flush=True)
    finally:
        bed.close()
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
