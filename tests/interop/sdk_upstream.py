#!/usr/bin/env python3
"""An upstream MCP server on the Python `mcp` SDK (1.x, FastMCP) whose tools ask the client
through tuicd: sampling, elicitation, roots; log messages held in flight; a slow call.

    python sdk_upstream.py            # stdio
    python sdk_upstream.py http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp

A tool that asks and is refused answers "refused: <the error's message>", so a test reads the
refusal tuicd gave the upstream. Waits on files are polled with a deadline.
"""

import asyncio
import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

DEADLINE = 30.0

port = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "http" else 8000
mcp = FastMCP("sdk-upstream", host="127.0.0.1", port=port, log_level="WARNING")


class Person(BaseModel):
    name: str


async def wait_for_file(path: str) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + DEADLINE
    while not os.path.exists(path):
        if loop.time() > until:
            raise RuntimeError(f"{path} did not appear within {DEADLINE} s")
        await asyncio.sleep(0.02)


@mcp.tool()
async def ask_llm(prompt: str, ctx: Context) -> str:
    """Asks the client's model (sampling/createMessage) and answers what it said."""
    try:
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=32,
            related_request_id=ctx.request_id,
        )
    except McpError as e:
        return f"refused: {e.error.message}"
    return f"model={result.model} text={result.content.text}"


@mcp.tool()
async def ask_user(question: str, ctx: Context) -> str:
    """Asks the client's user (elicitation/create) for a name."""
    try:
        result = await ctx.elicit(message=question, schema=Person)
    except McpError as e:
        return f"refused: {e.error.message}"
    if result.action == "accept":
        return f"accept:{result.data.name}"
    return result.action


@mcp.tool()
async def client_roots(ctx: Context) -> str:
    """Lists the client's roots (roots/list)."""
    try:
        result = await ctx.session.list_roots()
    except McpError as e:
        return f"refused: {e.error.message}"
    return " ".join(str(root.uri) for root in result.roots)


@mcp.tool()
async def ask_later(flag: str, out: str, ctx: Context) -> str:
    """Answers at once; once `flag` exists (after the call), asks for sampling outside any call
    and writes what it was answered to `out`."""
    session = ctx.session

    async def later():
        await wait_for_file(flag)
        try:
            await session.create_message(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text="late"))],
                max_tokens=8,
            )
            text = "answered"
        except McpError as e:
            text = f"refused: {e.error.message}"
        with open(out + ".tmp", "w") as f:
            f.write(text)
        os.rename(out + ".tmp", out)

    asyncio.get_running_loop().create_task(later())
    return "armed"


@mcp.tool()
async def log_and_hold(tag: str, release: str, ctx: Context, started: str = "") -> str:
    """Logs "start <tag>" (then writes `started`, if named), waits until `release` exists, logs
    "end <tag>"."""
    await ctx.info(f"start {tag}")
    if started:
        with open(started, "w") as f:
            f.write("started")
    await wait_for_file(release)
    await ctx.info(f"end {tag}")
    return f"done {tag}"


@mcp.tool()
async def slow(seconds: int, started: str) -> str:
    """Writes `started`, then takes `seconds` to answer."""
    with open(started, "w") as f:
        f.write("started")
    await asyncio.sleep(seconds)
    return f"slept {seconds} s"


if __name__ == "__main__":
    mcp.run("streamable-http" if len(sys.argv) > 1 and sys.argv[1] == "http" else "stdio")
