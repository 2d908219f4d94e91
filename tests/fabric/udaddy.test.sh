#!/usr/bin/env bash
# udaddy in the Soft-RoCE guest: ours against ours and against rdma-core's
# in both directions, JSON, the MTU check, and runs that lose messages.
. "$(dirname "$0")/lib.sh" "$@"

PORT=7174
# Generous: only a failing run waits this long, and the guest is slow.
T="--timeout 30000"

# pair NAME SERVER_RC CLIENT_RC "SERVER CMD" "CLIENT CMD": runs a server and
# a client against it, checking both exit statuses.
pair() {
  local name=$1 src=$2 crc=$3 server=$4 client=$5
  start_bg srv $server
  if ! wait_cm_listen "$PORT"; then
    fail "$name: server did not listen"
    stop_bg srv KILL
    return
  fi
  expect_rc "$crc" "$name: client" $client
  cp "$LAST_OUT" "$WORK/client.out"
  cp "$LAST_ERR" "$WORK/client.err"
  expect_bg srv "$src" "$name: server" 30
}

# One, two, several and the most connections, in all three pairings.
for c in 1 2 5 8; do
  pair "ours<->ours -c $c" 0 0 "$BIN/udaddy -b $ADDR -c $c $T" "$BIN/udaddy -s $ADDR -c $c $T"
  pair "ours client, rdma-core server -c $c" 0 0 "$ORIG/udaddy -b $ADDR -c $c" "$BIN/udaddy -s $ADDR -c $c $T"
  pair "rdma-core client, ours server -c $c" 0 0 "$BIN/udaddy -b $ADDR -c $c $T" "$ORIG/udaddy -s $ADDR -c $c"
done

for cs in "-C 1 -S 1" "-C 50 -S 1024" "-C 200 -S 512" "-C 0" "-C 5 -S 0" "-C 1000 -S 64"; do
  pair "ours<->ours $cs" 0 0 "$BIN/udaddy -b $ADDR $cs $T" "$BIN/udaddy -s $ADDR $cs $T"
  pair "ours client, rdma-core server $cs" 0 0 "$ORIG/udaddy -b $ADDR $cs" "$BIN/udaddy -s $ADDR $cs $T"
  pair "rdma-core client, ours server $cs" 0 0 "$BIN/udaddy -b $ADDR $cs $T" "$ORIG/udaddy -s $ADDR $cs"
done

# The same human lines as rdma-core's.
pair "human output" 0 0 "$BIN/udaddy -b $ADDR -c 2 $T" "$BIN/udaddy -s $ADDR -c 2 $T"
printf '%s\n' "udaddy: starting client" "udaddy: connecting" "initiating data transfers" \
  "receiving data transfers" "data transfers complete" "test complete" "return status 0" >"$WORK/want-client"
printf '%s\n' "udaddy: starting server" "receiving data transfers" "sending replies" \
  "data transfers complete" "test complete" "return status 0" >"$WORK/want-server"
check "client lines match rdma-core's" diff "$WORK/want-client" "$WORK/client.out"
check "server lines match rdma-core's" diff "$WORK/want-server" "$(bg_out srv)"

# Payload verification between two of ours; our server still takes
# rdma-core's unfilled payloads without --verify.
pair "--verify ours<->ours" 0 0 "$BIN/udaddy -b $ADDR -c 2 -C 30 --verify $T" "$BIN/udaddy -s $ADDR -c 2 -C 30 --verify $T"
pair "--verify fails on rdma-core's replies" 0 1 "$ORIG/udaddy -b $ADDR" "$BIN/udaddy -s $ADDR --verify $T"
check "verify failure is named" grep -q "failed verification" "$WORK/client.out"

# JSON: one document on each side, common keys and per-connection results.
pair "json" 0 0 "$BIN/udaddy -b $ADDR -c 3 -C 20 -j $T" "$BIN/udaddy -s $ADDR -c 3 -C 20 -j $T"
check "client json shape" json_check "$WORK/client.out" \
  '(d["tool"] == "udaddy" and d["role"] == "client" and d["ok"] and d["exit_code"] == 0 and d["error"] is None
   and d["options"]["connections"] == 3 and d["options"]["count"] == 20 and d["options"]["size"] == 100
   and d["options"]["port"] == 7174 and d["options"]["port_space"] == "udp" and d["options"]["tos"] is None
   and d["summary"]["mtu"] == 1024 and d["summary"]["sent"] == 60 and d["summary"]["received"] == 60
   and d["summary"]["lost"] == 0 and d["summary"]["failed"] == 0 and d["summary"]["messages_per_second"] > 0
   and d["summary"]["connect"]["count"] == 3 and d["summary"]["connect"]["p50_us"] > 0
   and len(d["results"]) == 3
   and all(r["kind"] == "connection" and r["ok"] and r["state"] == "connected" and r["qkey"] == 0x01234567
           and r["received"] == 20 and r["lost"] == 0 and r["qpn"] > 0 and r["remote_qpn"] > 0
           and r["peer"] == "'"$ADDR"':7174" for r in d["results"]))'
