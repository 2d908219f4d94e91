#!/usr/bin/env bash
# Fault tests on the two-host bed (tests/fabric/bed --hosts 2): every tool
# runs across the wire while netem drops or delays A's packets, while its
# peer on B is killed, and while B's link goes down. Each run must end
# within its cap with a documented exit status and, with -j, one JSON
# document that says what was lost; a hang or a crash fails the test.
# Ends with "faults: runs=N faults=N hangs=N crashes=N".
. "$(dirname "$0")/../fabric/lib.sh" "$@"

PEER=${FABRIC_PEER:?run this on a two-host bed: tests/fabric/bed --hosts 2}
ON_PEER=$(cd "$(dirname "$0")/../fabric" && pwd)/on-peer
RESPONDER=$(cd "$(dirname "$0")/../acm" && pwd)/acm_responder.py
GROUP=239.1.2.3
runs=0 faults=0 hangs=0 crashes=0

netem() { tc qdisc replace dev eth0 root netem "$@"; }
clear_netem() { tc qdisc del dev eth0 root 2>/dev/null || true; }

# peer_start NAME 'CMD': runs CMD on B in bash, where $FABRIC_ADDR is B's
# address and $BIN our binaries.
peer_start() { "$ON_PEER" start "$1" bash -c "BIN=$BIN; $2" >/dev/null; }
peer_stop() { "$ON_PEER" kill "$1" KILL >/dev/null 2>&1 || true; "$ON_PEER" wait "$1" 5 >/dev/null 2>&1 || true; }
peer_link() { "$ON_PEER" run ip link set eth0 "$1" >/dev/null; }
# Soft-RoCE on B may not recover from a link that dropped under traffic:
# its port comes back ACTIVE, but its CM answers no further request. Each
# link-down case therefore leaves B a fresh rxe0 on the same interface
# (same GIDs), so the next case meets a working peer.
peer_rxe_renew() {
  "$ON_PEER" run bash -c 'rdma link delete "$FABRIC_DEV" && rdma link add "$FABRIC_DEV" type rxe netdev eth0' >/dev/null
}
# peer_serve PORT 'CMD': starts the server CMD on B as srv (as peer_start)
# and waits until it listens on rdma_cm port PORT: a client started
# earlier would meet no listener, not the fault under test.
peer_serve() { peer_start srv "$2"; peer_wait_cm LISTEN "$1" || fail "server on B listens on port $1"; }
# peer_connected PORT: waits until B's server has a connection on PORT, so
# that a fault injected next meets a run under way. B's listing was once
# seen to miss the connections of a loaded bed's later cases while its
# clients ran connected; the client's own id on A, connected to PORT,
# then says so too (the wait shows B's ids for the record).
peer_connected() {
  peer_wait_cm CONNECT "$1" && return
  if cm_id_seen CONNECT "$1" dst 5; then
    echo "    | A's client is connected to port $1: the case goes on"
    return
  fi
  fail "B's server has a connection on port $1"
  tail -c 600 "$(bg_err cli)" | sed 's/^/    | client: /'
}

# The ACM stand-in on B, serving TCP port 6125 once this returns.
start_responder() {
  peer_start acm 'python3 '"$RESPONDER"' --tcp 6125 --tcp-host 0.0.0.0 --ready /tmp/acm.ready & r=$!
    until [ -e /tmp/acm.ready ]; do sleep 0.1; done; echo ready; wait $r'
  local until=$((SECONDS + 20))
  until "$ON_PEER" out acm | grep -q '^ready$'; do
    [ $SECONDS -lt $until ] || { fail "ACM responder on B did not start"; return 1; }
    sleep 0.2
  done
}

# until_peer_says NAME LINE: until B's command NAME has printed LINE (20 s at most).
until_peer_says() {
  local until=$((SECONDS + 20))
  until "$ON_PEER" out "$1" | grep -qx "$2"; do
    [ $SECONDS -lt $until ] || return 1
    sleep 0.2
  done
}

