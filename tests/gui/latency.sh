#!/usr/bin/env bash
# Benchmark, not a test: keystroke to a changed pixel on screen, for tuic-gui and for xterm in the
# same run, on one Xvfb display. Each terminal runs /bin/sh at an empty prompt; keypixel.py sends
# COUNT single keys (XTest, as xdotool does), each after the last one settled, and polls the
# prompt's rows until a pixel changes. Prints n, p50, p90 and max per terminal, and the ratio.
# Bounded: COUNT keys per terminal (default 40), each given up after 2 s.
# Usage: latency.sh TUICD_BIN TUIC_GUI_BIN [COUNT]
# Needs xvfb, xdotool, x11-utils, xterm and python3 (tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2 count=${3:-40}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir
command -v xterm >/dev/null || fail "xterm is not installed"

percentiles() { # percentiles FILE: n, p50, p90, max in ms of key_to_pixel_us=<microseconds> lines
  grep -o "key_to_pixel_us=[0-9]*" "$1" | cut -d= -f2 | sort -n | awk '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "no samples"; exit }
      i50 = int(NR * 0.5) + 1; i90 = int(NR * 0.9) + 1; if (i90 > NR) i90 = NR
      printf "n=%d p50=%.2f ms p90=%.2f ms max=%.2f ms\n", NR, v[i50] / 1000, v[i90] / 1000, v[NR] / 1000
    }'
}
p50_us() { grep -o "key_to_pixel_us=[0-9]*" "$1" | cut -d= -f2 | sort -n | awk '{ v[NR] = $1 } END { print v[int(NR * 0.5) + 1] }'; }

start_daemon "$work"
# Wide enough that the two windows never overlap (an obscured window's pixels are not drawn).
start_x 97 2300x800x24

# xterm on the right half, at its prompt.
PS1='$ ' xterm -geometry 80x24+1200+0 -e /bin/sh >"$work/xterm.log" 2>&1 &
more_pids=$!
wait_for "xterm's window" 20 xdotool search --onlyvisible --class xterm
xwid=$(xdotool search --onlyvisible --class xterm | head -1)

# tuic-gui on the left, its terminal cleared so the prompt is on the first row.
id=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
# The window's own log splits the figure: key event handled -> echo painted, and frame times.
export TUIC_GUI_FRAME_LOG="$work/frames.log"
start_gui --socket "$work/mcp.sock" --open "$id"
wait_for "the terminal live" 30 gui_said "term session=$id status=Live"
write_session "$id" "clear\r"
wait_for "the terminal's geometry" 30 geometry "$id"
geometry "$id"
click_cell 3 3 # the terminal takes the keyboard focus inside the window

# Two rows of the terminal from its left edge: the prompt's row and the next.
region() { # region X Y CELL_W CELL_H: "x y w h" in pixels
  python3 -c "print(int($1), int($2), int(80 * $3), int(2 * $4))"
}
# shellcheck disable=SC2046
timeout 300 python3 "$here/keypixel.py" "$wid" $(region "$gx" "$gy" "$cw" "$ch") "$count" >"$work/gui.lat"
# xterm's default font is 6x13 pixels with a 2-pixel border.
# shellcheck disable=SC2046
timeout 300 python3 "$here/keypixel.py" "$xwid" $(region 2 2 6 13) "$count" >"$work/xterm.lat"

typed=$(session_text "$id" | grep -o 'x*' | awk '{ if (length > m) m = length } END { print m + 0 }')
[ "$typed" -ge "$count" ] || echo "note: tuic-gui's session got $typed of $count keys" >&2
gui_p50=$(p50_us "$work/gui.lat") xterm_p50=$(p50_us "$work/xterm.lat")
echo "tuic-gui inside (key handled to echo painted): $(percentiles "$work/frames.log")"
echo "tuic-gui frame build+paint (cpu_us): $(grep -o 'cpu_us=[0-9]*' "$work/frames.log" | sed 's/cpu_us/key_to_pixel_us/' | percentiles /dev/stdin)"
echo "tuic-gui keystroke to pixel: $(percentiles "$work/gui.lat") $(grep missed "$work/gui.lat")"
echo "xterm    keystroke to pixel: $(percentiles "$work/xterm.lat") $(grep missed "$work/xterm.lat")"
python3 -c "print('ratio of p50s (tuic-gui / xterm): %.1fx' % (${gui_p50:-0} / max(1, ${xterm_p50:-0})))"