check "server json shape" json_check "$(bg_out srv)" \
  '(d["role"] == "server" and d["ok"] and d["summary"]["received"] == 60 and d["summary"]["sent"] == 60
   and all(r["qkey"] == 0x01234567 and r["remote_qpn"] > 0 and r["peer"].startswith("'"$ADDR"':") for r in d["results"]))'

# --json=lines: connected events as they happen, a result event per
# connection, the document last; against rdma-core's server too.
pair "json lines" 0 0 "$ORIG/udaddy -b $ADDR -c 2" "$BIN/udaddy -s $ADDR -c 2 --json=lines $T"
check "lines: events then the document" json_lines_check "$WORK/client.out" \
  '([l["event"] for l in lines[:-1]].count("connected") == 2 and [l["event"] for l in lines[:-1]].count("result") == 2
    and all(l["role"] == "client" for l in lines) and d["ok"] and d["summary"]["received"] == 20
    and all(l["connected"]["peer"] == "'"$ADDR"':7174" for l in lines if l.get("event") == "connected"))'

# -S larger than the path MTU is refused before anything is sent.
expect_rc 3 "client refuses -S over the MTU" "$BIN/udaddy" -s "$ADDR" -S 2000 $T
check "client names the MTU" grep -q "message size 2000 is larger than the path MTU 1024" "$LAST_ERR"
expect_rc 3 "server refuses -S over the MTU" "$BIN/udaddy" -b "$ADDR" -S 2000 $T
check "server names the MTU" grep -q "larger than the path MTU 1024" "$LAST_ERR"
expect_rc 3 "json on oversize" "$BIN/udaddy" -s "$ADDR" -S 4096 -j $T
check "oversize json" json_check "$LAST_OUT" 'd["exit_code"] == 3 and "MTU 1024" in d["error"]'

# A peer sending datagrams larger than the agreed size is a protocol error
# on the receiving side, named as such, never a crash.
pair "oversize datagrams" 7 1 "$BIN/udaddy -b $ADDR -S 100 --timeout 3000" "$BIN/udaddy -s $ADDR -S 1000 --timeout 3000"
check "oversize datagram named" grep -q "a datagram larger than our 100-byte messages arrived" "$(bg_err srv)"

# Count mismatch: the server takes 5 and replies 5; the client waits for
# 10, and must end with the loss reported, never hang.
pair "client -C 10 vs server -C 5" 0 1 "$BIN/udaddy -b $ADDR -C 5 $T" "$BIN/udaddy -s $ADDR -C 10 --timeout 3000 -j"
check "client reports 5 lost" json_check "$WORK/client.out" \
  '(d["exit_code"] == 1 and d["summary"]["sent"] == 10 and d["summary"]["received"] == 5 and d["summary"]["lost"] == 5
    and "lost 5 of 10" in d["error"] and d["results"][0]["error"] == "received 5 of 10 messages, 5 lost")'
pair "server -C 10 vs client -C 5" 1 0 "$BIN/udaddy -b $ADDR -C 10 --timeout 3000" "$BIN/udaddy -s $ADDR -C 5 $T"
check "server names the loss" grep -q "received 5 of 10 messages, 5 lost" "$(bg_out srv)"
pair "our client -C 10 vs rdma-core server -C 5" 0 1 "$ORIG/udaddy -b $ADDR -C 5" "$BIN/udaddy -s $ADDR -C 10 --timeout 3000"
check "loss line" grep -q "received 5 of 10 messages, 5 lost" "$WORK/client.out"
pair "rdma-core client -C 5 vs our server -C 10" 1 0 "$BIN/udaddy -b $ADDR -C 10 --timeout 3000" "$ORIG/udaddy -s $ADDR -C 5"

# A server that expects two clients and gets one serves it, then says so.
pair "server -c 2, one client" 1 0 "$BIN/udaddy -b $ADDR -c 2 --timeout 3000" "$BIN/udaddy -s $ADDR -c 1 $T"
check "missing connection named" grep -q "1 of 2 connections arrived" "$(bg_err srv)"

# No server at all: bounded, with the reason. A server waits for its first
# client as long as it takes, and Ctrl-C still leaves a JSON document.
expect_rc 5 "no server: connect_failed" "$BIN/udaddy" -s "$ADDR" --timeout 3000
check "no server is named" grep -q "no udaddy server listens on $ADDR port 7174" "$LAST_ERR"
# A host name that cannot be looked up is quoted escaped: a terminal
# escape in it reaches stderr as text.
expect_rc 4 "a host name with a terminal escape: resolve_failed" "$BIN/udaddy" -s $'h\e]0;pwned\a.invalid' --timeout 3000
check "the host name is escaped" grep -qF 'h\x1b]0;pwned\x07.invalid' "$LAST_ERR"
expect_rc 130 "server ends on SIGINT" timeout --preserve-status -s INT 3 "$BIN/udaddy" -b "$ADDR" -j
check "interrupted json" json_check "$LAST_OUT" 'd["exit_code"] == 130 and d["role"] == "server" and not d["ok"]'

