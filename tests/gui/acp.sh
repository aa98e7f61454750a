#!/usr/bin/env bash
# The Agents (ACP) view as a person uses it, under Xvfb against a real tuicd driving the scripted
# ACP agent (tuicd/tests/fixtures/acp/fake_acp_agent.py): Start agent says which setting is
# missing while none is configured, then starts it; New session; a prompt typed and sent from
# the window streams back as the agent's text; a permission request is answered by clicking its
# option in the conversation, and the agent's reply to that answer renders.
# Usage: acp.sh TUICD_BIN TUIC_GUI_BIN
# Needs xvfb, xdotool and python3 (tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir
agent="$(cd "$here/../../tuicd/tests/fixtures/acp" && pwd)/fake_acp_agent.py"

field() { # field LINE_PREFIX KEY: KEY's value in the last line of gui.out starting with LINE_PREFIX
  grep -- "^$1" "$work/gui.out" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

click_point() { # click_point "x,y"
  [ -n "$1" ] || fail "no position to click"
  # shellcheck disable=SC2046
  click_at $(echo "$1" | tr , ' ')
}

# The prompt typed into the view's input and sent with its Send button, once the daemon has
# ended the previous turn (its end frame can arrive a moment before the session is free).
send_prompt() { # send_prompt TEXT
  wait_for "no turn running in s-1" 20 turn_idle acp-1 s-1
  click_point "$(field 'acp input=' input)"
  xdotool type --delay 20 "$1"
  wait_for "\"$1\" in the input" 10 input_holds "${#1}"
  click_point "$(field 'acp input=' send)"
}
input_holds() { [ "$(grep '^acp input=' "$work/gui.out" | tail -1 | tr ' ' '\n' | sed -n 's/^chars=//p')" = "$1" ]; }
turn_idle() { # turn_idle CONNECTION SESSION
  api GET "/acp/connections/$1" | python3 -c "
import json, sys
sessions = json.load(sys.stdin)['sessions']
sys.exit(any(s['session_id'] == '$2' and s['turn_running'] for s in sessions))"
}

# On failure: what the view last showed.
trap 'status=$?; if [ $status -ne 0 ]; then echo "--- the view last printed:" >&2; grep "^acp" "$work/gui.out" | tail -n 25 >&2; fi; cleanup' EXIT

pending() { # pending CONNECTION: how many questions wait
  api GET "/acp/connections/$1/interactions" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["interactions"]))'
}
pending_is() { [ "$(pending "$1")" = "$2" ]; }

start_daemon "$work"
start_x 93
start_gui --socket "$work/mcp.sock"
wait_for "the window online" 30 gui_said "connection online"
wait_for "the menu" 30 gui_said "button peers="
click_point "$(field button acp)"
wait_for "the ACP view" 20 gui_said "acp start="

# No agent configured: Start agent shows the daemon's 409, which names the setting.
click_point "$(field 'acp start=' start)"
wait_for "the 409 naming ego_executable" 20 gui_said "acp error text=no_ACP_agent_is_configured:_set_ego_executable"
echo "ok: Start agent without ego_executable shows the daemon's answer"

api PUT /config "{\"ego_executable\":\"python3\",\"ego_args\":[\"$agent\"]}" >/dev/null
click_point "$(field 'acp start=' start)"
wait_for "the connection ready" 30 gui_said "acp connection id=acp-1 state=ready generation=1 sessions=0"
echo "ok: Start agent launched acp-1 (ready, generation 1)"

click_point "$(field 'acp connection id=acp-1' new_session)"
wait_for "the session listed" 30 gui_said "acp session connection=acp-1 id=s-1 attached=true "
wait_for "the input row" 20 gui_said "acp input="
[ "$(api GET /acp/connections/acp-1 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')" = 1 ] ||
  fail "the daemon does not list the session"
echo "ok: New session created s-1"

