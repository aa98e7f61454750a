"""Python MCP SDK 2.x client (default auto mode: probes server/discover, then falls back to
initialize). Usage: client_v2.py [--mode auto|legacy] http URL USER PASSWORD | stdio COMMAND..."""

import asyncio
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import scenario


async def main(argv):
    mode = "auto"
    if argv[:1] == ["--mode"]:
        mode, argv = argv[1], argv[2:]
    kind = argv[0]
    if kind == "http":
        url, user, password = argv[1:4]
        http = httpx2.AsyncClient(auth=httpx2.BasicAuth(user, password), timeout=30)
        server = streamable_http_client(url, http_client=http)
    else:
        server = StdioServerParameters(command=argv[1], args=argv[2:])
    label = f"mcp 2.x {mode} over {kind}"
    async with Client(server, mode=mode) as client:
        assert client.server_info.name == "tuicd", client.server_info
        await scenario.run_on(client, label)
    print(f"ok: {label}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
