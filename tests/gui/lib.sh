# Shared helpers of the tuic-gui Xvfb tests: a daemon in a temp config dir, an X server, the
# window started with --print-geometry (its stdout says what it shows), and pixel reads.
# Sourced by every tests/gui script; the caller sets `tuicd`, `gui` and `work`.

wait_for() { # wait_for "what" seconds command...
  local what=$1 limit=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then echo "timed out waiting for: $what" >&2; return 1; fi
    sleep 0.1
  done
}

# A temp dir for the test's files (kept with TUIC_GUI_TEST_KEEP=1; the GUI's remembered
# connection stays in it too), and every process the test starts stopped on exit.
setup_workdir() {
  work=$(mktemp -d)
  export XDG_CONFIG_HOME="$work/xdg"
  trap cleanup EXIT
}

cleanup() {
  # shellcheck disable=SC2086 # more_pids: a test's other processes, space-separated
  kill "${gui_pid:-}" "${daemon_pid:-}" "${xvfb_pid:-}" "${answer_pid:-}" ${more_pids:-} 2>/dev/null || true
  [ -n "${TUIC_GUI_TEST_KEEP:-}" ] && echo "kept: $work" || rm -rf "$work"
}

fail() { echo "FAIL: $*" >&2; exit 1; }

start_daemon() { # start_daemon CONFIG_DIR
  "$tuicd" --config-dir "$1" 2>>"$work/tuicd.log" &
  daemon_pid=$!
  wait_for "tuicd socket" 30 curl -sf --unix-socket "$1/mcp.sock" http://tuic/health
}

api() { # api METHOD PATH [JSON]
  if [ $# -ge 3 ]; then
    curl -sS --unix-socket "$work/mcp.sock" -X "$1" -H 'content-type: application/json' -d "$3" "http://tuic$2"
  else
    curl -sS --unix-socket "$work/mcp.sock" -X "$1" "http://tuic$2"
  fi
}

json_field() { # json_field NAME < json
  python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

write_session() { # write_session ID TEXT (TEXT as a JSON string body, escapes allowed)
  api POST "/sessions/$1/write" "{\"data\":\"$2\"}" >/dev/null
}

session_text() { api GET "/sessions/$1/output?format=text&limit=200" | json_field data; }

start_x() { # start_x DISPLAY_NUMBER [WIDTHxHEIGHTxDEPTH]
  export DISPLAY=":$1"
  # -noreset: by default the server resets when its last client leaves, and a window started in
  # that moment fails to connect ("Failed to open connection to X server").
  Xvfb "$DISPLAY" -screen 0 "${2:-1100x700x24}" -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
  xvfb_pid=$!
  wait_for "Xvfb" 20 xdpyinfo
}

start_gui() { # start_gui ARGS... ; stdout goes to $work/gui.out
  : >"$work/gui.out"
  "$gui" --print-geometry "$@" >"$work/gui.out" 2>"$work/gui.err" &
  gui_pid=$!
  if ! wait_for "the tuic window" 60 gui_window_up || ! kill -0 "$gui_pid" 2>/dev/null; then
    kill -0 "$gui_pid" 2>/dev/null && echo "tuic-gui runs without a visible window" >&2 ||
      echo "tuic-gui exited before its window showed" >&2
    tail -n 20 "$work/gui.err" "$work/xvfb.log" >&2
    kill -0 "$xvfb_pid" 2>/dev/null || echo "Xvfb is gone" >&2
    exit 1
  fi
  wid=$(xdotool search --onlyvisible --name '^tuic$' | head -1)
  # No window manager under Xvfb: give the window the keyboard focus ourselves.
  xdotool windowfocus --sync "$wid"
}

# The window is mapped; a GUI that already exited fails at once instead of after the deadline.
gui_window_up() {
  kill -0 "$gui_pid" 2>/dev/null || return 0
  xdotool search --onlyvisible --name '^tuic$'
}

gui_said() { grep -q -- "$1" "$work/gui.out"; }

# The last geometry line for a session: sets gx gy cw ch (pixels, window-relative).
geometry() { # geometry SESSION_ID
  local line
  line=$(grep "geometry session=$1 " "$work/gui.out" | tail -1)
  [ -n "$line" ] || return 1
  eval "$(echo "$line" | python3 -c '
import sys
f = dict(kv.split("=") for kv in sys.stdin.read().split()[1:])
p = float(f["ppp"])
print("gx=%s gy=%s cw=%s ch=%s" % (float(f["x"])*p, float(f["y"])*p, float(f["cell_w"])*p, float(f["cell_h"])*p))')"
}

# The colour at the centre of a cell in a fresh screenshot of the window: "r,g,b".
cell_colour() { # cell_colour ROW COL
  local x y
  x=$(python3 -c "print(int($gx + ($2 + 0.5) * $cw))")
  y=$(python3 -c "print(int($gy + ($1 + 0.5) * $ch))")
  /usr/bin/import -window "$wid" "$work/shot.png"
  /usr/bin/convert "$work/shot.png" -format "%[fx:int(255*p{$x,$y}.r)],%[fx:int(255*p{$x,$y}.g)],%[fx:int(255*p{$x,$y}.b)]" info:
}

cell_is() { [ "$(cell_colour "$1" "$2")" = "$3" ]; }

click_at() { xdotool mousemove --window "$wid" "$1" "$2" click 1; }

click_cell() { # click_cell ROW COL
  click_at "$(python3 -c "print(int($gx + ($2 + 0.5) * $cw))")" "$(python3 -c "print(int($gy + ($1 + 0.5) * $ch))")"
}
