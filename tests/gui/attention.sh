#!/usr/bin/env bash
# A bell or a question asks for the person, under Xvfb against a real tuicd: the visual bell
# always; with the window unfocused also the urgency hint (WM_HINTS, read with xprop) and a
# desktop notification, sent to a fake freedesktop notification server on a private session bus
# (notify_server.py), at most one per session per few seconds; the hint is cleared when the window
# gets the focus back. A plain script's `Continue? [y/N]` on `read` is a question too.
# Usage: attention.sh TUICD_BIN TUIC_GUI_BIN
# Needs xvfb, xdotool, x11-utils, dbus-daemon and Debian's python3-dbus and python3-gi
# (tests/run-all.sh installs them).
set -euo pipefail
# A private session bus, so the notifications reach our fake server and no real desktop's.
if [ -z "${TUIC_ATTENTION_BUS:-}" ]; then
  TUIC_ATTENTION_BUS=1 exec dbus-run-session -- bash "$0" "$@"
fi
tuicd=$1 gui=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir

notes="$work/notify.log"
: >"$notes"
/usr/bin/python3 "$here/notify_server.py" "$notes" 2>"$work/notify.err" &
more_pids=$!
wait_for "the fake notification server" 20 grep -q ready "$notes"

# The daemon stays off the private bus (its keyring would start a Secret Service there).
DBUS_SESSION_BUS_ADDRESS=disabled: start_daemon "$work"
start_x 96
id=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
start_gui --socket "$work/mcp.sock" --open "$id"
wait_for "the stream is live" 30 gui_said "term session=$id status=Live"
echo "ok: window open on $id"

urgent() { xprop -id "$wid" WM_HINTS | grep -q "urgency hint bit is set"; }
notes_about() { grep -c -- "$1" "$notes" || true; }
bell() { write_session "$id" "printf '\\\\a'\\r"; }
root=$(xwininfo -root | awk '/Window id:/ {print $4}')
unfocus() {
  xdotool windowfocus --sync "$root"
  wait_for "the window unfocused" 10 sh -c "grep 'window focused=' '$work/gui.out' | tail -1 | grep -q false"
}
refocus() {
  xdotool windowfocus --sync "$wid"
  wait_for "the window focused" 10 sh -c "grep 'window focused=' '$work/gui.out' | tail -1 | grep -q true"
}

# 1. Focused: the visual bell only.
wait_for "the window focused" 10 gui_said "window focused=true"
bell
wait_for "the bell raised" 10 gui_said "attention session=$id reason=bell focused=true notified=false"
urgent && fail "a focused window set its urgency hint"
[ "$(notes_about summary=)" = 0 ] || fail "a focused window sent a notification: $(cat "$notes")"
echo "ok: with the window focused a bell flashes, without urgency or notification"

# 2. Unfocused: the urgency hint and one notification.
unfocus
bell
wait_for "the unfocused bell raised" 10 gui_said "attention session=$id reason=bell focused=false notified=true"
wait_for "the urgency hint on" 10 urgent
wait_for "the bell's notification" 10 grep -q "summary=.*bell" "$notes"
grep -q "app=tuic urgency=1 " "$notes" || fail "the bell's notification: $(cat "$notes")"
echo "ok: unfocused, a bell sets WM_HINTS urgency and sends a desktop notification"

# A bell storm sends no more notifications within the gap.
for _ in 1 2 3; do bell; done
wait_for "the storm's bells raised" 10 sh -c "[ \$(grep -c 'attention session=$id reason=bell focused=false' '$work/gui.out') -ge 2 ]"
[ "$(grep -c "attention session=$id reason=bell focused=false notified=true" "$work/gui.out")" = 1 ] ||
  fail "more than one notification for one session within the gap"
[ "$(notes_about "summary=.*bell")" = 1 ] || fail "the server got: $(cat "$notes")"
echo "ok: a bell storm sends one notification per session per gap"

# 3. The focus back clears the urgency hint.
refocus
wait_for "the urgency hint off" 10 sh -c "! xprop -id '$wid' WM_HINTS | grep -q 'urgency hint bit is set'"
echo "ok: the focus back clears the urgency hint"

# 4. A plain script's question, in a session that has no tab: the daemon flags it waiting.
asker=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
printf '%s\n' "printf 'Continue? [y/N] '; read answer; echo \"got \$answer\"" >"$work/ask.sh"
unfocus
write_session "$asker" "sh $work/ask.sh\r"
wait_for "the question raised" 20 gui_said "attention session=$asker reason=question focused=false notified=true"
wait_for "the urgency hint on for the question" 10 urgent
wait_for "the question's notification" 10 grep -q "Continue? \[y/N\]" "$notes"
grep "Continue?" "$notes" | grep -q "urgency=2" || fail "the question's notification: $(grep Continue "$notes")"
echo "ok: a script waiting on read after 'Continue? [y/N]' raises the urgency hint and a critical notification"
write_session "$asker" "y\r"
refocus
echo "PASS tests/gui/attention.sh"
