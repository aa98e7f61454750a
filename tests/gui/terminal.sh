#!/usr/bin/env bash
# tuic-gui as a person uses it, under Xvfb against a real tuicd: typing reaches the PTY, colours
# and the cursor land on the right cells, the alternate screen comes and goes, a confirm is
# answered by clicking the modal, the window reconnects after a daemon restart, and the bad
# paths (a session that exits while viewed, the daemon down, a wrong password) show as such.
# Usage: terminal.sh TUICD_BIN TUIC_GUI_BIN
# Needs xvfb, xdotool, imagemagick and python3 (tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir

RED=205,0,0 GREEN=0,205,0 YELLOW=205,205,0 BG=20,20,24

start_daemon "$work"
start_x 96
id=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
start_gui --socket "$work/mcp.sock"
wait_for "the terminal's geometry" 30 geometry "$id"
wait_for "the stream is live" 30 gui_said "term session=$id status=Live"
echo "ok: window open on $id"

# Typing: focus the terminal with a click, type with xdotool, and read it back from the PTY.
geometry "$id"
click_cell 1 1
xdotool type --delay 15 'echo typed-$((6*7))'
xdotool key Return
wait_for "typed text in the PTY" 20 sh -c "curl -s --unix-socket '$work/mcp.sock' 'http://tuic/sessions/$id/output?format=text' | grep -q typed-42"
echo "ok: xdotool keystrokes reached the PTY"

# The view resized the PTY to the window: the daemon reports the grid the GUI shows.
geometry "$id"
rows=$(grep "geometry session=$id " "$work/gui.out" | tail -1 | sed 's/.* rows=\([0-9]*\).*/\1/')
wait_for "the PTY resized to the view" 10 sh -c "api() { :; }; curl -s --unix-socket '$work/mcp.sock' 'http://tuic/sessions/$id' | grep -q '\"rows\":$rows'"
echo "ok: the PTY has the view's $rows rows"

# Colours and cursor moves: red at row 5 col 10, green at row 7 col 20 (1-based CUP). The
# programs are files the shell runs, which keeps the escapes out of JSON quoting.
cat >"$work/colours.sh" <<'SH'
clear
printf '\033[5;10H\033[41m    \033[0m\033[7;20H\033[42m    \033[0m\033[10;1H'
read -r _
SH
write_session "$id" "sh $work/colours.sh\r"
wait_for "red cells at row 5" 20 cell_is 4 10 "$RED"
cell_is 6 20 "$GREEN" || fail "green cell at (6,20) is $(cell_colour 6 20)"
cell_is 4 8 "$BG" || fail "the cell left of the red run is $(cell_colour 4 8), not the background"
echo "ok: SGR colours painted at the CUP cells"

# The alternate screen: less shows a yellow line over it, then q restores the main screen.
printf 'ALT\033[43m          \033[0m\nsecond\n' >"$work/alt.txt"
write_session "$id" "\r"
write_session "$id" "sh $work/colours.sh; less -R $work/alt.txt\r"
wait_for "the main screen's red cell" 20 cell_is 4 10 "$RED"
write_session "$id" "\r"
wait_for "less's yellow cells on the alternate screen" 20 cell_is 0 6 "$YELLOW"
cell_is 4 10 "$BG" || fail "the main screen shows through the alternate screen"
xdotool key q
wait_for "the main screen back after less" 20 cell_is 4 10 "$RED"
echo "ok: alternate screen entered and left (less)"

# The window counts as a UI client that answers confirms and screenshots while it is open.
answerers() { api GET /ui/confirms | python3 -c 'import json,sys; a=json.load(sys.stdin)["answerers"]; print(a["confirm"], a["screenshot"])'; }
answerers_are() { [ "$(answerers)" = "$1" ]; }
wait_for "the window counted as an answerer" 20 answerers_are "1 1"
echo "ok: the window answers confirms and screenshots for the daemon"

# A confirm answered by clicking the modal, asked through MCP `ui action=confirm` when this
# tuicd has that tool.
if api POST /mcp '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | grep -q '"name":"ui"'; then
  "$here/confirm.sh" "$work/mcp.sock" >"$work/confirm.out" 2>&1 &
  answer_pid=$!
  wait_for "the confirm modal" 30 gui_said "confirm id="
  yes=$(grep "confirm id=" "$work/gui.out" | tail -1 | sed 's/.* yes=\([0-9]*\),\([0-9]*\).*/\1 \2/')
  # shellcheck disable=SC2086
  click_at $yes
  wait_for "the confirm answered" 30 grep -Eq 'confirmed(\\)?": ?true' "$work/confirm.out"
  pending_is() { [ "$(api GET /ui/confirms | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["confirms"]))')" = "$1" ]; }
  wait_for "the confirm resolved" 20 pending_is 0
  echo "ok: confirm answered by clicking the modal"
else
  echo "skip: this tuicd has no ui tool to ask a confirm with (MCP tools/list)"
fi

# A session that exits while viewed: the tab says so.
write_session "$id" 'exit 3\r'
wait_for "the exit shown" 20 gui_said "term session=$id status=Exited(Some(3))"
echo "ok: an exited session shows its exit code"

# The daemon restarts: the window goes offline, then reconnects by itself.
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
wait_for "offline shown" 20 gui_said "connection offline"
start_daemon "$work"
: >"$work/gui.out.mark"
wait_for "reconnected" 30 sh -c "tail -n +\$(grep -n 'connection offline' '$work/gui.out' | tail -1 | cut -d: -f1) '$work/gui.out' | grep -q 'connection online'"
id2=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp"}' | json_field session_id)
wait_for "the new session listed in the window" 20 sh -c "xdotool search --name '^tuic$' >/dev/null && curl -s --unix-socket '$work/mcp.sock' http://tuic/health | grep -q '\"session_count\":1'"
wait_for "the window an answerer again" 20 answerers_are "1 1"
echo "ok: the window reconnected after a daemon restart ($id2)"
kill "$gui_pid"; wait "$gui_pid" 2>/dev/null || true

# The daemon down when the window starts: it opens and says offline.
start_gui --socket "$work/nothing-here.sock"
wait_for "offline at start" 20 gui_said "connection offline"
kill "$gui_pid"; wait "$gui_pid" 2>/dev/null || true
echo "ok: a missing daemon shows offline"

# A wrong password over TCP: refused, shown, and not retried in a loop.
kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
hash=$(printf 'right-pass\n' | "$tuicd" hash-password --cost 4)
mkdir -p "$work/tcp"
printf '{"services":{"server":{"enabled":true,"port":%s},"auth":{"username":"me","password_hash":"%s"}}}\n' \
  "$port" "$hash" >"$work/tcp/config.json"
start_daemon "$work/tcp"
TUIC_PASSWORD=wrong-pass start_gui --url "http://127.0.0.1:$port" --user me
wait_for "the refusal shown" 20 gui_said "connection unauthorized"
kill "$gui_pid"; wait "$gui_pid" 2>/dev/null || true
TUIC_PASSWORD=right-pass start_gui --url "http://127.0.0.1:$port" --user me
wait_for "the right password accepted" 20 gui_said "connection online"
grep -q right-pass "$XDG_CONFIG_HOME/tuic/gui.json" 2>/dev/null && fail "the password was written to disk"
echo "ok: a wrong password is refused and shown; the right one connects"
echo "PASS tests/gui/terminal.sh"