# B's port is ACTIVE again after its link came back (10 s at most).
wait_peer_active() {
  local until=$((SECONDS + 10))
  while [ $SECONDS -lt $until ]; do
    "$ON_PEER" run bash -c 'ibv_devinfo -d $FABRIC_DEV | grep -q PORT_ACTIVE' && return 0
    sleep 0.5
  done
  return 1
}

# judge NAME RC ALLOWED OUT ERR [JSON_CHECK]: a status 124 from the cap is
# a hang, a signal (other than SIGINT's 130) or a sanitizer report a
# crash; otherwise RC must be one of ALLOWED and OUT pass JSON_CHECK.
judge() {
  local name=$1 rc=$2 allowed=$3 out=$4 err=$5 expr=${6:-}
  runs=$((runs + 1))
  [ "$rc" -ne 0 ] && faults=$((faults + 1))
  if [ "$rc" -eq 124 ]; then
    hangs=$((hangs + 1)); fail "$name: hung (capped)"; show "$out" "$err"; return
  fi
  if { [ "$rc" -ge 128 ] && [ "$rc" -ne 130 ]; } || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$err"; then
    crashes=$((crashes + 1)); fail "$name: crashed (exit $rc)"; show "$out" "$err"; return
  fi
  if [[ " $allowed " != *" $rc "* ]]; then
    fail "$name: exit $rc, want one of $allowed"; show "$out" "$err"; return
  fi
  pass "$name: exit $rc"
  [ -z "$expr" ] || check "$name: JSON says what happened" json_check "$out" "$expr"
}

# fault NAME ALLOWED CAP JSON_CHECK CMD...: runs CMD on A, capped.
fault() {
  local name=$1 allowed=$2 cap=$3 expr=$4 rc=0; shift 4
  run_capped "$cap" "$@" || rc=$?
  judge "$name" "$rc" "$allowed" "$LAST_OUT" "$LAST_ERR" "$expr"
}

# The JSON every tool owes: the common keys and its counts.
common='d["tool"] and d["exit_code"] == d["exit_code"] and ("error" in d) and d["ok"] == (d["exit_code"] == 0)'
rping_json="$common"' and d["summary"]["pings"] >= 0 and "rtt" in d["summary"]'
ud_json="$common"' and d["summary"]["sent"] >= 0 and d["summary"]["lost"] == d["summary"]["expected"] - min(d["summary"]["received"], d["summary"]["expected"])'
mckey_json="$ud_json"
rc_json="$common"' and d["summary"]["lost"] >= 0 and len(d["results"]) > 0'
acm_json="$common"' and "results" in d'

# The bed's remote shell first: a command on B that outlives on-peer's
# bound, or whose on-peer is signalled (a launcher's timeout), is ended on
# B, and B notes what it was doing (the evidence a hang in the cases below
# leaves), and the output it printed so far comes back.
rc=0
FABRIC_PEER_TIMEOUT=3 "$ON_PEER" run bash -c 'echo started; exec sleep 60' >"$WORK/bound.out" 2>&1 || rc=$?
check "on-peer: a command past its bound is ended (124)" test "$rc" -eq 124
check "on-peer: its output so far comes back" grep -qx started "$WORK/bound.out"
check "on-peer: B noted what it was doing" grep -q "^--- process .*sleep 60" "$FABRIC_JOB"/peer/run.*.why
rm -f "$FABRIC_JOB"/peer/run.*
"$ON_PEER" run bash -c 'echo started; exec sleep 60' >"$WORK/hup.out" 2>&1 &
for _ in $(seq 100); do grep -qs started "$FABRIC_JOB"/peer/run.*.out && break; sleep 0.1; done
sleep 0.5  # from its echo to its exec
kill -HUP $!
rc=0
wait $! || rc=$?
check "on-peer: signalled, it ends B's command with the signal's status (129)" test "$rc" -eq 129
check "on-peer: signalled, its output so far comes back" grep -qx started "$WORK/hup.out"
check "on-peer: signalled, B noted what it was doing" grep -q "^--- process .*sleep 60" "$FABRIC_JOB"/peer/run.*.why
rm -f "$FABRIC_JOB"/peer/run.*

