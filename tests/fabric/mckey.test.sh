#!/usr/bin/env bash
# mckey in the Soft-RoCE guest: our sender feeding rdma-core's receiver and
# the reverse, ours with ours on one and two QPs, send-only joins, JSON, the
# requests RoCE cannot serve, and a receiver that waits for nobody.
. "$(dirname "$0")/lib.sh" "$@"

GROUP=239.1.2.3
# Generous: only a failing run waits this long, and the guest is slow.
T="--timeout 20000"

# wait_joined NAME N: waits until background receiver NAME has printed N
# "joined" lines (10 s at most); a sender started earlier would send to a
# group nobody listens to yet.
wait_joined() {
  local name=$1 want=$2 until=$((SECONDS + 10))
  while [ $SECONDS -lt $until ]; do
    [ "$(grep -c '^mckey: joined dgid: ' "$(bg_out "$name")")" -ge "$want" ] && return 0
    sleep 0.1
  done
  return 1
}

# wait_attached: waits (10 s at most) until a QP of this host is attached
# to GROUP, for a receiver that prints no "joined" lines (-j): Soft-RoCE
# then listens on the Ethernet address the group's GID maps to.
# wait_attached GROUP waits for that group instead.
wait_attached() {
  local group=${1:-$GROUP} until=$((SECONDS + 10)) mac
  mac=$(printf '33:33:%02x:%02x:%02x:%02x' ${group//./ })
  until ip maddr show dev "$FABRIC_NETDEV" | grep -qE "link +$mac\b"; do
    [ $SECONDS -lt $until ] || return 1
    sleep 0.1
  done
}

# flow NAME QPS "RECEIVER CMD" "SENDER CMD": a receiver joined with QPS QPs,
# then a sender; both must end with 0.
flow() {
  local name=$1 qps=$2 receiver=$3 sender=$4
  start_bg rcv $receiver
  if ! wait_joined rcv "$qps"; then
    fail "$name: receiver did not join"
    stop_bg rcv KILL
    return
  fi
  expect_rc 0 "$name: sender" $sender
  cp "$LAST_OUT" "$WORK/sender.out"
  expect_bg rcv 0 "$name: receiver" 30
}

# rdma-core's mckey writes its lines through stdio: line-buffer them so
# that its "joined" line can be waited for.
ORIG_MCKEY="stdbuf -oL $ORIG/mckey"

# rdma-core's tools on both sides first: the lines ours must print.
flow "rdma-core -> rdma-core" 1 "$ORIG_MCKEY -m $GROUP -b $ADDR -C 5" "$ORIG_MCKEY -m $GROUP -b $ADDR -s -C 5"
cp "$(bg_out rcv)" "$WORK/orig-receiver.out"
cp "$WORK/sender.out" "$WORK/orig-sender.out"

flow "rdma-core sender -> our receiver" 1 "$BIN/mckey -m $GROUP -b $ADDR -C 5 $T" "$ORIG_MCKEY -m $GROUP -b $ADDR -s -C 5"
check "our receiver prints rdma-core's lines" diff "$WORK/orig-receiver.out" "$(bg_out rcv)"
flow "our sender -> rdma-core receiver" 1 "$ORIG_MCKEY -m $GROUP -b $ADDR -C 5" "$BIN/mckey -m $GROUP -b $ADDR -s -C 5 $T"
check "our sender prints rdma-core's lines" diff "$WORK/orig-sender.out" "$WORK/sender.out"
check "joined line names the group's GID" grep -qx "mckey: joined dgid: ::ffff:$GROUP mlid 0x0 sl 0" "$WORK/sender.out"

# Ours with ours; our sender need not wait the original's 3 s once the
# receivers have joined.
for c in 1 2; do
  flow "ours -> ours -c $c" "$c" "$BIN/mckey -m $GROUP -b $ADDR -c $c -C 20 $T" \
    "$BIN/mckey -m $GROUP -b $ADDR -s -c $c -C 20 --delay 0 $T"
done
flow "ours -> ours -S 1024 --verify" 1 "$BIN/mckey -m $GROUP -b $ADDR -C 50 -S 1024 --verify $T" \
  "$BIN/mckey -m $GROUP -b $ADDR -s -C 50 -S 1024 --delay 0 $T"
flow "send-only join (-o)" 1 "$BIN/mckey -m $GROUP -b $ADDR -C 10 $T" "$BIN/mckey -m $GROUP -b $ADDR -s -o -C 10 --delay 0 $T"
flow "rdma-core -o sender -> our receiver" 1 "$BIN/mckey -m $GROUP -b $ADDR -C 5 $T" "$ORIG_MCKEY -m $GROUP -b $ADDR -s -o -C 5"

# JSON: per-QP join results and the counts, from both roles.
start_bg rcv "$BIN/mckey" -m "$GROUP" -b "$ADDR" -c 2 -C 10 $T
wait_joined rcv 2
expect_rc 0 "json sender" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -c 2 -C 10 --delay 0 -j $T
check "sender json shape" json_check "$LAST_OUT" \
  '(d["tool"] == "mckey" and d["role"] == "sender" and d["ok"] and d["error"] is None and d["summary"]["sent"] == 20
   and d["options"]["group"] == "'$GROUP'" and d["options"]["unmapped_group"] is None and len(d["results"]) == 2
   and all(r["kind"] == "join" and r["ok"] and r["state"] == "joined" and r["dgid"] == "::ffff:'$GROUP'"
           and r["mlid"] == 0 and r["sl"] == 0 and r["qpn"] > 0 and r["qkey"] > 0 and r["join_us"] >= 0
           and r["sent"] == 10 for r in d["results"])
   and d["summary"]["join"]["count"] == 2 and d["summary"]["link_layer"] == "Ethernet")'
expect_bg rcv 0 "json sender's receiver" 30
start_bg rcv "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 10 --json=lines $T
check "json receiver attached to the group" wait_attached
expect_rc 0 "sender for a json receiver" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 10 $T
expect_bg rcv 0 "json receiver" 30
check "receiver json lines" json_lines_check "$(bg_out rcv)" \
  '([l["event"] for l in lines[:-1]] == ["joined", "result"] and lines[0]["joined"]["dgid"] == "::ffff:'$GROUP'"
    and lines[1]["result"] == d["results"][0]
    and d["role"] == "receiver" and d["ok"] and d["summary"]["received"] == 10 and d["summary"]["expected"] == 10
    and d["summary"]["lost"] == 0 and d["results"][0]["state"] == "joined" and d["results"][0]["received"] == 10)'

