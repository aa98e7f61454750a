#!/usr/bin/env python3
"""Protected Streamable HTTP MCP upstreams behind a small OAuth 2.1 authorization server, for the
/mobile test (standard library only, loopback only).

One server per kind of upstream, at /mcp/<kind>:
  plain    its authorization server on the same origin (127.0.0.1:PORT)
  offsite  its authorization server on another host (127.0.0.2:PORT2): tuicd flags cross_domain_as
  evil     its authorization server's metadata names a javascript: authorization endpoint

RFC 9728 resource metadata (named in the 401 challenge), RFC 8414 metadata, an authorize endpoint
that approves at once (the scripted browser step: following the link redirects to tuicd's callback)
and a token endpoint that checks PKCE S256. Clients are pre-registered (any client_id is taken).
POST /control/revoke forgets every token: the next MCP request is answered 401.

Prints {"port": PORT, "port2": PORT2} on one line once listening; ends when stdin closes.
"""

import base64
import hashlib
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

lock = threading.Lock()
codes = {}  # code -> (kind, code_challenge, redirect_uri)
tokens = {}  # access token -> kind
origins = {}  # "main" / "other" -> "http://host:port"


def issuer(kind):
    host = origins["other"] if kind == "offsite" else origins["main"]
    return f"{host}/as/{kind}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def do_GET(self):
        url = urlsplit(self.path)
        path = url.path
        if path.startswith("/.well-known/oauth-protected-resource/mcp/"):
            kind = path.rsplit("/", 1)[1]
            return self.answer(200, {"resource": f"{origins['main']}/mcp/{kind}",
                                     "authorization_servers": [issuer(kind)]})
        if path.startswith("/.well-known/oauth-authorization-server/as/"):
            kind = path.rsplit("/", 1)[1]
            base = issuer(kind)
            authorize = "javascript:alert(document.domain)//" if kind == "evil" else f"{base}/authorize"
            return self.answer(200, {"issuer": base, "authorization_endpoint": authorize,
                                     "token_endpoint": f"{base}/token", "response_types_supported": ["code"],
                                     "code_challenge_methods_supported": ["S256"],
                                     "token_endpoint_auth_methods_supported": ["none"]})
        if path.startswith("/as/") and path.endswith("/authorize"):
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            code = secrets.token_urlsafe(16)
            with lock:
                codes[code] = (path.split("/")[2], query["code_challenge"], query["redirect_uri"])
            location = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query["state"]})
            return self.answer(302, headers=[("location", location)])
        # The MCP servers open no GET stream.
        self.answer(405 if path.startswith("/mcp/") else 404)

    def do_DELETE(self):
        self.answer(200)

    def do_POST(self):
        path = urlsplit(self.path).path
        body = self.body()
        if path.startswith("/as/") and path.endswith("/token"):
            return self.token(parse_qs(body.decode()))
        if path == "/control/revoke":
            with lock:
                tokens.clear()
            return self.answer(200, {"ok": True})
        if path.startswith("/mcp/"):
            return self.mcp(path.rsplit("/", 1)[1], json.loads(body))
        self.answer(404)

    def token(self, form):
        form = {k: v[0] for k, v in form.items()}
        with lock:
            grant = codes.pop(form.get("code", ""), None)
        if grant is None or form.get("grant_type") != "authorization_code":
            return self.answer(400, {"error": "invalid_grant"})
        kind, challenge, redirect_uri = grant
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != challenge or form.get("redirect_uri") != redirect_uri:
            return self.answer(400, {"error": "invalid_grant", "error_description": "PKCE or redirect_uri mismatch"})
        access = secrets.token_urlsafe(24)
        with lock:
            tokens[access] = kind
        self.answer(200, {"access_token": access, "token_type": "Bearer", "expires_in": 3600})

    def mcp(self, kind, message):
        bearer = self.headers.get("authorization", "").removeprefix("Bearer ")
        with lock:
            valid = tokens.get(bearer) == kind
        if not valid:
            metadata = f"{origins['main']}/.well-known/oauth-protected-resource/mcp/{kind}"
            return self.answer(401, {"error": "invalid_token"},
                               [("www-authenticate", f'Bearer resource_metadata="{metadata}"')])
        if "id" not in message:
            return self.answer(202)
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": f"mobile-{kind}", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "hello", "description": "says hello",
                                 "inputSchema": {"type": "object", "properties": {}}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": f"hello from {kind}"}]}
        elif method == "ping":
            result = {}
        else:
            return self.answer(200, {"jsonrpc": "2.0", "id": message["id"],
                                     "error": {"code": -32601, "message": f"no method {method}"}})
        self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


def main():
    servers = {"main": ThreadingHTTPServer(("127.0.0.1", 0), Handler),
               "other": ThreadingHTTPServer(("127.0.0.2", 0), Handler)}
    for key, server in servers.items():
        host, port = server.server_address
        origins[key] = f"http://{host}:{port}"
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": servers["main"].server_address[1], "port2": servers["other"].server_address[1]}),
          flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
