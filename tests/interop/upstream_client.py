#!/usr/bin/env python3
"""The client under test for `conformance client` scenarios: tuicd's upstream HTTP client.

    TUICD_BIN=target/debug/tuicd conformance client --command "python3 upstream_client.py" ...

The scenario server's URL is the last argument and the scenario's name is in
MCP_CONFORMANCE_SCENARIO. Starts tuicd in a temporary config dir whose mcp-upstreams.json holds
one http upstream at that URL, waits until GET /mcp/upstream-status says it is ready, lists and
calls its tools through tuicd's own /mcp over the Unix socket, and exits 0 when every step did
what the scenario expects. Standard library only; every wait has a deadline.
"""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DEADLINE = 30.0
UPSTREAM = "conf"

# What each scenario has tuicd call on the upstream, and a text the result must contain.
CALLS = {
    "initialize": None,
    "tools_call": ("add_numbers", {"a": 5, "b": 3}, "8"),
    "sse-retry": ("test_reconnection", {}, "Reconnection test completed successfully"),
    "auth/scope-step-up": ("test-tool", {}, "test"),
    "auth/scope-retry-limit": ("test-tool", {}, "test"),
}
# A call answered -32001 (the upstream needs authorization, e.g. for more scope after a 403
# insufficient_scope) is authorized again and retried; at most this many authorizations in all.
AUTHORIZATIONS = 3
NEEDS_AUTH = -32001


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("tuic", timeout=DEADLINE)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(DEADLINE)
        self.sock.connect(self.path)


