#!/usr/bin/env bash
# The Peers view as a person supervising agents uses it, under Xvfb against a real tuicd: two
# MCP peers (an agent in a terminal, an external client) with mail between them; the window lists
# them with agent, terminal and waiting count, shows the mail of the peer clicked (and new mail on
# its next poll), opens a peer's terminal from its link, and shows the progress journal. The
# agent's mail is still unread afterwards. Usage: peers.sh TUICD_BIN TUIC_GUI_BIN
# Needs xvfb, xdotool and python3 (tests/run-all.sh installs them).
set -euo pipefail
tuicd=$1 gui=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
setup_workdir
fake_agent="$here/../../tuicd/tests/fixtures/fake-agent/fake-agent"

mcp_init() { # mcp_init [TUIC_SESSION]: a new MCP client (a bridge); prints its mcp-session-id
  local header=()
  [ -n "${1:-}" ] && header=(-H "x-tuic-session: $1")
  curl -sS -D - -o /dev/null --unix-socket "$work/mcp.sock" -H 'content-type: application/json' "${header[@]}" \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gui-test","version":"1"}}}' \
    http://tuic/mcp | tr -d '\r' | sed -n 's/^mcp-session-id: //Ip'
}

tool() { # tool MCP_SESSION TUIC_SESSION|- NAME ARGS_JSON: the tool's JSON answer; fails on isError
  local header=()
  [ "$2" != - ] && header=(-H "x-tuic-session: $2")
  curl -sS --unix-socket "$work/mcp.sock" -H 'content-type: application/json' -H "mcp-session-id: $1" "${header[@]}" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$3\",\"arguments\":$4}}" \
    http://tuic/mcp | python3 -c '
import json, sys
result = json.load(sys.stdin)["result"]
if result.get("isError"):
    sys.exit("tool failed: " + result["content"][0]["text"])
print(result["content"][0]["text"])'
}

click_point() { # click_point "x,y"
  # shellcheck disable=SC2046
  click_at $(echo "$1" | tr , ' ')
}

field() { # field LINE_PREFIX KEY: KEY's value in the last line of gui.out starting with LINE_PREFIX
  grep -- "^$1" "$work/gui.out" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

start_daemon "$work"
start_x 94
first=$(api POST /sessions '{"shell":"/bin/sh","cwd":"/tmp","env":{"PS1":"$ "}}' | json_field session_id)
created=$(api POST /sessions "{\"shell\":\"$fake_agent\",\"agent_type\":\"claude\",\"cwd\":\"$work\"}")
agent_id=$(echo "$created" | json_field session_id)
agent_tuic=$(echo "$created" | json_field tuic_session)
agent_alias=$(echo "$created" | json_field alias)

worker=$(mcp_init "$agent_tuic")
lead=$(mcp_init)
[ -n "$worker" ] && [ -n "$lead" ] || fail "initialize gave no mcp-session-id"
tool "$worker" "$agent_tuic" agent '{"action":"register","name":"worker"}' >/dev/null
lead_id=$(tool "$lead" - agent '{"action":"register","name":"lead"}' | json_field tuic_session)
tool "$worker" "$agent_tuic" agent "{\"action\":\"send\",\"to\":\"$lead_id\",\"message\":\"hello lead\"}" >/dev/null
tool "$worker" "$agent_tuic" progress '{"type":"done","text":"step one done"}' >/dev/null
echo "ok: two peers registered, one message and one progress entry"

start_gui --socket "$work/mcp.sock"
wait_for "the terminal live" 30 gui_said "term session=$first status=Live"
wait_for "the menu" 30 gui_said "button peers="
click_point "$(field button peers)"
wait_for "the lead listed with one message waiting" 20 gui_said "peer name=lead session=- agent=- inbox=1 "
wait_for "the worker listed with its agent and terminal" 20 gui_said "peer name=worker session=$agent_alias agent=claude inbox=0 "
echo "ok: the Peers view lists both peers with agent, terminal and waiting count"

click_point "$(field 'peer name=lead' row)"
wait_for "the lead's waiting mail" 20 gui_said "inbox peer=lead messages=1 newest=hello_lead"
tool "$worker" "$agent_tuic" agent "{\"action\":\"send\",\"to\":\"$lead_id\",\"message\":\"second note\"}" >/dev/null
wait_for "the new mail on the next poll" 20 gui_said "inbox peer=lead messages=2 newest=second_note"
echo "ok: selecting a peer shows its waiting mail, refreshed while open"

click_point "$(field 'peer name=worker' link)"
wait_for "the worker's terminal opened" 20 gui_said "term session=$agent_id status=Live"
echo "ok: a peer's terminal opens from its link"

click_point "$(field button journal)"
wait_for "the progress journal" 20 gui_said "journal entries=1 last=step_one_done"
echo "ok: the progress journal shows the report"

waiting=$(api GET "/peers/$lead_id/inbox" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["messages"]))')
[ "$waiting" = 2 ] || fail "the window took the lead's mail: $waiting left"
read_by_agent=$(tool "$lead" - agent '{"action":"inbox"}' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["messages"]))')
[ "$read_by_agent" = 2 ] || fail "the agent read $read_by_agent of its 2 messages"
echo "ok: the agent's mail stayed unread until the agent read it"
echo "PASS tests/gui/peers.sh"