# The network conditions each tool meets; RC retransmits, so loss may cost
# only time there, while UD must count what went missing.
conditions=("loss 10%" "loss 30%" "delay 50ms")

for cond in "${conditions[@]}"; do
  netem $cond
  peer_serve 7174 '$BIN/rping -s -a $FABRIC_ADDR --timeout 5000'
  fault "rping, $cond" "0 5 6" 90 "$rping_json" "$BIN/rping" -c -a "$PEER" -C 20 --timeout 5000 -j
  peer_stop srv

  peer_serve 7174 '$BIN/udaddy -b $FABRIC_ADDR -C 50 --timeout 3000'
  fault "udaddy, $cond" "0 1 6" 60 "$ud_json" "$BIN/udaddy" -s "$PEER" -C 50 --timeout 3000 -j
  peer_stop srv

  # B's agent merges the streams: stderr follows a marker line.
  peer_start rcv '$BIN/mckey -m '$GROUP' -b $FABRIC_ADDR -C 50 --timeout 3000 -j 2>/tmp/rcv.err; rc=$?; echo @@stderr; cat /tmp/rcv.err; exit $rc'
  sleep 2
  fault "mckey sender, $cond" "0" 30 "" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 50 --delay 0 --timeout 3000
  rc=0; "$ON_PEER" wait rcv 30 >"$WORK/rcv.all" 2>&1 || rc=$?
  sed '/^@@stderr$/,$d' "$WORK/rcv.all" >"$WORK/rcv.out"
  sed '1,/^@@stderr$/d' "$WORK/rcv.all" >"$WORK/rcv.err"
  judge "mckey receiver on B, $cond" "$rc" "0 1" "$WORK/rcv.out" "$WORK/rcv.err" "$mckey_json"

  peer_serve 7471 '$BIN/ucmatose -b $FABRIC_ADDR -c 4 -C 20 --timeout 5000'
  fault "ucmatose, $cond" "0 1 5 6" 90 "$rc_json" "$BIN/ucmatose" -s "$PEER" -c 4 -C 20 --timeout 5000 -j
  peer_stop srv

    start_responder
  fault "ib_acme, $cond" "0 1 5 6" 60 "$acm_json" "$BIN/ib_acme" -S "$PEER" -d 10.0.0.5 -C 100 --timeout 2000 -j
  peer_stop acm
  clear_netem
done

# Every RC ACK lost (BTH opcode 0x11, dropped on both hosts): no SEND of
# either side of the sweep's ping check completes, but each reply proves
# that its ping arrived, so the pair passes on both sides within its time.
drop_acks='tc qdisc add dev eth0 root handle 1: prio && tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100% &&
  tc filter add dev eth0 parent 1:0 protocol ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff match u8 0x11 0xff at 28 flowid 1:3'
pair=(--hosts a,b --address-file /tmp/pair.addresses -C 2 --retests 0 --timeout 3000 -j)
addresses="a $ADDR
b $PEER"
printf '%s\n' "$addresses" >/tmp/pair.addresses
"$ON_PEER" run bash -c "printf '%s\n' '$addresses' >/tmp/pair.addresses"
# sweep_pair NAME EXPR CAP ARGS...: a two-host sweep of ARGS, rank 1 on B
# and rank 0 here, each within CAP seconds; both sides must exit 0 with a
# document that EXPR holds of.
sweep_pair() {
  local name=$1 expr=$2 cap=$3 rc=0
  shift 3
  peer_start sweep '$BIN/fabric-sweep --rank 1 '"$*"' 2>/tmp/sweep.err; rc=$?; echo @@stderr; cat /tmp/sweep.err; exit $rc'
  fault "$name" "0" "$cap" "$expr" "$BIN/fabric-sweep" --rank 0 "$@"
  "$ON_PEER" wait sweep "$cap" >"$WORK/sweep.all" 2>&1 || rc=$?
  sed '/^@@stderr$/,$d' "$WORK/sweep.all" >"$WORK/sweep.out"
  sed '1,/^@@stderr$/d' "$WORK/sweep.all" >"$WORK/sweep.err"
  judge "$name, on B" "$rc" "0" "$WORK/sweep.out" "$WORK/sweep.err" "$expr"
}
bash -c "$drop_acks" && "$ON_PEER" run bash -c "$drop_acks" || fail "ACKs dropped on both hosts"
sweep_pair "sweep's ping, every ACK lost" "$common"' and [(r["ok"], r["pings"]) for r in d["results"]] == [(True, 2)]' 30 \
  "${pair[@]}"
