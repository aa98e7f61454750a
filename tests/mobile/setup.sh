#!/usr/bin/env bash
# Installs what the /mobile browser test needs, from the registries only: Debian's chromium (the
# system-packages stage of tests/run-all.sh installs it; checked here too), Debian's htop (the
# full-screen program terminal.mjs reads back from xterm.js's buffer) and playwright-core
# from npm into tests/node_modules (recorded in tests/package.json). playwright-core drives the
# system browser: it never downloads one of its own.
# Idempotent: skipped when its marker shows this version already installed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests="$(dirname "$here")"

PLAYWRIGHT='playwright-core@1.65.1'

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/htop ] || missing+=(htop)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi

marker="$tests/node_modules/.tuic-mobile-spec"
if [ "$(cat "$marker" 2>/dev/null)" != "$PLAYWRIGHT" ]; then
  cd "$tests"
  [ -f package.json ] || echo '{"name":"tuic-interop","private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error "$PLAYWRIGHT"
  echo "$PLAYWRIGHT" > "$marker"
fi
echo "mobile test ready: $(/usr/bin/chromium --version 2>/dev/null), $(/usr/bin/htop --version | head -1), $PLAYWRIGHT"