# --port moves both sides off the default.
PORT=7300 pair "--port" 0 0 "$BIN/udaddy -b $ADDR --port 7300 $T" "$BIN/udaddy -s $ADDR --port 7300 $T"

expect_rc 2 "unknown -P is a usage error" "$BIN/udaddy" -P tcp
expect_rc 2 "bad -t is a usage error" "$BIN/udaddy" -s "$ADDR" -t 300
expect_rc 2 "usage error json" "$BIN/udaddy" -j -c 0
check "usage json" json_check "$LAST_OUT" 'd["exit_code"] == 2 and d["tool"] == "udaddy"'
# rdma-core reads -t tcp as type of service 0 (strtoul); public test suites
# call it that way.
pair "-t tcp reads as 0, as rdma-core's" 0 0 "$ORIG/udaddy -b $ADDR" "$BIN/udaddy -s $ADDR -t tcp -j $T"
check "-t tcp warns and reports tos 0" json_check "$WORK/client.out" 'd["ok"] and d["options"]["tos"] == 0'
check "-t tcp warning" grep -q "is not a number: type of service 0" "$WORK/client.err"

# Buffers past the documented limit once the device's queue depth is known:
# with --verify, 64 QPs x 16383 receive slots x 1040 bytes on rxe is over
# 1 GiB (without, a receive slot is its 40-byte GRH).
expect_rc 2 "buffers above 1 GiB: a usage error" "$BIN/udaddy" -s "$ADDR" -c 64 -C 100000 -S 1000 --verify $T
check "buffers: the error names the limit" grep -q "limit of 1024 MiB" "$LAST_ERR"

# A stranger on the wire, from another address of this host, sends to the
# server's QP before its client does: the server takes neither the
# stranger for its client nor the stranger's datagrams for messages; it
# answers its client, and counts the stranger.
DEV=$(ip -o -4 addr show | awk -v a="$ADDR" '$4 ~ "^"a"/" {print $2; exit}')
ip addr add 10.254.254.1/32 dev "$DEV"
sleep 1  # the GID table follows the address
pair "a stranger speaks first" 0 0 "$BIN/udaddy -b $ADDR -C 10 -j $T" "$BIN/../tests/ud_stranger 10.254.254.1 $ADDR 10"
check "the client got every reply" grep -q "^replies 10 of 10$" "$WORK/client.out"
check "the server counts the stranger's datagrams apart" json_check "$WORK/srv.out" \
  'd["ok"] and d["results"][0]["received"] == 10 and d["results"][0]["strangers"] == 5'
check "the server names the strangers on stderr" grep -q "ignored 5 datagrams from other senders" "$WORK/srv.err"

# The stranger sends datagrams as large as the MTU to a server that
# expects 64 bytes: every receive has room for them, so they are counted
# and dropped, and the server goes on serving its client.
pair "MTU-sized datagrams from a stranger" 0 0 "$BIN/udaddy -b $ADDR -C 10 -S 64 -j $T" \
  "$BIN/../tests/ud_stranger 10.254.254.1 $ADDR 10 64 1024"
check "the client got every reply despite them" grep -q "^replies 10 of 10$" "$WORK/client.out"
check "the server counts the oversize datagrams" json_check "$WORK/srv.out" \
  'd["ok"] and d["results"][0]["received"] == 10 and d["results"][0]["oversize"] == 5 and d["results"][0]["lost"] == 0'
check "the server names them on stderr" grep -q "dropped 5 datagrams larger than 64 bytes" "$WORK/srv.err"
# A stranger's flood does not hold a server's wait open: its client sends
# half of its messages and falls silent while the stranger floods the
# server for 60 s; the server gives up its wait after --timeout without a
# word from its client, as without the flood, and counts its loss.
start_bg srv "$BIN/udaddy" -b "$ADDR" -C 10 --timeout 2000 -j
if wait_cm_listen "$PORT"; then
  start_bg flood "$BIN/../tests/ud_stranger" 10.254.254.1 "$ADDR" 10 100 100 60000
  expect_bg srv 1 "a stranger's flood: the server ends with its loss" 45
  check "a stranger's flood: it was still flooding then" kill -0 "${_bg_pid[flood]}"
  check "a stranger's flood: the half that came, the loss and the strangers counted" json_check "$WORK/srv.out" \
    'd["results"][0]["received"] == 5 and d["results"][0]["lost"] == 5 and d["results"][0]["strangers"] > 100'
  stop_bg flood
else
  fail "a stranger's flood: the server did not listen"
  stop_bg srv KILL
fi
ip addr del 10.254.254.1/32 dev "$DEV"

finish
