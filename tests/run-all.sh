#!/usr/bin/env bash
# Runs every test of the project on a fresh machine, installing what the tests need first:
# Debian packages, then the Rust workspace tests, then the cross-binary tests with real
# third-party clients (tests/interop). Exits non-zero on the first failing stage.
set -euo pipefail
# The tests start and kill many daemons: without this, a keeper would keep each one's sessions
# running on after it (crash recovery, tuicd/src/keep). The crash-recovery tests turn it on.
export TUIC_KEEPER=off
# A CI runner that is itself a systemd service may pass its own notify socket: tuicd would store
# its sessions there. The fd-store test sets up its own.
unset NOTIFY_SOCKET
cd "$(dirname "$0")/.."
root=$(pwd)

stage() { printf '\n== %s ==\n' "$*"; }

stage "system packages"
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v git >/dev/null || need+=(git)
command -v python3 >/dev/null || need+=(python3 python3-venv)
command -v node >/dev/null || need+=(nodejs npm)
command -v taskset >/dev/null || need+=(util-linux)
command -v Xvfb >/dev/null || need+=(xvfb)
command -v xwininfo >/dev/null || need+=(x11-utils)
[ -x /usr/bin/import ] && [ -x /usr/bin/identify ] || need+=(imagemagick)
command -v xdotool >/dev/null || need+=(xdotool)
command -v xclip >/dev/null || need+=(xclip)
# tuic-gui's fallback fonts (CJK, symbols and emoji; tests/gui/fidelity.sh draws them).
command -v fc-list >/dev/null || need+=(fontconfig)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
[ -f /usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf ] || need+=(fonts-droid-fallback)
[ -f /usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf ] || need+=(fonts-symbola)
command -v less >/dev/null || need+=(less)
command -v curl >/dev/null || need+=(curl)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v ip >/dev/null || need+=(iproute2)
command -v systemd-analyze >/dev/null || need+=(systemd)
# A private session bus and gnome-keyring's Secret Service for the OS keyring credential tests.
command -v dbus-daemon >/dev/null || need+=(dbus-daemon)
command -v dbus-send >/dev/null || need+=(dbus)
command -v gnome-keyring-daemon >/dev/null || need+=(gnome-keyring)
command -v secret-tool >/dev/null || need+=(libsecret-tools)
# tests/gui/attention.sh: a fake notification server on Debian's python3 (python3-dbus, python3-gi);
# tests/gui/latency.sh (a benchmark) compares against xterm.
/usr/bin/python3 -c 'import dbus, gi' 2>/dev/null || need+=(python3-dbus python3-gi)
command -v xterm >/dev/null || need+=(xterm)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
echo "ok"

stage "format"
cargo fmt --all -- --check

stage "clippy: every crate and target, warnings are errors"
cargo clippy --workspace --all-targets --locked -- -D warnings

stage "module cycles: no top-level module imports one that imports it back"
cycles_tool="$root/../shared/tools/module-cycles.py"
[ -f "$cycles_tool" ] || { echo "missing $cycles_tool (shared/ is expected beside the clone)"; exit 1; }
cycle_failures=()
# tuicd's state.rs is the composition root: wiring every service together is its job.
python3 "$cycles_tool" tuicd/src --root state || cycle_failures+=(tuicd)
for crate in tuic-bridge tuic-gui proto; do
  python3 "$cycles_tool" "$crate/src" || cycle_failures+=("$crate")
done
if [ ${#cycle_failures[@]} -gt 0 ]; then
  echo "import cycles in: ${cycle_failures[*]}"
  exit 1
fi

stage "build"
cargo build --workspace --all-targets --locked

stage "packaging: the systemd unit verifies, the launchd plist parses"
unit_home=$(mktemp -d)
install -Dm755 target/debug/tuicd "$unit_home/.cargo/bin/tuicd"
HOME="$unit_home" systemd-analyze verify packaging/tuicd.service
rm -rf "$unit_home"
python3 -c 'import plistlib, sys; p = plistlib.load(open(sys.argv[1], "rb")); assert "/usr/local/bin" not in str(p["ProgramArguments"])' \
  packaging/dev.tuic.tuicd.plist

stage "test peers: Python MCP SDKs, npm MCP servers and conformance (the api tests use them)"
bash tests/interop/setup.sh

stage "real agent CLIs: Claude Code, Codex, Gemini CLI, opencode (npm) and Aider (PyPI) at pinned versions"
bash tests/agents/setup.sh

stage "browser: Debian's chromium and playwright-core (npm) for /mobile (the ACP stage taps a permission on /mobile too)"
bash tests/mobile/setup.sh

stage "workspace tests"
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$root/target/test-output.txt"

stage "messaging stress: 20 agents x 500 messages over /mcp, 0 lost, 0 duplicated"
timeout 600 cargo test -p tuicd --bench messaging --locked

if [ -x tests/interop/run.sh ]; then
  stage "interop: real MCP clients and conformance"
  TUICD_BIN="$root/target/debug/tuicd" TUIC_BRIDGE_BIN="$root/target/debug/tuic-bridge" \
    timeout 900 bash tests/interop/run.sh
fi

stage "real agents: the real CLIs under tuicd against scripted model servers (state, receipts, dialogs, spawn + MCP)"
timeout 900 python3 tests/agents/run.py --tuicd "$root/target/debug/tuicd" --bridge "$root/target/debug/tuic-bridge"
timeout 600 python3 tests/agents/ai_routes.py --tuicd "$root/target/debug/tuicd"

stage "real ACP agents: claude-code-acp, codex-acp and Gemini CLI --acp driven through /acp (stream, permissions, cancel, 20 reconnects, kill + load)"
timeout 600 python3 tests/acp/run.py --tuicd "$root/target/debug/tuicd"

stage "mobile: /mobile in headless Chromium (Playwright), at a phone viewport; its xterm.js terminal read back from the buffer"
(cd tests && timeout 120 node mobile/mobile.mjs "$root/target/debug/tuicd" "$root/target/mobile")
(cd tests && timeout 120 node mobile/acp.mjs "$root/target/debug/tuicd" "$root/target/mobile")
(cd tests && timeout 180 node mobile/terminal.mjs "$root/target/debug/tuicd" "$root/target/mobile")

stage "gui: tuic-gui renders under Xvfb"
bash tests/gui/screenshot.sh target/debug/tuicd target/debug/tuic-gui target/tuic-gui.png
bash tests/gui/terminal.sh target/debug/tuicd target/debug/tuic-gui
bash tests/gui/peers.sh target/debug/tuicd target/debug/tuic-gui
bash tests/gui/acp.sh target/debug/tuicd target/debug/tuic-gui
bash tests/gui/fidelity.sh target/debug/tuicd target/debug/tuic-gui
bash tests/gui/attention.sh target/debug/tuicd target/debug/tuic-gui

stage "agents outlive the daemon: crash recovery through systemd's fd store, against a harness speaking its protocol"
timeout 300 python3 tests/outlive/sd_fdstore.py "$root/target/debug/tuicd"

stage "security: attacks from outside (rebinding page in Chromium, a remote peer in a network namespace, another local user)"
timeout 600 bash tests/security/run.sh "$root/target/debug/tuicd"

stage "done"
