"""Codex spawned by tuicd calls tuicd's `session` tool through tuic-bridge.

    python3 tests/agents/codex_mcp.py --tuicd target/debug/tuicd --bridge target/debug/tuic-bridge

Prints `ok <name>: <detail>` or `FAIL <name>: <reason>`, then `N passed, M failed`; exits 1 on a
failure. One Bed whose tuicd carries Codex's launch environment (bed.py's recipe, with the bridge's
directory first on PATH), as run.py's run_spawn sets it up: MCP `agent action=spawn` (agent_type
codex; tuicd adds `-c mcp_servers.tuic.*` and --dangerously-bypass-approvals-and-sandbox), wait
until=idle for the first turn, then `session action=submit` of a [[tool=tuic__session ...]] prompt.
Codex 0.171 with gpt-5.5 lists MCP tools only behind `tool_search`, so the scripted model
(model_server/responses.py) searches first and then calls `session` in namespace mcp__tuic. The
truth is the model server's log: a tool result holding the session list reached the model.
Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tuic import Bed, wait_for  # noqa: E402

CODEX = HERE / "node_modules" / ".bin" / "codex"
FIRST = "Say hello to the team [[delay=800]]"
TOOL_PROMPT = '[[tool=tuic__session {"action":"list"}]] [[after=Listed.]]'


def _tail(bed: Bed, session: str, rows: int = 6) -> str:
    lines = [r.rstrip() for r in bed.screen(session) if r.strip()]
    return " | ".join(lines[-rows:])


def _exited(bed: Bed, session: str, spawned: dict) -> None:
    info = bed.tuicd.request("GET", f"/sessions/{session}")
    if info.get("exited"):
        raise RuntimeError(f"the spawned codex exited (code {info.get('exit_code')}); launch_warning "
                           f"{spawned.get('launch_warning')!r}; its last words: {_tail(bed, session, 4)}")


def _wait_idle(bed: Bed, session: str, what: str) -> dict:
    answer = bed.tuicd.mcp("session", {"action": "wait", "session_id": session, "until": "idle", "timeout_ms": 90000})
    if not answer.get("met"):
        raise RuntimeError(f"{what}: wait until=idle did not return met: {answer}; screen: {_tail(bed, session)}")
    return answer


def _prompts(bed: Bed, text: str) -> int:
    return sum(1 for r in bed.model.requests() if r["prompt"] == text)


def _check(bed: Bed) -> str:
    error, spawned = bed.tuicd.mcp_call("agent", {"action": "spawn", "agent_type": "codex", "binary_path": str(CODEX),
                                                  "cwd": str(bed.repo), "prompt": FIRST})
    if error:
        raise RuntimeError(f"spawn refused: {spawned}")
    session = spawned["session_id"]
    _wait_idle(bed, session, "first turn")
    _exited(bed, session, spawned)
    if _prompts(bed, FIRST) != 1:
        raise RuntimeError(f"wait until=idle returned but the model got the first prompt {_prompts(bed, FIRST)} "
                           f"times; screen: {_tail(bed, session)}")
    error, receipt = bed.tuicd.mcp_call("session", {"action": "submit", "session_id": session, "input": TOOL_PROMPT})
    if error or receipt.get("submitted") is not True:
        raise RuntimeError(f"the tool prompt was not submitted: {receipt}")
    for _ in range(4):
        _wait_idle(bed, session, "tool turn")
        _exited(bed, session, spawned)
        state = bed.state(session)
        if state.get("agent_state") != "awaiting_input":
            break
        # The bypass flag should make this impossible; a person would allow the call once.
        bed.write(session, "y")
        wait_for("the dialog to close", lambda: bed.state(session).get("agent_state") != "awaiting_input", 10)
    requests = bed.model.requests()
    turn = [r for r in requests if r["prompt"] == TOOL_PROMPT]
    summary = [(r["last_is_tool_result"], r["tool_result_text"][:80], r["tool_names_head"][-8:]) for r in turn]
    if not any(name.endswith("tuic__session") for r in turn for name in r["tool_names_head"]):
        raise RuntimeError(f"tool_search never exposed mcp__tuic__session to the model; tool turn requests: {summary}; "
                           f"screen: {_tail(bed, session)}")
    results = [r for r in turn if r["last_is_tool_result"]]
    listed = [r for r in results if session in r["tool_result_text"] and spawned["alias"] in r["tool_result_text"]]
    if not listed:
        raise RuntimeError(f"no tool result holding the session list (session {session}, alias {spawned['alias']}) "
                           f"reached the model; tool turn requests: {summary}; screen: {_tail(bed, session)}")
    text = listed[0]["tool_result_text"]
    if not re.search(r'"is_caller"\s*:\s*true', text):
        raise RuntimeError(f"the session list does not mark the caller's own session (is_caller): {text[:300]}")
    screen = "\n".join(bed.screen(session))
    if "Listed." not in screen:
        raise RuntimeError(f"the turn's closing answer 'Listed.' is not on the screen: {_tail(bed, session)}")
    state = bed.state(session)
    if not (state.get("agent_state") == "idle" and state.get("idle_confirmed")):
        raise RuntimeError(f"not confirmed idle at the end: {state}")
    return f"session list served to the spawned codex through tool_search + mcp__tuic.session ({len(text)} chars)"


def check_codex_mcp(tuicd_binary: str, bridge_binary: str) -> str:
    """Spawns Codex through tuicd's MCP `agent` tool and makes it call `session action=list`;
    returns a one-line detail, raises with the reason on a failure."""
    bridge_dir = str(Path(bridge_binary).resolve().parent)

    def env(bed: Bed) -> dict:
        return bed.spec("codex")["env"] | {"PATH": os.pathsep.join([bridge_dir, os.environ.get("PATH", "")])}

    bed = Bed(str(Path(tuicd_binary).resolve()), env=env)
    try:
        return _check(bed)
    finally:
        bed.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuicd", required=True)
    parser.add_argument("--bridge", required=True)
    args = parser.parse_args()
    name = "codex spawn + MCP session tool (tool_search)"
    passed = failed = 0
    try:
        detail = check_codex_mcp(args.tuicd, args.bridge)
        print(f"ok {name}: {detail}", flush=True)
        passed += 1
    except Exception as e:
        where = traceback.extract_tb(e.__traceback__)[-1]
        print(f"FAIL {name}: {type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})", flush=True)
        failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
