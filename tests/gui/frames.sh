#!/usr/bin/env bash
# The GUI's figures under Xvfb: frame times while one terminal floods at full speed and three
# others idle (all four open as tabs, the flooding one shown), and keystroke-to-pixel latency
# (from the key event handled in a frame to the first frame that paints the PTY's echo).
# Usage: frames.sh TUICD_BIN TUIC_GUI_BIN [FLOOD_SECONDS]
set -euo pipefail
tuicd=$1 gui=$2 flood_secs=${3:-15}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir

percentiles() { # percentiles KEY FILE: p50 and p99 in ms of KEY=<microseconds> lines
  grep -o "$1=[0-9]*" "$2" | cut -d= -f2 | sort -n | awk '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "no samples"; exit }
      i50 = int(NR * 0.5) + 1; i99 = int(NR * 0.99) + 1; if (i99 > NR) i99 = NR
      printf "n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms\n", NR, v[i50] / 1000, v[i99] / 1000, v[NR] / 1000
    }'
}

start_daemon "$work"
start_x 95
flood=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp"}' | json_field session_id)
idle=()
for _ in 1 2 3; do idle+=("$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp"}' | json_field session_id)"); done

# Keystroke to pixel, in an idle shell with nothing else moving.
TUIC_GUI_FRAME_LOG="$work/keys.log" start_gui --socket "$work/mcp.sock" --open "${idle[0]}"
wait_for "the terminal live" 30 gui_said "term session=${idle[0]} status=Live"
geometry "${idle[0]}"
click_cell 1 1
xdotool type --delay 150 "$(printf 'x%.0s' $(seq 1 60))"
typed_all() { session_text "${idle[0]}" | grep -q "$(printf 'x%.0s' $(seq 1 60))"; }
wait_for "every keystroke in the PTY" 20 typed_all
# Keys handled in one frame count once; most frames carry one key at this pace.
wait_for "the echoes painted" 20 sh -c "[ \$(grep -c key_to_pixel_us '$work/keys.log') -ge 30 ]"
echo "keystroke to pixel: $(percentiles key_to_pixel_us "$work/keys.log")"
kill "$gui_pid"; wait "$gui_pid" 2>/dev/null || true

# Frame time under a flood in the shown terminal, three idle terminals open beside it.
TUIC_GUI_FRAME_LOG="$work/frames.log" start_gui --socket "$work/mcp.sock" \
  --open "$flood" --open "${idle[0]}" --open "${idle[1]}" --open "${idle[2]}"
wait_for "the flood terminal live" 30 gui_said "term session=$flood status=Live"
write_session "$flood" "timeout $flood_secs yes 'flood flood flood flood flood flood flood flood flood flood flood'\\r"
sleep 2 # the flood reaches full speed
: >"$work/frames.log.start"
start_line=$(wc -l <"$work/frames.log")
sleep $((flood_secs - 4))
tail -n +"$start_line" "$work/frames.log" >"$work/flood-frames.log"
bytes=$(api GET "/sessions/$flood" | json_field total_written)
echo "flood: $((bytes / 1024 / 1024)) MiB written by the PTY in ~${flood_secs}s"
echo "frame interval under flood: $(percentiles interval_us "$work/flood-frames.log")"
echo "frame cpu (build+paint) under flood: $(percentiles cpu_us "$work/flood-frames.log")"
echo "frame build (ui code) under flood: $(percentiles build_us "$work/flood-frames.log")"
