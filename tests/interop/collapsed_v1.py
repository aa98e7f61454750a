"""Lazy tool discovery with the Python MCP SDK 1.x client: with `collapse_tools` on, and for a
`grok-shell-` client with it off, the client sees only the meta tools and finds and calls
`session action=list` through search_tools -> get_tool_schema -> call_tool.
Usage: collapsed_v1.py URL USER PASSWORD"""

import asyncio
import sys

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.types import Implementation

import scenario

META = ["search_tools", "get_tool_schema", "call_tool", "progress"]


async def discover_and_list(url, auth, client_name, label):
    async with streamablehttp_client(url, auth=auth) as (read, write, _):
        info = Implementation(name=client_name, version="1")
        async with ClientSession(read, write, client_info=info) as session:
            init = await session.initialize()
            assert "search_tools" in (init.instructions or ""), f"{label}: no lazy guide: {init.instructions}"
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == META, f"{label}: tools/list: {names}"

            err, found = scenario.decode(await session.call_tool("search_tools", {"query": "list the open terminals"}))
            assert not err, f"{label}: search: {found}"
            best = found["results"][0]
            assert best["name"] == "session" and best["actions"][0] == "list", f"{label}: search: {found}"

            err, schema = scenario.decode(await session.call_tool("get_tool_schema", {"tool_name": best["name"]}))
            assert not err, f"{label}: schema: {schema}"
            actions = schema["inputSchema"]["properties"]["action"]["enum"]
            assert "list" in actions, f"{label}: schema: {schema}"

            args = {"tool_name": best["name"], "arguments": {"action": best["actions"][0]}}
            err, listed = scenario.decode(await session.call_tool("call_tool", args))
            assert not err and isinstance(listed, list), f"{label}: call_tool: {listed}"

            err, refused = scenario.decode(await session.call_tool("call_tool", {"tool_name": "call_tool"}))
            assert err and "meta tool" in refused["error"], f"{label}: recursion: {refused}"
    print(f"ok: {label}")


async def main(argv):
    url, user, password = argv[:3]
    auth = httpx.BasicAuth(user, password)
    config_url = url.rsplit("/mcp", 1)[0] + "/config"
    async with httpx.AsyncClient(auth=auth, timeout=10) as http:
        (await http.put(config_url, json={"collapse_tools": True})).raise_for_status()
        try:
            await discover_and_list(url, auth, "interop-client", "mcp 1.x, collapse_tools on")
        finally:
            (await http.put(config_url, json={"collapse_tools": False})).raise_for_status()
    await discover_and_list(url, auth, "grok-shell-interop", "mcp 1.x, a grok-shell- client")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
