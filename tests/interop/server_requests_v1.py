#!/usr/bin/env python3
"""Requests an upstream sends its client, through tuicd: a Python `mcp` 1.x client with
sampling, elicitation and roots callbacks calls the tools of `sdk_upstream.py` (an upstream of
the tuicd under test, named UPSTREAM), which ask it back; a second client without those
callbacks gets, through the tool, tuicd's refusal naming the capability it lacks.

    server_requests_v1.py UPSTREAM http SOCKET             # POST /mcp over the Unix socket
    server_requests_v1.py UPSTREAM stdio BRIDGE --socket S  # through tuic-bridge

Prints one line per check; exits non-zero on the first failure. Every wait has a deadline.
"""

import asyncio
import sys

import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

DEADLINE = 60.0
asked = []


async def sampling(context, params: types.CreateMessageRequestParams):
    asked.append("sampling")
    prompt = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"sampled {prompt}"), model="test-model"
    )


async def elicitation(context, params: types.ElicitRequestParams):
    asked.append("elicitation")
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def roots(context):
    asked.append("roots")
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="project")])


def text_of(result) -> str:
    assert not result.isError, f"the call failed: {result}"
    return result.content[0].text


def check(name: str, ok: bool, detail: str) -> None:
    print(("PASS " if ok else "FAIL ") + name + ": " + detail, flush=True)
    if not ok:
        sys.exit(1)


async def session(transport, upstream: str, callbacks: bool) -> None:
    kwargs = {}
    if callbacks:
        kwargs = {"sampling_callback": sampling, "elicitation_callback": elicitation, "list_roots_callback": roots}
    async with transport() as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, **kwargs) as client:
            await client.initialize()
            llm = text_of(await client.call_tool(f"{upstream}__ask_llm", {"prompt": "hello"}))
            user = text_of(await client.call_tool(f"{upstream}__ask_user", {"question": "Your name?"}))
            listed = text_of(await client.call_tool(f"{upstream}__client_roots", {}))
    if callbacks:
        check("sampling", llm == "model=test-model text=sampled hello", llm)
        check("elicitation", user == "accept:Ada", user)
        check("roots", listed == "file:///srv/project", listed)
        check("callbacks", asked == ["sampling", "elicitation", "roots"], str(asked))
        return
    for name, text, capability in [("sampling", llm, "sampling"), ("elicitation", user, "elicitation"),
                                   ("roots", listed, "roots")]:
        ok = text.startswith("refused: ") and f'"{capability}" capability' in text and "did not declare" in text
        check(f"{name}-refused-without-capability", ok, text)


async def main(argv) -> None:
    upstream, mode = argv[1], argv[2]
    if mode == "http":
        socket = argv[3]

        def transport():
            client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=socket),
                                       timeout=httpx.Timeout(DEADLINE))
            return streamable_http_client("http://localhost/mcp", http_client=client)
    else:
        def transport():
            return stdio_client(StdioServerParameters(command=argv[3], args=argv[4:]))
    await asyncio.wait_for(session(transport, upstream, True), DEADLINE)
    asked.clear()
    await asyncio.wait_for(session(transport, upstream, False), DEADLINE)
    check("no-callback-asked", asked == [], str(asked))


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
