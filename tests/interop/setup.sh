#!/usr/bin/env bash
# Installs the real third-party MCP peers the interop run uses, from the registries only:
#   tests/.venv-mcp2  Python `mcp` 2.x (default auto mode probes server/discover first)
#   tests/.venv-mcp1  Python `mcp` 1.x (the classic API many agent frameworks still pin)
#   tests/.venv-asciinema  asciinema 2.x, which plays the recordings tuicd exports
#   tests/node_modules  @modelcontextprotocol/conformance 0.1.13 (runs on Node 20; same server
#                       scenarios as 0.1.16, which needs Node 22), server-everything (benchmark peer and
#                       upstream proxy peer) and server-filesystem (a second stdio upstream)
# Idempotent: each step is skipped when its marker shows it already ran with these versions.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests="$(dirname "$here")"

PY_MCP2='mcp>=2,<3'
PY_MCP1='mcp>=1.20,<2'
PY_ASCIINEMA='asciinema==2.4.0'
CONFORMANCE='@modelcontextprotocol/conformance@0.1.13'
EVERYTHING='@modelcontextprotocol/server-everything@2026.8.31'
FILESYSTEM='@modelcontextprotocol/server-filesystem@2026.8.31'

venv() { # dir spec
  local dir="$1" spec="$2"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.spec" 2>/dev/null)" = "$spec" ]; then return; fi
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "$spec"
  echo "$spec" > "$dir/.spec"
}
venv "$tests/.venv-mcp2" "$PY_MCP2"
venv "$tests/.venv-mcp1" "$PY_MCP1"
venv "$tests/.venv-asciinema" "$PY_ASCIINEMA"

marker="$tests/node_modules/.tuic-spec"
if [ "$(cat "$marker" 2>/dev/null)" != "$CONFORMANCE $EVERYTHING $FILESYSTEM" ]; then
  cd "$tests"
  [ -f package.json ] || echo '{"name":"tuic-interop","private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error "$CONFORMANCE" "$EVERYTHING" "$FILESYSTEM"
  echo "$CONFORMANCE $EVERYTHING $FILESYSTEM" > "$marker"
fi
echo "interop peers ready: $("$tests/.venv-mcp2/bin/pip" show mcp | grep ^Version), $("$tests/.venv-mcp1/bin/pip" show mcp | grep ^Version)"