# A receiver with no sender ends after --timeout without progress, with
# the loss counted.
expect_rc 1 "receiver without a sender: test failed" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 5 --timeout 2000
check "loss line" grep -q "mckey: qp 0: received 0 of 5 messages, 5 lost" "$LAST_OUT"
check "loss on stderr" grep -q "lost 5 of 5 messages" "$LAST_ERR"
expect_rc 1 "json receiver without a sender" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -c 2 -C 5 --timeout 2000 -j
check "json names the loss" json_check "$LAST_OUT" \
  '(d["exit_code"] == 1 and d["summary"]["received"] == 0 and d["summary"]["expected"] == 10
    and d["summary"]["lost"] == 10 and d["summary"]["failed"] == 2 and not d["ok"]
    and all(not r["ok"] and r["error"] == "received 0 of 5 messages, 5 lost" for r in d["results"]))'

# A sender with larger datagrams than the receiver's -S: a protocol error,
# named, never a crash; shorter ones are counted, as the original does.
start_bg rcv "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 5 -S 100 --timeout 3000
wait_joined rcv 1
expect_rc 0 "oversize sender" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 5 -S 1000 --delay 0 $T
expect_bg rcv 7 "receiver of oversize datagrams: protocol error" 30
check "oversize datagram named" grep -q "a datagram larger than our 100-byte messages arrived" "$(bg_err rcv)"

# Datagrams as large as the MTU, to a receiver that expects 64 bytes, then
# the sender it waits for: every receive has room for the large ones, so
# they are counted and dropped, and the receiver still hears its sender.
# A group of its own: the last receiver of GROUP may still be leaving it,
# and its attachment would pass for this one's.
GROUP2=239.1.2.4
start_bg rcv "$BIN/mckey" -m "$GROUP2" -b "$ADDR" -C 5 -S 64 -j $T
wait_attached "$GROUP2" || fail "MTU-sized datagrams: the receiver did not join"
expect_rc 0 "MTU-sized sender" "$BIN/mckey" -m "$GROUP2" -b "$ADDR" -s -C 5 -S 1024 --delay 0 $T
expect_rc 0 "the receiver's own sender" "$BIN/mckey" -m "$GROUP2" -b "$ADDR" -s -C 5 -S 64 --delay 0 $T
expect_bg rcv 0 "receiver of MTU-sized datagrams: still served" 30
check "the receiver counts the oversize datagrams" json_check "$(bg_out rcv)" \
  'd["ok"] and d["results"][0]["received"] == 5 and d["results"][0]["oversize"] == 5'
