#!/usr/bin/env bash
# Proves the test bed with rdma-core's own tools; runs inside a guest:
#   tests/fabric/bed tests/fabric/bed-selftest.sh             # one host
#   tests/fabric/bed --hosts 2 tests/fabric/bed-selftest.sh   # across the wire
# One host: rping, udaddy and ucmatose over rxe0's own address (rxe loops it
# back). Two hosts: the same tools between A and B, servers on both sides,
# and rping over the second rail (rxe1).
# Prints PASS/FAIL lines and a tally; exits non-zero when anything failed.
# Every client runs under timeout and every server is capped and killed at
# the end, so a hung tool fails a check instead of hanging the bed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dev=${FABRIC_DEV:?run this inside the fabric bed: tests/fabric/bed $0}
addr=${FABRIC_ADDR:?}
hosts=${FABRIC_HOSTS:-1}
peer=${FABRIC_PEER:-}
on_peer=$here/on-peer
work=$(mktemp -d /tmp/bed-selftest.XXXXXX)
passed=0
failed=0
servers=()
cleanup() {
  local pid
  for pid in "${servers[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
show() { sed 's/^/    | /' "$1" | tail -n 20; }

# check NAME CMD...: CMD (capped at 60 s) must succeed; its output is shown
# only when it fails.
check() {
  local name=$1 rc=0; shift
  timeout -k 2 60 "$@" >"$work/check.out" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then pass "$name"; else fail "$name (exit $rc)"; show "$work/check.out"; fi
}

# listening PORT: an rdma_cm id of this host listens on PORT.
listening() {
  rdma resource show cm_id 2>/dev/null | grep -qE "state LISTEN .*src-addr [^ ]*:$1( |$)"
}
# wait_listen PORT: until a local listener is up (10 s at most).
wait_listen() {
  local until=$((SECONDS + 10))
  until listening "$1"; do
    [ $SECONDS -lt $until ] || return 1
    sleep 0.1
  done
}
# The same, on host B (its rdma_cm ids are not visible from here).
peer_wait_listen() {
  "$on_peer" run timeout 10 bash -c \
    "until rdma resource show cm_id | grep -qE 'state LISTEN .*src-addr [^ ]*:$1( |\$)'; do sleep 0.1; done" >/dev/null
}

# local_pair NAME PORT SERVER_CMD -- CLIENT_CMD: server here in the
# background, client here; both must exit 0.
local_pair() {
  local name=$1 port=$2; shift 2
  local srv=() rc=0 pid i
  while [ "$1" != -- ]; do srv+=("$1"); shift; done
  shift
  timeout -k 2 90 "${srv[@]}" >"$work/server.out" 2>&1 &
  pid=$!
  servers+=("$pid")
  if ! wait_listen "$port"; then
    fail "$name: server listens on port $port"; show "$work/server.out"
    kill -9 "$pid" 2>/dev/null; return
  fi
  check "$name: client" "$@"
  # The server ends by itself once its client is done; give it 30 s.
  for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  wait "$pid" || rc=$?
  if [ $rc -eq 0 ]; then pass "$name: server ends cleanly"; else fail "$name: server (exit $rc)"; show "$work/server.out"; fi
}

# peer_server_pair NAME PORT SERVER_CMD -- CLIENT_CMD: server on host B,
# client here.
peer_server_pair() {
  local name=$1 port=$2 job=srv.$$; shift 2
  local srv=()
  while [ "$1" != -- ]; do srv+=("$1"); shift; done
  shift
  "$on_peer" start "$job" timeout -k 2 90 "${srv[@]}"
  if ! peer_wait_listen "$port"; then
    fail "$name: server on host b listens on port $port"
    "$on_peer" kill "$job" KILL; "$on_peer" wait "$job" 10 >"$work/server.out" 2>&1; show "$work/server.out"
    return
  fi
  check "$name: client on host a" "$@"
  if "$on_peer" wait "$job" 30 >"$work/server.out" 2>&1; then
    pass "$name: server on host b ends cleanly"
  else
    fail "$name: server on host b (exit $?)"; show "$work/server.out"
  fi
}

# local_server_pair NAME PORT SERVER_CMD -- CLIENT_CMD: server here, client
# on host B.
local_server_pair() {
  local name=$1 port=$2; shift 2
  local srv=()
  while [ "$1" != -- ]; do srv+=("$1"); shift; done
  shift
  local_pair "$name" "$port" "${srv[@]}" -- "$on_peer" run timeout -k 2 50 "$@"
}

echo "# bed: $hosts host(s), $dev on ${FABRIC_NETDEV:-?}, $addr${peer:+, peer $peer}"
check "$dev is listed by rdma link, state ACTIVE" bash -c "rdma link show $dev/1 | grep -q 'state ACTIVE'"
check "$dev port 1 is PORT_ACTIVE (ibv_devinfo)" bash -c "ibv_devinfo -d $dev -i 1 | grep -q PORT_ACTIVE"
check "FABRIC_OUT is writable" bash -c 'd=${FABRIC_OUT:?}; echo ok >"$d/.bed-selftest" && rm "$d/.bed-selftest"'

if [ "$hosts" -eq 1 ]; then
  local_pair "rping -C 10 -V" 7174 rping -s -a "$addr" -C 10 -V -- rping -c -a "$addr" -C 10 -V
  local_pair "udaddy" 7174 udaddy -- udaddy -s "$addr"
  local_pair "ucmatose" 7471 ucmatose -- ucmatose -s "$addr"
else
  check "host b answers on-peer run" "$on_peer" run rdma link show "$dev/1"
  peer_server_pair "rping -C 10 -V, a to b" 7174 rping -s -a "$peer" -C 10 -V -- rping -c -a "$peer" -C 10 -V
  local_server_pair "udaddy, b to a" 7174 udaddy -- udaddy -s "$addr"
  peer_server_pair "ucmatose, a to b" 7471 ucmatose -- ucmatose -s "$peer"
  check "${FABRIC_DEV2:?}, the second rail, is listed by rdma link, state ACTIVE" \
    bash -c "rdma link show $FABRIC_DEV2/1 | grep -q 'state ACTIVE'"
  peer_server_pair "rping -C 10 -V over the second rail, a to b" 7174 \
    rping -s -a "$FABRIC_PEER2" -C 10 -V -- rping -c -a "$FABRIC_PEER2" -C 10 -V
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
