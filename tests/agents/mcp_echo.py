"""A tiny stdio MCP server for the real-agent test bed: one tool, `echo`.

    python3 mcp_echo.py [--log FILE]

JSON-RPC 2.0, one message per line on stdin/stdout (the MCP stdio transport). Answers
initialize, ping, tools/list (one tool `echo` taking {"text": string}) and tools/call (returns the
text). Every message received is appended to FILE (or $MCP_ECHO_LOG) as one JSON line, so a test
can check that the agent really called the tool.
"""

from __future__ import annotations

import json
import os
import sys

TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "text to echo"}},
        "required": ["text"],
    },
}


def main() -> None:
    args = sys.argv[1:]
    log_path = args[args.index("--log") + 1] if "--log" in args else os.environ.get("MCP_ECHO_LOG")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if log_path:
            with open(log_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(msg, ensure_ascii=False) + "\n")
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            continue  # a notification (e.g. notifications/initialized)
        if method == "initialize":
            version = (msg.get("params") or {}).get("protocolVersion") or "2025-06-18"
            result = {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
                      "serverInfo": {"name": "mcp-echo", "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            params = msg.get("params") or {}
            text = str((params.get("arguments") or {}).get("text", ""))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
