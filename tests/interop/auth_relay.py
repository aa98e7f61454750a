"""A loopback HTTP relay that adds Basic credentials to every request, so that the MCP
conformance suite (which cannot send credentials) reaches tuicd's authenticated TCP listener as
any configured client would. Request heads are rewritten one by one (keep-alive safe, bodies by
Content-Length); responses, SSE included, are piped through untouched.
Usage: auth_relay.py LISTEN_PORT TARGET_PORT USER PASSWORD"""

import asyncio
import base64
import sys

listen_port, target_port, user, password = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
AUTH = b"Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()) + b"\r\n"


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def requests(client, upstream):
    try:
        while True:
            head = await client.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            length = 0
            for line in lines[1:]:
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            upstream.write(lines[0] + b"\r\n" + AUTH + b"\r\n".join(lines[1:]))
            if length:
                upstream.write(await client.readexactly(length))
            await upstream.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        upstream.close()


async def handle(client_reader, client_writer):
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(requests(client_reader, up_writer), pipe(up_reader, client_writer))


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    print("relay ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
