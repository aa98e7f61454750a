#!/usr/bin/env bash
# tuic-gui against xterm's habits, under Xvfb against a real tuicd: DEC line drawing and the UK
# set, wide and combining characters and fallback fonts (read back from the grid the window
# shows, TUIC_GUI_GRID_DUMP, and from its pixels), dim/strike/italic drawn, mouse reporting to a
# program that asks (SGR 1006), the selection anchored at the button-down cell and copied to
# PRIMARY, middle-click and Shift+Insert paste, Ctrl+C always to the program, Alt+letter once,
# Shift+PgUp/PgDn scrollback, the bell, "end" asking first, and the idle CPU with 4 terminals.
# Usage: fidelity.sh TUICD_BIN TUIC_GUI_BIN
# Needs xvfb, xdotool, xclip, imagemagick, python3 and fonts with CJK and symbols (fonts-symbola,
# fonts-droid-fallback; tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir

BG=20,20,24

start_daemon "$work"
start_x 92
id=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
export TUIC_GUI_GRID_DUMP="$work/grid.txt"
start_gui --socket "$work/mcp.sock"
wait_for "the terminal's geometry" 30 geometry "$id"
wait_for "the stream is live" 30 gui_said "term session=$id status=Live"
geometry "$id"
echo "ok: window open on $id"

shown() { grep -qF -- "$1" "$work/grid.txt"; }
run() { # run SCRIPT_BODY: a file the shell runs (keeps escapes out of JSON quoting)
  local n=$((${run_n:-0} + 1)); run_n=$n
  printf '%s\n' "$1" >"$work/run$n.sh"
  write_session "$id" "sh $work/run$n.sh\r"
}

# 1. DEC special graphics and the UK set.
run "clear; printf '\\033(0lqqk\\r\\nx  x\\r\\nmqqj\\033(B q\\r\\n\\033)0\\016lqk\\017 q \\033(A#\\033(B#\\r\\n'; read -r _"
wait_for "a box drawn with DEC line drawing" 20 shown "┌──┐"
shown "│  │" && shown "└──┘ q" || fail "the box rows: $(cat "$work/grid.txt")"
shown "┌─┐ q £#" || fail "SO/SI with G1 and the UK pound: $(sed -n 5p "$work/grid.txt")"
echo "ok: DEC line drawing (G0 and G1 via SO/SI) and the UK set"

# The box's lines are drawn and join: the pixel between two cells of ─ is the foreground.
cell_has() { # cell_has ROW COL: the cell holds more than the background colour (something drawn)
  local x y w h
  x=$(python3 -c "print(int($gx + $2 * $cw))"); y=$(python3 -c "print(int($gy + $1 * $ch))")
  w=$(python3 -c "print(max(1, int($cw)))"); h=$(python3 -c "print(max(1, int($ch)))")
  /usr/bin/convert "$work/shot.png" -crop "${w}x${h}+$x+$y" +repage -unique-colors -format '%w' info:
}
crop() { # crop ROW COL FILE
  local x y w h
  x=$(python3 -c "print(int($gx + $2 * $cw))"); y=$(python3 -c "print(int($gy + $1 * $ch))")
  w=$(python3 -c "print(max(1, int($cw)))"); h=$(python3 -c "print(max(1, int($ch)))")
  /usr/bin/convert "$work/shot.png" -crop "${w}x${h}+$x+$y" +repage "$3"
}
differ() { # differ A.png B.png: some pixels differ
  local n
  n=$(/usr/bin/compare -metric AE "$1" "$2" null: 2>&1 || true)
  [ "${n%% *}" != "0" ]
}
shoot() { sleep 0.3; /usr/bin/import -window "$wid" "$work/shot.png"; }

# 2. Wide and combining characters, and glyphs from the fallback fonts. Each at a known column.
write_session "$id" "\r"
run "clear; printf '\\033[3;1H中文\\033[3;6He\\314\\201x\\033[3;10H⏺\\033[3;13H✻\\033[3;16H⎿\\033[3;19H✔\\033[3;22H😀|\\033[3;27H\\356\\200\\200\\r\\n'; read -r _"
wait_for "the wide and combining line" 20 shown "$(printf '中文 e\314\201x')"
shown "✔  😀|" || fail "the grid row is '$(sed -n 4p "$work/grid.txt")'"
shoot
crop 2 26 "$work/missing.png" # U+E000: no font has it, egui draws its replacement box
for at in "0 中" "1 中(right-half)" "2 文" "5 é" "9 ⏺" "12 ✻" "15 ⎿" "18 ✔" "21 😀" "22 😀(right-half)"; do
  set -- $at
  [ "$(cell_has 2 "$1")" -gt 1 ] || fail "nothing drawn for $2 at column $1"
  case $2 in *right-half*) continue ;; esac
  crop 2 "$1" "$work/glyph.png"
  differ "$work/glyph.png" "$work/missing.png" || fail "$2 at column $1 is drawn as the missing-glyph box"
