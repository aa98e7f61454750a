"""Python MCP SDK 1.x client (the classic ClientSession API).
Usage: client_v1.py http URL USER PASSWORD | stdio COMMAND..."""

import asyncio
import sys

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

import scenario


async def drive(read, write, label):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.serverInfo.name == "tuicd", init.serverInfo
        assert init.capabilities.tools.listChanged is True, init.capabilities
        await scenario.run_on(session, label)
    print(f"ok: {label}")


async def main(argv):
    kind = argv[0]
    label = f"mcp 1.x over {kind}"
    if kind == "http":
        url, user, password = argv[1:4]
        async with streamablehttp_client(url, auth=httpx.BasicAuth(user, password)) as (read, write, _):
            await drive(read, write, label)
    else:
        async with stdio_client(StdioServerParameters(command=argv[1], args=argv[2:])) as (read, write):
            await drive(read, write, label)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
