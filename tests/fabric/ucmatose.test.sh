#!/usr/bin/env bash
# ucmatose in the Soft-RoCE guest: ours with ours, ours with rdma-core's in
# both directions for several -c/-C/-S, -m, JSON, and a count mismatch that
# must end with the loss reported.
. "$(dirname "$0")/lib.sh" "$@"

# pair NAME SERVER_BIN CLIENT_BIN ARGS...: one run with the same options on
# both sides; both must end with status 0.
pair() {
  local name=$1 srv=$2 cli=$3; shift 3
  start_bg srv "$srv/ucmatose" "$@"
  wait_cm_listen 7471 || { fail "$name: no listener"; stop_bg srv KILL; return; }
  expect_rc 0 "$name: client" "$cli/ucmatose" -s "$ADDR" "$@"
  expect_bg srv 0 "$name: server"
}

for c in 1 2 3 4 5 6 7 8; do
  pair "ours -> ours -c $c" "$BIN" "$BIN" -c "$c"
done
for c in 1 4 8; do
  pair "ours -> rdma-core -c $c" "$ORIG" "$BIN" -c "$c"
  pair "rdma-core -> ours -c $c" "$BIN" "$ORIG" -c "$c"
done
for args in "-C 1 -S 1" "-C 50 -S 4096" "-C 0" "-S 0" "-c 3 -C 100 -S 64" "-c 2 -C 20 -S 65536"; do
  # shellcheck disable=SC2086
  pair "ours -> ours $args" "$BIN" "$BIN" $args
  # shellcheck disable=SC2086
  pair "ours -> rdma-core $args" "$ORIG" "$BIN" $args
  # shellcheck disable=SC2086
  pair "rdma-core -> ours $args" "$BIN" "$ORIG" $args
done
pair "ours -> ours --verify -c 4" "$BIN" "$BIN" -c 4 -C 30 -S 300 --verify
pair "ours -> ours -m" "$BIN" "$BIN" -c 3 -m
pair "ours -> rdma-core -m" "$ORIG" "$BIN" -c 3 -m
pair "rdma-core -> ours -m" "$BIN" "$ORIG" -c 3 -m
pair "ours -> ours -t 32 -a 14" "$BIN" "$BIN" -c 2 -t 32 -a 14

# Our server with --verify accepts rdma-core's payloads (unfilled, or echoes
# of the last message it received) as unverified, not as failures.
start_bg srv "$BIN/ucmatose" -c 2 --verify -j
wait_cm_listen 7471
expect_rc 0 "rdma-core client -> our --verify server" "$ORIG/ucmatose" -s "$ADDR" -c 2
expect_bg srv 0 "our --verify server accepts unfilled payloads"
check "unfilled payloads counted as unverified" json_check "$(bg_out srv)" \
  'd["counts"]["received"] == 20 and d["counts"]["verify_failures"] == 0 and d["counts"]["unverified"] >= 18'

# Human output: the original's lines, in order.
start_bg srv "$BIN/ucmatose"
wait_cm_listen 7471
run_capped 60 "$BIN/ucmatose" -s "$ADDR"
check "client prints the original's lines" diff -u - "$LAST_OUT" <<'OUT'
cmatose: starting client
cmatose: connecting
receiving data transfers
sending replies
data transfers complete
test complete
return status 0
OUT
wait_bg srv 30
check "server prints the original's lines" diff -u - "$(bg_out srv)" <<'OUT'
cmatose: starting server
initiating data transfers
completing sends
receiving data transfers
data transfers complete
cmatose: disconnecting
disconnected
test complete
return status 0
OUT

# JSON: one document each side, with counts and step timings.
start_bg srv "$BIN/ucmatose" -c 4 -C 5 -j
wait_cm_listen 7471
expect_rc 0 "JSON client run" "$BIN/ucmatose" -s "$ADDR" -c 4 -C 5 -j --verify
wait_bg srv 30
check "JSON client document" json_check "$LAST_OUT" \
  'd["tool"] == "ucmatose" and d["role"] == "client" and d["ok"] is True and d["exit_code"] == 0 and d["error"] is None
   and d["counts"] == {"connections": 4, "connected": 4, "expected": 20, "sent": 20, "received": 20, "lost": 0,
                       "verify_failures": 0, "unverified": 0}
   and len(d["connections"]) == 4
   and all(k in d["steps_us"] for k in ("create_id", "resolve_addr", "resolve_route", "create_qp", "connect", "disconnect", "destroy"))
   and all(d["steps_us"][k]["min"] <= d["steps_us"][k]["mean"] <= d["steps_us"][k]["max"] for k in d["steps_us"])
   and all(d["steps_us"][k]["samples"] == 4 for k in d["steps_us"])
   and d["connections_per_second"] > 0 and all(c["connected"] and c["error"] is None for c in d["connections"])'