send_prompt hello
wait_for "the prompt shown" 20 gui_said "acp item session=s-1 n=[0-9]* kind=user text=hello$"
wait_for "the agent's joined text" 20 gui_said "acp item session=s-1 n=[0-9]* kind=agent text=Received:_hello$"
wait_for "the turn's end" 20 gui_said "acp item session=s-1 n=[0-9]* kind=turn_end reason=end_turn$"
echo "ok: a prompt sent from the window streamed back as \"Received: hello\""

send_prompt ask
wait_for "the permission's buttons" 30 gui_said "acp permission request=[^ ]* option=allow at="
pending_is acp-1 1 || fail "the daemon does not list the permission request as waiting"
request=$(field 'acp permission request=[^ ]* option=allow' request)
click_point "$(field "acp permission request=$request option=allow" at)"
wait_for "the permission answered (no question waits)" 20 pending_is acp-1 0
wait_for "the answer shown in place" 20 gui_said "acp item session=s-1 n=[0-9]* kind=permission request=$request answer=allow$"
wait_for "the agent's reply to the answer" 20 gui_said "acp item session=s-1 n=[0-9]* kind=agent text=permission:_selected_allow$"
echo "ok: the permission request was answered by clicking Allow (request $request)"

# Cancel shows while a turn runs, stops it, and goes once the turn ended.
input_has_cancel() { grep '^acp input=' "$work/gui.out" | tail -1 | grep -q ' cancel='; }
input_without_cancel() { ! input_has_cancel; }
send_prompt "slow 500"
wait_for "the Cancel button during the turn" 20 input_has_cancel
click_point "$(field 'acp input=' cancel)"
wait_for "the turn cancelled" 20 gui_said "acp item session=s-1 n=[0-9]* kind=turn_end reason=cancelled$"
wait_for "the Cancel button gone" 20 input_without_cancel
echo "ok: Cancel stopped a running turn"

# An elicitation answered with its form: the field typed into, then Accept.
send_prompt elicit
wait_for "the elicitation's form" 30 gui_said "acp elicitation request=[^ ]* field=name at="
request=$(field 'acp elicitation request=[^ ]* field=name' request)
click_point "$(field "acp elicitation request=$request field=name" at)"
xdotool type --delay 20 Ada
wait_for "the Accept button" 10 gui_said "acp elicitation request=$request accept="
click_point "$(field "acp elicitation request=$request accept=" accept)"
wait_for "the elicitation answered" 20 pending_is acp-1 0
wait_for "the agent's reply to the form" 20 gui_said 'kind=agent text=elicitation:_{"action":_"accept",_"content":_{"name":_"Ada"}}$'
echo "ok: the elicitation was answered with its form"

# Reconnect restarts the agent: generation 2, said in the conversation, and the view follows it.
click_point "$(field 'acp connection id=acp-1' reconnect)"
wait_for "generation 2 ready" 30 gui_said "acp connection id=acp-1 state=ready generation=2 "
wait_for "the restart said in the conversation" 20 gui_said "kind=notice text=agent_restarted:_generation_2$"
echo "ok: Reconnect started generation 2 and the stream followed it"

# The old generation's session is detached; Load attaches it again and a prompt works in it.
wait_for "s-1 detached" 20 gui_said "acp session connection=acp-1 id=s-1 attached=false "
click_point "$(field 'acp session connection=acp-1 id=s-1 attached=false' load)"
wait_for "s-1 attached again" 30 gui_said "acp session connection=acp-1 id=s-1 attached=true "
send_prompt again
wait_for "the reply in generation 2" 20 gui_said "acp item session=s-1 n=[0-9]* kind=agent text=Received:_again$"
echo "ok: Load re-attached the session and it answers prompts"
# TUIC_GUI_ACP_SHOT=file.png: what the view looked like, for a person to check.
[ -n "${TUIC_GUI_ACP_SHOT:-}" ] && /usr/bin/import -window "$wid" "$TUIC_GUI_ACP_SHOT"
echo "PASS tests/gui/acp.sh"