class Tuicd:
    def __init__(self, binary, url, auth=None):
        self.dir = tempfile.mkdtemp(prefix="tuic-upc.")
        os.chmod(self.dir, 0o700)
        server = {"id": UPSTREAM, "name": UPSTREAM, "transport": {"type": "http", "url": url}}
        if auth is not None:
            server["auth"] = auth
        with open(os.path.join(self.dir, "mcp-upstreams.json"), "w") as f:
            json.dump({"servers": [server]}, f)
        self.socket = os.path.join(self.dir, "mcp.sock")
        self.log = open(os.path.join(self.dir, "tuicd.log"), "w+")
        self.process = subprocess.Popen([binary, "--config-dir", self.dir], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        self.session = None
        self.next_id = 1

    def request(self, method, path, body=None, headers=None):
        connection = UnixConnection(self.socket)
        try:
            payload = None if body is None else json.dumps(body)
            all_headers = {"content-type": "application/json", **(headers or {})}
            connection.request(method, path, body=payload, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read().decode()
        finally:
            connection.close()

    def wait(self, what, check):
        start = time.monotonic()
        while time.monotonic() - start < DEADLINE:
            if self.process.poll() is not None:
                fail(f"tuicd exited while waiting for {what}", self)
            try:
                value = check()
                if value is not None:
                    return value
            except OSError:
                pass
            time.sleep(0.05)
        fail(f"timed out waiting for {what}", self)

    def upstream_status(self):
        status, _, body = self.request("GET", "/mcp/upstream-status")
        if status != 200:
            return None
        return next((u for u in json.loads(body)["upstreams"] if u["name"] == UPSTREAM), None)

    def rpc(self, method, params, notification=False):
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notification:
            message["id"] = self.next_id
            self.next_id += 1
        headers = {"accept": "application/json, text/event-stream"}
        if self.session:
            headers["mcp-session-id"] = self.session
        status, response_headers, body = self.request("POST", "/mcp", message, headers)
        if notification:
            return None
        if status != 200:
            fail(f"{method}: HTTP {status}: {body}", self)
        lowered = {k.lower(): v for k, v in response_headers.items()}
        self.session = self.session or lowered.get("mcp-session-id")
        for answer in messages(body, lowered.get("content-type", "")):
            if answer.get("id") == message["id"]:
                return answer
        fail(f"{method}: no response in {body!r}", self)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def oauth_auth(context):
    """The upstream's `auth` for an auth scenario: a pre-registered client when the scenario's
    context hands one, else dynamic registration (an empty client_id)."""
    auth = {"type": "oauth2", "client_id": context.get("client_id", "")}
    if context.get("client_secret"):
        auth["client_secret"] = context["client_secret"]
    return auth


def wait_ready(tuicd):
    """The upstream's status once ready; a `failed` upstream ends the run with its reason."""
    def ready():
        s = tuicd.upstream_status()
        if s and s["status"] == "failed":
            fail(f"the upstream failed: {s.get('last_error')}", tuicd)
        return s if s and s["status"] == "ready" else None
    return tuicd.wait("the upstream to be ready", ready)


def authorize(tuicd):
    """The scripted person: asks tuicd to authorize the upstream, then plays the browser: follows
    the authorization URL (the scenario's server approves at once) to the redirect and loads it on
    tuicd's callback port."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    tuicd.wait("the upstream to need authorization",
               lambda: (lambda s: s if s and s["status"] == "needs_auth" else None)(tuicd.upstream_status()))
    status, _, body = tuicd.request("POST", f"/mcp/upstreams/{UPSTREAM}/authorize", {})
    if status != 200:
        fail(f"authorize: HTTP {status}: {body}", tuicd)
    url = json.loads(body)["authorization_url"]
    opener = urllib.request.build_opener(NoRedirect)
    location = None
    for _ in range(5):
        try:
            response = opener.open(url, timeout=DEADLINE)
            fail(f"the authorization server answered {response.status} without a redirect", tuicd)
        except urllib.error.HTTPError as e:
            if e.code not in (301, 302, 303, 307, 308):
                fail(f"the authorization server answered {e.code}: {e.read()[:300]!r}", tuicd)
            location = e.headers["location"]
        if location.startswith("http://127.0.0.1:") and "/callback" in location:
            break
        url = location
    with urllib.request.urlopen(location, timeout=DEADLINE) as page:
        if page.status != 200:
            fail(f"the callback page answered {page.status}", tuicd)


def messages(body, content_type):
    if not content_type.startswith("text/event-stream"):
        return [json.loads(body)]
    found = []
    for line in body.splitlines():
        if line.startswith("data:") and line[5:].strip():
            found.append(json.loads(line[5:].strip()))
    return found


def fail(reason, tuicd=None):
    print(f"FAIL: {reason}", file=sys.stderr)
    if tuicd is not None:
        tuicd.log.seek(0)
        print(tuicd.log.read()[-4000:], file=sys.stderr)
        tuicd.stop()
    sys.exit(1)


def main():
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    binary = os.environ.get("TUICD_BIN")
    if not binary:
        fail("set TUICD_BIN to the built tuicd binary")
    auth_scenario = scenario.startswith("auth/")
    if scenario not in CALLS and not auth_scenario:
        fail(f"scenario {scenario!r} is not one this wrapper drives")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    tuicd = Tuicd(binary, url, oauth_auth(context) if auth_scenario else None)
    authorizations = 0
    try:
        if auth_scenario:
            authorize(tuicd)
            authorizations += 1
        status = wait_ready(tuicd)
        print(f"upstream ready: {status['tool_count']} tools {status['tools']}")
        init = tuicd.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "upstream-client", "version": "1"}})
        if "result" not in init:
            fail(f"initialize: {init}", tuicd)
        tuicd.rpc("notifications/initialized", {}, notification=True)
        call = CALLS.get(scenario)
        if call is not None:
            tool, arguments, expected = call
            if tool not in status["tools"]:
                fail(f"{tool} is not among the upstream's tools {status['tools']}", tuicd)
            params = {"name": f"{UPSTREAM}__{tool}", "arguments": arguments}
            answer = tuicd.rpc("tools/call", params)
            while answer.get("error", {}).get("code") == NEEDS_AUTH:
                if authorizations == AUTHORIZATIONS:
                    fail(f"{tool}: still needs authorization after {authorizations}: {answer}", tuicd)
                print(f"{tool}: {answer['error']['message']}; authorizing again")
                authorize(tuicd)
                authorizations += 1
                wait_ready(tuicd)
                answer = tuicd.rpc("tools/call", params)
            result = answer.get("result") or {}
            text = " ".join(c.get("text", "") for c in result.get("content", []))
            if result.get("isError") or expected not in text:
                fail(f"{tool}: {answer}", tuicd)
            print(f"{tool}: {text}")
    finally:
        tuicd.stop()


if __name__ == "__main__":
    main()
