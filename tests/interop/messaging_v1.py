"""Inter-agent messaging with the Python MCP SDK 1.x: an external lead over HTTP (Basic auth) and a
worker whose tuic-bridge runs with $TUIC_SESSION of a real tuicd terminal (auto-bound at
initialize, no register call). They find each other with list_peers, exchange mail, and a blocked
wait is woken by a send.
Usage: messaging_v1.py URL USER PASSWORD BRIDGE --socket SOCKET"""

import asyncio
import os
import sys

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

import scenario


async def agent(session, args):
    err, value = scenario.decode(await session.call_tool("agent", args))
    assert not err, f"agent {args}: {value}"
    return value


async def main(argv):
    url, user, password, bridge = argv[:4]
    async with streamablehttp_client(url, auth=httpx.BasicAuth(user, password)) as (read, write, _):
        async with ClientSession(read, write) as lead:
            await lead.initialize()
            me = await agent(lead, {"action": "register", "name": "lead", "project": "interop"})
            assert me["identity_generated"] is True and me["mail_wake"] == "none", me
            err, term = scenario.decode(await lead.call_tool("session", {"action": "create", "shell": "/bin/sh"}))
            assert not err, term
            env = dict(os.environ, TUIC_SESSION=term["tuic_session"])
            params = StdioServerParameters(command=bridge, args=argv[4:], env=env)
            async with stdio_client(params) as (wread, wwrite):
                async with ClientSession(wread, wwrite) as worker:
                    await worker.initialize()
                    peers = (await agent(worker, {"action": "list_peers"}))["peers"]
                    mine = [p for p in peers if p["tuic_session"] == term["tuic_session"]]
                    assert mine and mine[0]["session_id"] == term["session_id"], peers
                    assert mine[0]["alias"] == term["alias"], peers
                    # The lead addresses the worker by its terminal's alias.
                    sent = await agent(lead, {"action": "send", "to": term["alias"], "message": "task: say hi"})
                    assert sent["accepted"] is True and sent["delivery_path"] == "inbox_only", sent
                    got = await agent(worker, {"action": "inbox"})
                    assert [m["content"] for m in got["messages"]] == ["task: say hi"], got
                    assert got["messages"][0]["from_tuic_session"] == me["tuic_session"], got
                    # A blocked wait is woken by the reply.
                    waiting = asyncio.create_task(agent(lead, {"action": "wait", "timeout_ms": 20000}))
                    for _ in range(200):
                        reply = await agent(worker, {"action": "send", "to": me["tuic_session"], "message": "hi"})
                        if reply["delivery_path"] == "waiter_and_inbox" or waiting.done():
                            break
                        await asyncio.sleep(0.02)
                    woken = await waiting
                    assert woken["met"] is True and "hi" in [m["content"] for m in woken["messages"]], woken
            err, _ = scenario.decode(await lead.call_tool("session", {"action": "kill", "session_id": term["session_id"]}))
            assert not err
    print("ok: messaging with mcp 1.x over HTTP and through tuic-bridge")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
