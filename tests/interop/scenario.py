"""The scenario every Python client runs against tuicd: list tools, then drive a real PTY with the
`session` tool (create, input, output, wait, status, list, kill) and check a tool error.
`run_on(client, label)` takes any SDK object with `list_tools()` and `call_tool(name, args)`."""

import asyncio
import json
import time


async def run(list_tools, call, label):
    names = await list_tools()
    assert "session" in names, f"{label}: tools/list has no session tool: {names}"
    err, created = await call("session", {"action": "create", "shell": "/bin/sh"})
    assert not err, f"{label}: create failed: {created}"
    sid = created["session_id"]
    err, typed = await call("session", {"action": "input", "session_id": created["alias"],
                                        "input": "echo interop-$((20+22))", "special_key": "enter"})
    assert not err and typed == {"ok": True}, f"{label}: input: {typed}"
    deadline = time.monotonic() + 15
    while True:
        err, out = await call("session", {"action": "output", "session_id": sid})
        assert not err, f"{label}: output: {out}"
        if "interop-42" in out["data"]:
            break
        assert time.monotonic() < deadline, f"{label}: echo never appeared: {out}"
        await asyncio.sleep(0.05)
    err, waited = await call("session", {"action": "wait", "session_id": sid, "until": "idle", "timeout_ms": 10000})
    assert not err and waited["met"] is True, f"{label}: wait idle: {waited}"
    err, status = await call("session", {"action": "status", "session_id": created["tuic_session"]})
    assert not err and status["session_id"] == sid, f"{label}: status: {status}"
    err, listed = await call("session", {"action": "list"})
    assert not err and any(s["session_id"] == sid for s in listed), f"{label}: list: {listed}"
    err, killed = await call("session", {"action": "kill", "session_id": sid})
    assert not err, f"{label}: kill: {killed}"
    err, gone = await call("session", {"action": "wait", "session_id": sid, "until": "exited", "timeout_ms": 10000})
    assert not err and gone["met"] is True, f"{label}: wait exited: {gone}"
    err, bad = await call("session", {"action": "explode"})
    assert err and "Valid actions" in bad["error"], f"{label}: unknown action: {bad}"


async def run_on(client, label):
    """Runs the scenario on any SDK object with `list_tools()` and `call_tool(name, args)`."""

    async def list_tools():
        return [t.name for t in (await client.list_tools()).tools]

    async def call(name, args):
        return decode(await client.call_tool(name, args))

    await run(list_tools, call, label)


def decode(result):
    """(is_error, JSON value of the first text block) from a CallToolResult of either SDK."""
    is_error = getattr(result, "is_error", None)
    if is_error is None:
        is_error = getattr(result, "isError", False)
    return bool(is_error), json.loads(result.content[0].text)