done
echo "ok: CJK, a combining accent, ⏺ ✻ ⎿ ✔ and an emoji drawn from fallback fonts, wide ones over two cells"

# 3. Dim, strike-through and italic.
write_session "$id" "\r"
run "clear; printf '\\033[3;1H\\033[2;31m████\\033[0m \\033[9m    \\033[0m \\033[3mIIII\\033[0m IIII\\r\\n'; read -r _"
wait_for "the attribute line" 20 shown "████      IIII IIII"
shoot
DIM_RED=112,10,12 FG=208,208,208
cell_is 2 1 "$DIM_RED" || fail "dim red is $(cell_colour 2 1), not $DIM_RED"
strike_drawn() { crop 2 6 "$work/strike.png"; /usr/bin/convert "$work/strike.png" -unique-colors txt: | grep -qi "#D0D0D0"; }
strike_drawn || fail "no strike line across the struck blanks"
crop 2 11 "$work/italic.png"; crop 2 16 "$work/upright.png"
differ "$work/italic.png" "$work/upright.png" || fail "italic I looks like an upright I"
echo "ok: dim, strike-through and italic drawn"

# A raw reader: prints what the terminal sends it, until 'q'. With "mouse" it asks for SGR mouse.
cat >"$work/reader.py" <<'PY'
import os, sys, termios, tty
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
mouse = sys.argv[1] == "mouse"
tag = sys.argv[2]
try:
    if mouse:
        sys.stdout.write("\x1b[?1000h\x1b[?1006h")
    sys.stdout.write("reader ready\r\n")
    sys.stdout.flush()
    while True:
        data = os.read(fd, 1024)
        sys.stdout.write("read: %r\r\n" % data)
        sys.stdout.flush()
        if data == b"q":
            break
finally:
    if mouse:
        sys.stdout.write("\x1b[?1000l\x1b[?1006l")
    termios.tcsetattr(fd, termios.TCSADRAIN, old)
    print("reader %s done" % tag)
PY
said() { session_text "$id" | grep -qF -- "$1"; }

# 4. Mouse reporting: a click reaches the program as SGR 1006 at the clicked cell.
write_session "$id" "\r"
write_session "$id" "clear; python3 $work/reader.py mouse r1\r"
wait_for "the reader asked for the mouse" 20 shown "mouse=PressRelease/Sgr"
click_cell 5 10
wait_for "the click reported" 20 said "\\x1b[<0;11;6M"
wait_for "the release reported" 20 said "\\x1b[<0;11;6m"
echo "ok: a click is reported to the program as SGR 1006 (press and release at row 6 col 11)"
# Shift+drag selects instead of reporting.
cx() { python3 -c "print(int($gx + ($1 + 0.5) * $cw))"; }
cy() { python3 -c "print(int($gy + ($1 + 0.5) * $ch))"; }
before=$(session_text "$id" | grep -c "read:" || true)
xdotool keydown shift mousemove --window "$wid" "$(cx 0)" "$(cy 0)" mousedown 1 mousemove --window "$wid" "$(cx 5)" "$(cy 0)" sleep 0.2 mouseup 1 keyup shift
sleep 0.5
[ "$(xclip -o -selection primary 2>/dev/null)" = "reader" ] || fail "Shift+drag selected '$(xclip -o -selection primary 2>/dev/null)'"
after=$(session_text "$id" | grep -c "read:" || true)
[ "$before" = "$after" ] || fail "Shift+drag was reported to the program"
echo "ok: Shift+drag selects (to PRIMARY) instead of reporting"
xdotool type q
wait_for "the reader done" 20 said "reader r1 done"

