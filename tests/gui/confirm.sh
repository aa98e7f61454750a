#!/usr/bin/env bash
# Asks the person a question through MCP `ui action=confirm` and prints the tool's answer; the
# call blocks until a UI client answers. Usage: confirm.sh SOCKET
set -euo pipefail
curl -sS --max-time 60 --unix-socket "$1" -H 'content-type: application/json' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ui","arguments":{"action":"confirm","title":"Deploy to staging?","message":"The tuic-gui test asks before it goes on."}}}' \
  http://tuic/mcp