clear_netem; "$ON_PEER" run tc qdisc del dev eth0 root >/dev/null

# Every RTU of the connect check lost (a CM MAD to QP 1, attribute
# 0x0014, dropped on both hosts): the client is established once it sends
# its RTU, and disconnects at once; the server, which never saw the RTU,
# sees the disconnection first: still a connection made, on both sides.
drop_rtu='tc qdisc add dev eth0 root handle 1: prio && tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100% &&
  tc filter add dev eth0 parent 1:0 protocol ip u32 match ip protocol 17 0xff match ip dport 4791 0xffff \
    match u32 0x00000001 0x00ffffff at 32 match u8 0x07 0xff at 49 match u16 0x0014 0xffff at 64 flowid 1:3'
# dropped: how many packets the netem band of the filter above dropped.
dropped='tc -s qdisc show dev eth0 | sed -n "/netem 30:/,/dropped/s/.*(dropped \([0-9]*\).*/\1/p"'
bash -c "$drop_rtu" && "$ON_PEER" run bash -c "$drop_rtu" || fail "RTUs dropped on both hosts"
sweep_pair "sweep's connect, every RTU lost" "$common"' and [(r["ok"], r["connections"]) for r in d["results"]] == [(True, 3)]' \
  60 --hosts a,b --address-file /tmp/pair.addresses -C 3 --retests 0 --timeout 5000 --check connect -j
check "sweep's connect: RTUs were dropped" test "$(( $(bash -c "$dropped") + $("$ON_PEER" run bash -c "$dropped") ))" -ge 3
clear_netem; "$ON_PEER" run tc qdisc del dev eth0 root >/dev/null

# The UD check's first SIDR reply lost (a CM MAD to QP 1, attribute
# 0x0018): the client sends another request after a second without an
# answer (its kernel would ask again only some 4 s later, after the 3.5 s
# --timeout here), and the server, still waiting for its first datagram,
# answers with the same QP: the pair passes with every datagram. The
# server's host (A in this pair) drops its first reply and lifts the
# filter at once (tests/faults/drop-first-sidr-reply), so that the answer
# to the request sent again goes out.
DROP_FIRST_SIDR_REPLY=$(cd "$(dirname "$0")" && pwd)/drop-first-sidr-reply
# sidr_watch_here / sidr_watch_on_peer: the first SIDR reply of this host
# (watcher sidr here) or of B (sidr there) dropped, once this returns.
sidr_watch_here() {
  start_bg sidr "$DROP_FIRST_SIDR_REPLY" 40
  local until=$((SECONDS + 20))
  until grep -qx ready "$(bg_out sidr)"; do
    [ $SECONDS -lt $until ] || { fail "A's first SIDR reply set to drop"; return 1; }
    sleep 0.1
  done
}
sidr_watch_on_peer() {
  peer_start sidr "$DROP_FIRST_SIDR_REPLY 40"
  until_peer_says sidr ready || fail "B's first SIDR reply set to drop"
}
sidr_watch_here
ud_pair=(--hosts a,b --address-file /tmp/pair.addresses -C 2 --retests 0 --timeout 3500 --check ud -j)
peer_start sweep '$BIN/fabric-sweep --rank 1 '"${ud_pair[*]}"' 2>/tmp/sweep.err; rc=$?; echo @@stderr; cat /tmp/sweep.err; exit $rc'
start_bg sweep "$BIN/fabric-sweep" --rank 0 "${ud_pair[@]}"
check "a SIDR reply of A's was dropped" wait_bg sidr 45
ud_pair_ok="$common"' and [(r["ok"], r["pings"]) for r in d["results"]] == [(True, 2)]'
rc=0; wait_bg sweep 60 || rc=$?
judge "sweep's ud, the first SIDR reply lost" "$rc" "0" "$(bg_out sweep)" "$(bg_err sweep)" "$ud_pair_ok"
rc=0; "$ON_PEER" wait sweep 30 >"$WORK/sweep.all" 2>&1 || rc=$?
sed '/^@@stderr$/,$d' "$WORK/sweep.all" >"$WORK/sweep.out"
sed '1,/^@@stderr$/d' "$WORK/sweep.all" >"$WORK/sweep.err"
judge "sweep's ud on B, the first SIDR reply lost" "$rc" "0" "$WORK/sweep.out" "$WORK/sweep.err" "$ud_pair_ok"
check "sweep's ud: the client's answer came with the request it sent again a second on" bash -c \
  'grep -ho "\"connect_us\": *[0-9.]*" "$@" | awk -F: "\$2 >= 1000000 && \$2 < 3500000 {seen = 1} END {exit !seen}"' _ "$(bg_out sweep)" "$WORK/sweep.out"