check "JSON server document" json_check "$(bg_out srv)" \
  'd["role"] == "server" and d["ok"] is True and d["counts"]["connected"] == 4 and d["counts"]["received"] == 20
   and "connect" in d["steps_us"] and "create_qp" in d["steps_us"]'

# Count mismatch: the client expects more than the server sends. Both end,
# bounded, and the client reports the loss.
start_bg srv "$BIN/ucmatose" -C 5 --timeout 3000
wait_cm_listen 7471
expect_rc 1 "mismatch: client ends with test_failed (1)" "$BIN/ucmatose" -s "$ADDR" -C 10 --timeout 3000 -j
check "mismatch: loss reported with counts" json_check "$LAST_OUT" \
  'd["ok"] is False and d["exit_code"] == 1 and d["counts"]["expected"] == 10 and d["counts"]["received"] == 5
   and d["counts"]["lost"] == 5 and "5 lost" in d["error"]'
wait_bg srv 30 || true

# The other way round: the server sends 10 to a client with 3 receives
# (its 4th send fails: no receiver-not-ready retries) and gets few replies.
start_bg srv "$BIN/ucmatose" -C 10 --timeout 2000 -j
wait_cm_listen 7471
run_capped 30 "$BIN/ucmatose" -s "$ADDR" -C 3 --timeout 2000
expect_bg srv 1 "mismatch: server ends with test_failed (1)" 30
check "mismatch: server reports the loss in JSON" json_check "$(bg_out srv)" \
  'd["ok"] is False and d["counts"]["expected"] == 10 and d["counts"]["lost"] >= 7
   and d["counts"]["received"] + d["counts"]["lost"] == 10 and d["counts"]["sent"] < 10'

# A server short of clients serves the ones that came, then ends with timeout (6).
start_bg srv "$BIN/ucmatose" -c 2 --timeout 2000
wait_cm_listen 7471
expect_rc 0 "the one client of a short server is served" "$BIN/ucmatose" -s "$ADDR" -c 1 --timeout 5000
expect_bg srv 6 "server short of clients: timeout (6)" 30

# The same against rdma-core's server (which sends 5 and never needs more).
start_bg srv "$ORIG/ucmatose" -C 5
wait_cm_listen 7471
run_capped 60 "$BIN/ucmatose" -s "$ADDR" -C 10 --timeout 3000
rc=$?
check "mismatch vs rdma-core: exit 1" test "$rc" -eq 1
check "mismatch vs rdma-core: stderr names the loss" grep -q "5 received, 5 lost" "$LAST_ERR"
stop_bg srv KILL

# No server: prompt, connect_failed (5).
t0=$SECONDS
expect_rc 5 "no server: connect_failed (5)" "$BIN/ucmatose" -s "$ADDR" -c 3
check "no server: ends within 5 s" test $((SECONDS - t0)) -le 5
run_capped 30 "$ORIG/ucmatose" -s "$ADDR"
grep -v '^return status' "$LAST_OUT" > "$WORK/orig-no-server.out"
run_capped 30 "$BIN/ucmatose" -s "$ADDR"
check "no server: the original's lines, no data phase" diff -u "$WORK/orig-no-server.out" <(grep -v '^return status' "$LAST_OUT")

# One connection of two refused: as in the original the test ends there,
# without a data phase, and the established one is disconnected.
start_bg srv "$BIN/ucmatose" -c 1 --timeout 3000
wait_cm_listen 7471
t0=$SECONDS
expect_rc 5 "one of two refused: connect_failed (5)" "$BIN/ucmatose" -s "$ADDR" -c 2 --timeout 3000
check "one of two refused: no data phase" bash -c '! grep -q "receiving data transfers" "$1"' _ "$LAST_OUT"
check "one of two refused: ends within 10 s" test $((SECONDS - t0)) -le 10
stop_bg srv KILL
expect_rc 2 "bad format is a usage error" "$BIN/ucmatose" -f bogus
expect_rc 2 "bad port space is a usage error" "$BIN/ucmatose" -P udp
expect_rc 4 "unresolvable name: resolve_failed (4)" "$BIN/ucmatose" -s no-such-host.invalid

# Both ways of making QPs: with one RDMA device a server makes its clients'
# QPs ahead; with two, a wildcard server cannot know which device a client
# comes in on and makes each QP when its client comes, while a server bound
# to an address still makes them ahead.
ip link add ucm-x0 type veth peer name ucm-x1 && ip link set ucm-x0 up && ip link set ucm-x1 up
rdma link add rxe_ucm type rxe netdev ucm-x0
check "a second RDMA device" test "$(rdma link show | wc -l)" -ge 2
pair "two devices: QPs made on arrival" "$BIN" "$BIN" -c 4 -C 5 --verify
pair "two devices, rdma-core's client: QPs made on arrival" "$BIN" "$ORIG" -c 4 -C 5
pair "two devices, bound server: QPs made ahead" "$BIN" "$BIN" -c 4 -C 5 --verify -b "$ADDR"
rdma link delete rxe_ucm
ip link del ucm-x0

finish
