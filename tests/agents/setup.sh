#!/usr/bin/env bash
# Installs the real agent CLIs the agent tests run against (and the ACP agents tests/acp runs), from the registries only and at the
# versions pinned here: the npm CLIs from package-lock.json (npm ci into tests/agents/node_modules)
# and Aider from requirements.txt into tests/agents/.venv. Idempotent: each part is skipped when
# its marker shows the pinned set already installed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

npm_marker=node_modules/.tuic-agents-lock
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$npm_marker" 2>/dev/null)" != "$lock_sum" ]; then
  # `npm ci` refuses this lock: opencode-ai lists platform packages with no version, which npm
  # leaves out of the lock; `npm install` keeps to the locked versions of everything else.
  npm install --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > "$npm_marker"
fi

if [ -s requirements.txt ]; then
  pip_marker=.venv/.tuic-agents-requirements
  req_sum=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ "$(cat "$pip_marker" 2>/dev/null)" != "$req_sum" ]; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$req_sum" > "$pip_marker"
  fi
fi

for cli in claude codex gemini opencode; do
  printf '%s %s\n' "$cli" "$(node_modules/.bin/$cli --version 2>/dev/null | head -1)"
done
# The ACP agents (tests/acp): codex-acp has no --version, so the versions npm installed.
for pkg in @zed-industries/claude-code-acp @zed-industries/codex-acp; do
  printf '%s %s\n' "$pkg" "$(node -p "require('./node_modules/$pkg/package.json').version" 2>/dev/null)"
done
[ -x .venv/bin/aider ] && printf 'aider %s\n' "$(.venv/bin/aider --version 2>/dev/null | tail -1)"
echo "real agent CLIs ready"