# The same for udaddy: our server on B, rdma-core's client here (which
# waits as long as its kernel asks); B's first SIDR reply dropped.
sidr_watch_on_peer
peer_start srv '$BIN/udaddy -b $FABRIC_ADDR -c 2 -C 10 --timeout 15000 -j 2>/tmp/srv.err; rc=$?; echo @@stderr; cat /tmp/srv.err; exit $rc'
peer_wait_cm LISTEN 7174 || fail "udaddy server on B listens on port 7174"
start_bg cli /usr/bin/udaddy -s "$PEER" -c 2 -C 10
check "udaddy: a SIDR reply of B's was dropped" "$ON_PEER" wait sidr 45
rc=0; wait_bg cli 40 || rc=$?
check "udaddy (rdma-core's client), the first SIDR reply lost: every datagram came back" \
  bash -c '[ "$1" -eq 0 ] && grep -qx "data transfers complete" "$2"' _ "$rc" "$(bg_out cli)"
rc=0; "$ON_PEER" wait srv 30 >"$WORK/srv.all" 2>&1 || rc=$?
sed '/^@@stderr$/,$d' "$WORK/srv.all" >"$WORK/srv.out"
sed '1,/^@@stderr$/d' "$WORK/srv.all" >"$WORK/srv.err"
judge "udaddy server on B, its first SIDR reply lost" "$rc" "0" "$WORK/srv.out" "$WORK/srv.err" \
  "$ud_json"' and [(r["state"], r["received"]) for r in d["results"]] == [("connected", 10)] * 2'

# The peer killed mid-run: each tool's wait for it is bounded.
peer_serve 7174 '$BIN/rping -s -a $FABRIC_ADDR --timeout 5000'
start_bg cli "$BIN/rping" -c -a "$PEER" -C 0 --timeout 3000 -j
peer_connected 7174; sleep 1; peer_stop srv
rc=0; wait_bg cli 30 || rc=$?
judge "rping, server killed" "$rc" "5 6" "$(bg_out cli)" "$(bg_err cli)" "$rping_json"' and d["summary"]["pings"] > 0'

peer_serve 7174 '$BIN/udaddy -b $FABRIC_ADDR -C 100000 -S 1000 --timeout 3000'
start_bg cli "$BIN/udaddy" -s "$PEER" -C 100000 -S 1000 --timeout 3000 -j
peer_connected 7174; sleep 1; peer_stop srv
# The client sends all it was asked to, at the emulated wire's pace (10 s
# here, 60 s seen on a loaded machine), before its bounded wait for echoes.
rc=0; wait_bg cli 150 || rc=$?
judge "udaddy, server killed" "$rc" "1 6" "$(bg_out cli)" "$(bg_err cli)" "$common"

