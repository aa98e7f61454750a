#!/usr/bin/env bash
# Renders tuic-gui against a real tuicd under Xvfb and checks the picture: the window maps, the
# screenshot is not blank, and MCP `ui action=screenshot` answers with a PNG the window took of
# itself: the window's size, and the picture X shows of it. Usage: screenshot.sh TUICD_BIN TUIC_GUI_BIN OUT.png
# Needs xvfb, x11-utils and imagemagick (tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2 out=$3
# shellcheck source=lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
setup_workdir

"$tuicd" --config-dir "$work" 2>"$work/tuicd.log" &
daemon_pid=$!
wait_for "tuicd socket" 30 curl -sf --unix-socket "$work/mcp.sock" http://tuic/health
# A terminal to show, when the daemon serves sessions.
id=$(curl -sf --unix-socket "$work/mcp.sock" -H 'content-type: application/json' \
  -d '{"shell":"/bin/sh","cwd":"/tmp"}' http://tuic/sessions | sed -n 's/.*"session_id":"\([^"]*\)".*/\1/p')
curl -sf --unix-socket "$work/mcp.sock" -H 'content-type: application/json' \
  -d '{"data":"echo hello from tuicd\r"}' "http://tuic/sessions/$id/write" >/dev/null

export DISPLAY=:97
Xvfb :97 -screen 0 1024x640x24 -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
wait_for "Xvfb" 20 xdpyinfo
TUIC_SOCKET="$work/mcp.sock" "$gui" >"$work/gui.log" 2>&1 &
gui_pid=$!
wait_for "the tuic window" 60 sh -c 'xwininfo -root -tree | grep -q "\"tuic\""'
# The first frames paint the status line once the network thread has polled (500 ms).
wait_for "the status line" 30 sh -c "/usr/bin/import -window root '$out' && [ \"\$(/usr/bin/identify -format %k '$out')\" -gt 8 ]"
colors=$(/usr/bin/identify -format %k "$out")
echo "screenshot: $out ($colors colours)"

# The window answers `ui action=screenshot` once its bus declares it (`answerers.screenshot`).
answerers() { curl -sf --unix-socket "$work/mcp.sock" http://tuic/ui/confirms | python3 -c 'import json,sys; print(json.load(sys.stdin)["answerers"]["screenshot"])'; }
declared() { [ "$(answerers)" = 1 ]; }
wait_for "the window declared as a screenshot answerer" 30 declared
wid=$(xdotool search --onlyvisible --name '^tuic$' | head -1)
shot=$(curl -sS --max-time 60 --unix-socket "$work/mcp.sock" -H 'content-type: application/json' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ui","arguments":{"action":"screenshot"}}}' \
  http://tuic/mcp | python3 -c '
import json, sys
result = json.load(sys.stdin)["result"]
if result.get("isError"):
    sys.exit("ui action=screenshot failed: " + result["content"][0]["text"])
print(json.loads(result["content"][0]["text"])["path"])')
/usr/bin/import -window "$wid" "$work/x-window.png"
size=$(/usr/bin/identify -format '%m %wx%h' "$shot")
expected=$(/usr/bin/identify -format 'PNG %wx%h' "$work/x-window.png")
[ "$size" = "$expected" ] || { echo "FAIL: the window's screenshot is $size, the window is $expected" >&2; exit 1; }
# The same picture X shows (the status line's clock may differ by a few pixels).
# compare exits 1 when the pictures differ at all; the figure is what counts.
difference=$({ /usr/bin/compare -metric RMSE "$shot" "$work/x-window.png" null: 2>&1 || true; } | sed -n 's/.*(\([0-9.e-]*\)).*/\1/p')
python3 -c "import sys; sys.exit(0 if float('$difference') < 0.05 else 1)" ||
  { echo "FAIL: the window's screenshot differs from the window (RMSE $difference)" >&2; exit 1; }
echo "ui action=screenshot: $shot ($size, RMSE $difference against the window)"
