#!/usr/bin/env bash
# Attacks on tuicd from outside (issue 29): a DNS-rebinding page in headless Chromium through an
# ssh -L stand-in, a remote peer in its own network namespace, another local user.
# Usage: bash tests/security/run.sh <tuicd binary>
# Needs root, Chromium (/usr/bin/chromium), node with tests/node_modules/playwright-core
# (bash tests/mobile/setup.sh), iproute2, useradd, openssl, git. A missing one fails the run.
# Each script prints "N of M attacks held"; this exits non-zero if any attack succeeded, a
# control broke or a script overran its deadline.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tuicd=${1:?usage: run.sh <tuicd binary>}
[ -x "$tuicd" ] || { echo "not an executable: $tuicd"; exit 1; }
tuicd=$(cd "$(dirname "$tuicd")" && pwd)/$(basename "$tuicd")

missing=()
[ "$(id -u)" = 0 ] || missing+=("root (network namespaces, useradd)")
[ -x /usr/bin/chromium ] || missing+=(/usr/bin/chromium)
command -v node >/dev/null || missing+=(node)
[ -d "$here/../node_modules/playwright-core" ] || missing+=("tests/node_modules/playwright-core (bash tests/mobile/setup.sh)")
for tool in ip useradd userdel openssl git python3 timeout; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -x /usr/bin/python3 ] || missing+=(/usr/bin/python3)
if [ ${#missing[@]} -gt 0 ]; then
  echo "security tests cannot run, missing: ${missing[*]}"
  exit 1
fi
# Network namespaces must work here, not only exist as a command.
probe="tsecprobe$$"
if ! ip netns add "$probe" 2>/dev/null; then
  echo "security tests cannot run: 'ip netns add' fails (network namespaces unavailable)"
  exit 1
fi
ip netns del "$probe"

failed=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() {
  local name=$1 deadline=$2
  shift 2
  local started=$SECONDS
  printf '\n-- %s (deadline %s s) --\n' "$name" "$deadline"
  PYTHONUNBUFFERED=1 timeout -k 10 "$deadline" python3 "$@" --tuicd "$tuicd" | tee -a "$out"
  local code=${PIPESTATUS[0]}
  [ $code = 124 ] && echo "$name: overran its deadline of $deadline s"
  echo "$name: exit $code after $((SECONDS - started)) s"
  [ $code = 0 ] || failed+=("$name")
}
# Deadlines sum to 240 s; the whole run takes well under a minute when nothing goes wrong.
run "rebinding through the ssh -L tunnel (Chromium)" 50 "$here/rebinding.py"
run "remote peer in a network namespace" 150 "$here/remote_peer.py"
run "another local user" 40 "$here/other_user.py"

echo
# The scripts' own tallies, summed: "[name] N of M attacks held".
held=0 total=0
while read -r n m; do held=$((held + n)); total=$((total + m)); done \
  < <(sed -n 's/^\[[a-z-]*\] \([0-9]*\) of \([0-9]*\) attacks held$/\1 \2/p' "$out")
echo "security: $held of $total attacks held"
grep -h '^\[remote-peer\] figures: ' "$out" || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "security: FAILED: ${failed[*]}"
  exit 1
fi
echo "security: every attack held"