# 5. The clipboard habits, read through a plain reader.
write_session "$id" "clear; echo 'hello selection world'; python3 $work/reader.py plain r2\r"
wait_for "the line on screen" 20 grep -qx "hello selection world" "$work/grid.txt"
wait_for "the reader" 20 grep -qx "reader ready" "$work/grid.txt"
row=$(grep -nx "hello selection world" "$work/grid.txt" | head -1 | cut -d: -f1); row=$((row - 2))
# One jump from the button-down cell: the selection must still start at "s" (column 6).
xdotool mousemove --window "$wid" "$(cx 6)" "$(cy $row)" mousedown 1 mousemove --window "$wid" "$(cx 14)" "$(cy $row)" sleep 0.2 mouseup 1
wait_for "the selection in PRIMARY" 10 sh -c "[ \"\$(xclip -o -selection primary)\" = selection ]"
echo "ok: the selection starts at the button-down cell and is copied to PRIMARY"
xdotool key ctrl+c
wait_for "Ctrl+C with a selection reaches the program" 10 said "read: b'\\x03'"
echo "ok: Ctrl+C goes to the program even with a selection"
xdotool key ctrl+shift+c
wait_for "Ctrl+Shift+C copies to CLIPBOARD" 10 sh -c "[ \"\$(xclip -o -selection clipboard)\" = selection ]"
printf 'from-primary' | xclip -i -selection primary
xdotool mousemove --window "$wid" "$(cx 3)" "$(cy 3)" click 2
wait_for "middle-click pastes PRIMARY" 10 said "read: b'from-primary'"
printf 'shift-insert' | xclip -i -selection primary
xdotool key shift+Insert
wait_for "Shift+Insert pastes PRIMARY" 10 said "read: b'shift-insert'"
printf 'from-clipboard' | xclip -i -selection clipboard
xdotool key ctrl+shift+v
wait_for "Ctrl+Shift+V pastes CLIPBOARD" 10 said "read: b'from-clipboard'"
echo "ok: middle-click and Shift+Insert paste PRIMARY, Ctrl+Shift+C/V use CLIPBOARD"

# 6. Alt+letter: ESC and the letter, once.
xdotool key alt+b
wait_for "Alt+b" 10 said "read: b'\\x1bb'"
sleep 0.5
session_text "$id" | grep -q "read: b'b'" && fail "Alt+b also typed b"
echo "ok: Alt+b sends ESC b once"
xdotool type q
wait_for "the reader done" 20 said "reader r2 done"

# Shift+PgUp/PgDn scroll back and forward, with the badge.
write_session "$id" "clear; seq 1 300\r"
wait_for "the numbers" 20 shown "300"
xdotool key shift+Prior
wait_for "scrolled back" 10 grep -q "scrollback=[1-9]" "$work/grid.txt"
xdotool key shift+Next
wait_for "back at the live screen" 10 grep -q "scrollback=0 " "$work/grid.txt"
echo "ok: Shift+PgUp/PgDn scroll the view back and forward"

# 7. The bell: shown (the visual bell) once per BEL.
run "printf 'ding\\007\\n'"
wait_for "the bell shown" 10 gui_said "bell session=$id count=1"
echo "ok: BEL raises the visual bell"

# "end" asks first while a program runs; Cancel keeps the session.
write_session "$id" "sleep 120\r"
sleep 1
end_at=$(grep "end-button at=" "$work/gui.out" | tail -1 | sed 's/.*at=\([0-9]*\),\([0-9]*\).*/\1 \2/')
# shellcheck disable=SC2086
click_at $end_at
wait_for "asked before ending" 10 gui_said "ask end session=$id"
no_at=$(grep "ask end session=$id" "$work/gui.out" | tail -1 | sed 's/.* no=\([0-9]*\),\([0-9]*\).*/\1 \2/')
sleep 0.3
no_at=$(grep "ask end session=$id" "$work/gui.out" | tail -1 | sed 's/.* no=\([0-9]*\),\([0-9]*\).*/\1 \2/')
# shellcheck disable=SC2086
click_at $no_at
sleep 1
api GET "/sessions/$id" | grep -q '"exited":false' || fail "Cancel ended the session"
echo "ok: \"end\" asks first while a program runs, and Cancel keeps the session"
write_session "$id" "\u0003"

# Idle CPU with 4 terminals open.
kill "$gui_pid"; wait "$gui_pid" 2>/dev/null || true
ids=("$id")
for _ in 1 2 3; do ids+=("$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp"}' | json_field session_id)"); done
start_gui --socket "$work/mcp.sock" --open "${ids[0]}" --open "${ids[1]}" --open "${ids[2]}" --open "${ids[3]}"
for s in "${ids[@]}"; do wait_for "tab $s live" 30 gui_said "term session=$s status=Live"; done
sleep 3
ticks() { awk '{print $14 + $15}' "/proc/$gui_pid/stat"; }
t0=$(ticks); sleep 10; t1=$(ticks)
hz=$(getconf CLK_TCK)
pct=$(python3 -c "print(round(100.0 * ($t1 - $t0) / $hz / 10, 2))")
echo "figure: idle CPU of tuic-gui with 4 terminals open: $pct% of a core over 10 s"
python3 -c "import sys; sys.exit(0 if $pct < 2.0 else 1)" || fail "idle CPU $pct% is not under 2%"
echo "ok: idle CPU under 2% of a core"
echo "PASS tests/gui/fidelity.sh"
