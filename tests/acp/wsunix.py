"""A WebSocket client and an SSE reader over tuicd's Unix socket (Python 3.11 stdlib only).

    ws = WebSocket.connect(socket_path, "/acp/connections/acp-1/stream?after=12")
    frame = ws.recv_json(timeout=5)      # one text frame, parsed; None at a close frame
    ws.close()

A refused upgrade raises `Refused(status, body)` (tuicd answers 404 / 400 before the upgrade).
`Events(socket_path, types="acp-notice")` follows GET /events in a thread; `wait(pred, timeout)`
returns the first event (name, data) matching.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import socket
import struct
import threading
import time


class Refused(Exception):
    def __init__(self, status: int, body: bytes):
        super().__init__(f"upgrade refused: {status} {body[:300]!r}")
        self.status = status
        self.body = body


class Closed(Exception):
    pass


def _read_head(sock: socket.socket) -> tuple[int, dict, bytes]:
    """Reads an HTTP response head; returns (status, headers, bytes read past the head)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise Closed(f"the socket closed inside the response head: {data[:200]!r}")
        data += chunk
        if len(data) > 65536:
            raise Closed("response head over 64 KiB")
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


class WebSocket:
    def __init__(self, sock: socket.socket, buffered: bytes):
        self.sock = sock
        self.buf = buffered
        self.closed = False

    @classmethod
    def connect(cls, socket_path: str, path: str, timeout: float = 10.0, headers: dict | None = None) -> "WebSocket":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(socket_path)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n").encode())
        status, hdrs, rest = _read_head(sock)
        if status != 101:
            body = rest
            length = int(hdrs.get("content-length") or 0)
            sock.settimeout(2)
            try:
                while len(body) < length:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    body += chunk
            except OSError:
                pass
            sock.close()
            raise Refused(status, body)
        return cls(sock, rest)

    def _need(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("the server closed the socket")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send(self, opcode: int, payload: bytes = b"") -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def recv(self, timeout: float) -> str | None:
        """The next text message; None at a close frame. socket.timeout at the deadline."""
        self.sock.settimeout(timeout)
        parts: list[bytes] = []
        while True:
            b0, b1 = self._need(2)
            opcode, fin = b0 & 0x0F, b0 & 0x80
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._need(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._need(8))[0]
            mask = self._need(4) if b1 & 0x80 else None
            payload = self._need(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                self.closed = True
                return None
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            parts.append(payload)
            if fin:
                return b"".join(parts).decode()

    def recv_json(self, timeout: float) -> dict | None:
        text = self.recv(timeout)
        return None if text is None else json.loads(text)

    def close(self) -> None:
        if not self.closed:
            try:
                self._send(0x8, struct.pack("!H", 1000))
            except OSError:
                pass
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


class Events:
    """GET /events on the Unix socket, read in a thread into a queue of (event name, data)."""

    def __init__(self, socket_path: str, types: str | None = None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(socket_path)
        query = f"?types={types}" if types else ""
        self.sock.sendall(f"GET /events{query} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n".encode())
        status, headers, rest = _read_head(self.sock)
        if status != 200:
            raise Refused(status, rest)
        self.chunked = "chunked" in headers.get("transfer-encoding", "")
        self.raw = rest
        self.events: queue.Queue = queue.Queue()
        self.seen: list[tuple[str, dict]] = []
        self.stopped = False
        self.sock.settimeout(None)
        threading.Thread(target=self._run, daemon=True).start()

    def _bytes(self):
        """The body bytes (de-chunked), as they come."""
        buf = self.raw
        while not self.stopped:
            if not self.chunked:
                if buf:
                    yield buf
                    buf = b""
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
                continue
            while b"\r\n" not in buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            size_line, buf = buf.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                return
            while len(buf) < size + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            yield buf[:size]
            buf = buf[size + 2:]

    def _run(self):
        text = ""
        try:
            for data in self._bytes():
                text += data.decode()
                while "\n\n" in text:
                    block, text = text.split("\n\n", 1)
                    name, lines = "message", []
                    for line in block.split("\n"):
                        if line.startswith("event:"):
                            name = line[6:].strip()
                        elif line.startswith("data:"):
                            lines.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
                    if not lines:
                        continue
                    try:
                        value = json.loads("\n".join(lines))
                    except ValueError:
                        value = {"raw": "\n".join(lines)}
                    self.events.put((name, value))
        except OSError:
            pass

    def wait(self, predicate, timeout: float, what: str = "an event"):
        """The first (name, data) for which predicate(name, data) holds, among those seen or
        arriving before the deadline."""
        for name, data in self.seen:
            if predicate(name, data):
                return name, data
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what} on /events "
                                   f"(saw {[d for _, d in self.seen][-5:]})")
            try:
                name, data = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append((name, data))
            if predicate(name, data):
                return name, data

    def close(self):
        self.stopped = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