# The receiver's wait covers the time B's sender takes to start.
start_bg rcv "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 1000000 --timeout 8000 -j
sleep 2
peer_start snd '$BIN/mckey -m '$GROUP' -b $FABRIC_ADDR -s -C 1000000 --delay 0'
until_peer_says snd "initiating data transfers"
sleep 1; peer_stop snd
rc=0; wait_bg rcv 30 || rc=$?
judge "mckey receiver, sender killed" "$rc" "1" "$(bg_out rcv)" "$(bg_err rcv)" "$mckey_json"' and d["summary"]["received"] > 0'

peer_serve 7471 '$BIN/ucmatose -b $FABRIC_ADDR -c 2 -C 10000 -S 60000 --timeout 3000'
start_bg cli "$BIN/ucmatose" -s "$PEER" -c 2 -C 10000 -S 60000 --timeout 3000 -j
peer_connected 7471; sleep 1; peer_stop srv
rc=0; wait_bg cli 60 || rc=$?
judge "ucmatose, server killed" "$rc" "1 5 6" "$(bg_out cli)" "$(bg_err cli)" "$rc_json"

start_responder
start_bg cli "$BIN/ib_acme" -S "$PEER" -d 10.0.0.5 -C 1000000 --timeout 2000 -j
sleep 2; peer_stop acm
rc=0; wait_bg cli 30 || rc=$?
judge "ib_acme, service killed" "$rc" "1 5 6" "$(bg_out cli)" "$(bg_err cli)" "$acm_json"

# B's link goes down mid-run, and comes back for the next tool.
# link_down_case NAME ALLOWED JSON_CHECK PORT CMD...: runs CMD on A against
# what runs on B; PORT is the server port on B to see a connection on
# first, or - for a run without one. Ends B's side before the next case.
link_down_case() {
  local name=$1 allowed=$2 expr=$3 port=$4 job; shift 4
  start_bg cli "$@"
  if [ "$port" = - ]; then sleep 2; else peer_connected "$port"; sleep 1; fi
  peer_link down
  local rc=0; wait_bg cli 150 || rc=$?  # udaddy's sends, as above
  peer_link up
  judge "$name" "$rc" "$allowed" "$(bg_out cli)" "$(bg_err cli)" "$expr"
  # The device goes only once no process uses it.
  for job in srv snd acm; do peer_stop "$job"; done
  peer_rxe_renew || fail "$name: B's rxe device could not be made anew"
  wait_peer_active || fail "$name: B's port did not come back"
}

peer_serve 7174 '$BIN/rping -s -a $FABRIC_ADDR --timeout 5000'
link_down_case "rping, link down" "5 6" "$rping_json" 7174 "$BIN/rping" -c -a "$PEER" -C 0 --timeout 3000 -j

# Enough messages that the transfer is still under way when the link drops.
peer_serve 7174 '$BIN/udaddy -b $FABRIC_ADDR -C 100000 -S 1000 --timeout 3000'
link_down_case "udaddy, link down" "1 6" "$common" 7174 "$BIN/udaddy" -s "$PEER" -C 100000 -S 1000 --timeout 3000 -j

peer_start snd '$BIN/mckey -m '$GROUP' -b $FABRIC_ADDR -s -C 1000000 --delay 1000'
link_down_case "mckey receiver, link down" "1" "$mckey_json" - "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 1000000 --timeout 3000 -j

peer_serve 7471 '$BIN/ucmatose -b $FABRIC_ADDR -c 2 -C 10000 -S 60000 --timeout 3000'
link_down_case "ucmatose, link down" "1 5 6" "$rc_json" 7471 "$BIN/ucmatose" -s "$PEER" -c 2 -C 10000 -S 60000 --timeout 3000 -j

start_responder
link_down_case "ib_acme, link down" "1 5 6" "$acm_json" - "$BIN/ib_acme" -S "$PEER" -d 10.0.0.5 -C 1000000 --timeout 2000 -j

echo "faults: runs=$runs faults=$faults hangs=$hangs crashes=$crashes"
finish