check "the receiver names them on stderr" grep -q "dropped 5 datagrams larger than 64 bytes" "$(bg_err rcv)"

# Requests only InfiniBand can serve are refused, naming the link layer.
expect_rc 3 "-M on RoCE: no_device" "$BIN/mckey" -M ff0e::1234 -b "$ADDR" $T
check "-M names the link layer" grep -q "needs an InfiniBand port; rxe0 port 1 is Ethernet" "$LAST_ERR"
expect_rc 3 "SA-assigned group on RoCE: no_device" "$BIN/mckey" -m 0.0.0.0 -b "$ADDR" $T
check "SA group names the link layer" grep -q "needs an InfiniBand port" "$LAST_ERR"

# -l: rxe cannot block loopback; the run goes on and says so.
expect_rc 0 "-l falls back" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -l -C 0 $T
check "-l fallback is explained" grep -q "cannot block multicast loopback" "$LAST_ERR"
expect_rc 0 "-l json" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -l -C 0 -j $T
check "-l json says what happened" json_check "$LAST_OUT" \
  'd["options"]["no_loopback"] and d["results"][0]["loopback_blocked"] is False'
check "-l json warns on stderr" grep -q "cannot block multicast loopback" "$LAST_ERR"

# Bad input: clear errors and the documented codes.
expect_rc 3 "-S over the MTU" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -S 2000 $T
check "MTU named" grep -q "larger than the path MTU 1024" "$LAST_ERR"
expect_rc 2 "no group: usage" "$BIN/mckey" -b "$ADDR"
expect_rc 4 "a group name with a terminal escape: resolve_failed" "$BIN/mckey" -m $'g\e]0;pwned\a.invalid' -b "$ADDR" $T
check "the group name is escaped" grep -qF 'g\x1b]0;pwned\x07.invalid' "$LAST_ERR"
expect_rc 2 "-M without -b: usage" "$BIN/mckey" -M ff0e::1
expect_rc 2 "bad -p: usage" "$BIN/mckey" -m "$GROUP" -p 0x106
expect_rc 2 "usage json" "$BIN/mckey" -j
check "usage json document" json_check "$LAST_OUT" 'd["exit_code"] == 2 and d["tool"] == "mckey" and not d["ok"]'
expect_rc 4 "unresolvable group" "$BIN/mckey" -m no-such-group.invalid $T
expect_rc 130 "receiver ends on SIGINT" timeout --preserve-status -s INT 3 "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 5 -j
check "interrupted json" json_check "$LAST_OUT" 'd["exit_code"] == 130 and d["role"] == "receiver" and not d["ok"]'
# Interrupted after datagrams came, the document counts them.
start_bg rcv "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 100000 --timeout 60000 -j
sleep 2
expect_rc 0 "a sender of 50 to a receiver that waits for more" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 50 $T
sleep 1
stop_bg rcv INT
check "interrupted after 50 datagrams: exit 130" test "$(bg_rc rcv)" -eq 130
check "interrupted after 50 datagrams: the document counts them" json_check "$(bg_out rcv)" \
  'd["exit_code"] == 130 and d["summary"]["received"] == 50 and d["summary"]["lost"] == 100000 - 50'

# --delay: the sender waits that long before it sends, and Ctrl-C ends the wait.
t0=$SECONDS
expect_rc 0 "--delay 2000: sender" "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 1 --delay 2000 $T
check "--delay 2000: the sender waited before sending" test $((SECONDS - t0)) -ge 2
t0=$SECONDS
expect_rc 130 "--delay 60000: Ctrl-C ends the wait" timeout --preserve-status -s INT 3 "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s --delay 60000 $T
check "--delay 60000: ended at Ctrl-C, not after the delay" test $((SECONDS - t0)) -le 10

finish
