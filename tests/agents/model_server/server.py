"""A scripted model server for the real agent CLIs, on loopback.

    python3 -m model_server.server --port-file PORTFILE --log requests.jsonl

(run from tests/agents/). One server speaks every wire protocol the CLIs use, each in its own
module, chosen by the request path:

    POST /v1/messages                          Anthropic Messages (anthropic.py)
    POST /v1/responses                         OpenAI Responses (responses.py)
    POST /v1/chat/completions                  OpenAI Chat Completions (chat.py)
    POST /v1beta/models/M:streamGenerateContent  Gemini (gemini.py), also :generateContent

What each answers is decided by script.decide from directives in the prompt (see script.py).
Every request is appended to the log as one JSON line (script.Request.log_record) before it is
answered, and an `{"event": "answered"}` line once the answer was sent, so a test reads exactly
what reached the model and when the model's side of a turn ended; its `first_byte` is the
time.time() at which the answer's head went out (after the scripted delay; the first text chunk
follows it at once), the model's clock for latency benchmarks. Request records have no
`event` key. Control:

    GET  /_log      the log so far, as a JSON array
    POST /_reset    empties the log
    GET  /_health   {"ok": true}

Anything else answers 404 with the path, and is logged with protocol "unknown", so a CLI that
calls an endpoint nobody scripted shows up in the log instead of hanging.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import anthropic, chat, gemini, responses

PROTOCOLS = [anthropic, responses, chat, gemini]


class Log:
    def __init__(self, path: str | None):
        self.path = path
        self.records: list[dict] = []
        self.lock = threading.Lock()

    def add(self, record: dict) -> None:
        with self.lock:
            self.records.append(record)
            if self.path:
                with open(self.path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def all(self) -> list[dict]:
        with self.lock:
            return list(self.records)

    def reset(self) -> None:
        with self.lock:
            self.records.clear()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log: Log

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("content-encoding") == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        elif self.headers.get("content-encoding") == "zstd":
            raise ValueError("zstd request bodies are not supported")
        return raw

    first_byte: float | None = None

    def send_json(self, status: int, value) -> None:
        data = json.dumps(value).encode()
        if self.first_byte is None:
            self.first_byte = time.time()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self, content_type: str = "text/event-stream") -> None:
        if self.first_byte is None:
            self.first_byte = time.time()
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event: str | None = None) -> None:
        """One SSE event; `data` is JSON-encoded unless it is already a string."""
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
        self.wfile.write(frame.encode())
        self.wfile.flush()

    def do_GET(self):  # noqa: N802 - the base class's name
        if self.path == "/_log":
            return self.send_json(200, self.log.all())
        if self.path == "/_health":
            return self.send_json(200, {"ok": True})
        for module in PROTOCOLS:
            if hasattr(module, "get") and module.matches(self.path):
                return module.get(self)
        self.unknown()

    def do_POST(self):  # noqa: N802 - the base class's name
        if self.path == "/_reset":
            self.body()
            self.log.reset()
            return self.send_json(200, {"ok": True})
        for module in PROTOCOLS:
            if module.matches(self.path):
                try:
                    body = json.loads(self.body() or b"{}")
                except ValueError as e:
                    return self.send_json(400, {"error": f"bad request body: {e}"})
                request = module.parse(self.path, body)
                record = request.log_record()
                self.log.add(record)
                self.first_byte = None
                try:
                    module.answer(self, request, body)
                except (BrokenPipeError, ConnectionResetError):
                    # The client dropped the answer (a cancelled turn): nothing to send it to.
                    self.close_connection = True
                finally:
                    # The model's side of the turn is over: recordings label what the CLI shows
                    # after this as the end of the model's work.
                    self.log.add({"protocol": request.protocol, "event": "answered", "main": record["main"],
                                  "prompt": request.prompt, "time": time.time(),
                                  "first_byte": self.first_byte})
                return
        self.unknown()

    def unknown(self) -> None:
        self.log.add({"protocol": "unknown", "method": self.command, "path": self.path, "time": time.time()})
        self.send_json(404, {"error": {"message": f"the scripted model server has no {self.command} {self.path}"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--log", help="append each request here as a JSON line")
    args = parser.parse_args()
    Handler.log = Log(args.log)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as out:
            out.write(str(server.server_address[1]))
        os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
