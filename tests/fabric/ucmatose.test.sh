#!/usr/bin/env bash
# ucmatose in the Soft-RoCE guest: ours with ours and with rdma-core's in both
# directions, -m, JSON, and a count mismatch that must end with the loss.
. "$(dirname "$0")/lib.sh" "$@"

pair() {  # pair NAME SERVER_BIN CLIENT_BIN ARGS...: one run, both sides must pass
  local name=$1 srv=$2 cli=$3; shift 3
  start_bg srv "$srv" "$@"
  wait_cm_listen 7471
  expect_rc 0 "$name: client" "$cli" -s "$ADDR" "$@"
  expect_bg srv 0 "$name: server"
}

for args in "-c 1" "-c 4 -C 20 -S 1000" "-c 8 -C 5 -S 64"; do
  # shellcheck disable=SC2086
  pair "ours -> ours ($args)" "$BIN/ucmatose" "$BIN/ucmatose" $args
  # shellcheck disable=SC2086
  pair "ours -> rdma-core ($args)" "$ORIG/ucmatose" "$BIN/ucmatose" $args
  # shellcheck disable=SC2086
  pair "rdma-core -> ours ($args)" "$BIN/ucmatose" "$ORIG/ucmatose" $args
done
pair "ours -> ours, -m" "$BIN/ucmatose" "$BIN/ucmatose" -c 2 -m
pair "rdma-core -> ours, -m" "$BIN/ucmatose" "$ORIG/ucmatose" -c 2 -m
pair "ours -> rdma-core, -m" "$ORIG/ucmatose" "$BIN/ucmatose" -c 2 -m
pair "verified payload, ours both sides" "$BIN/ucmatose" "$BIN/ucmatose" -c 3 -C 10 --verify

# Default output: the original's lines, in order.
start_bg srv "$BIN/ucmatose"
wait_cm_listen 7471
run_capped 30 "$BIN/ucmatose" -s "$ADDR"
wait_bg srv 30
check "client prints the original's lines" diff <(printf '%s\n' "cmatose: starting client" "cmatose: connecting" \
  "receiving data transfers" "sending replies" "data transfers complete" "test complete" "return status 0") "$LAST_OUT"
check "server prints the original's lines" diff <(printf '%s\n' "cmatose: starting server" "initiating data transfers" \
  "completing sends" "receiving data transfers" "data transfers complete" "cmatose: disconnecting" "disconnected" \
  "test complete" "return status 0") "$(bg_out srv)"

# JSON with step timings.
start_bg srv "$BIN/ucmatose" -c 4
wait_cm_listen 7471
expect_rc 0 "JSON client" "$BIN/ucmatose" -s "$ADDR" -c 4 -j
wait_bg srv 30
check "JSON document with steps and counts" json_check "$LAST_OUT" '
  d["tool"] == "ucmatose" and d["role"] == "client" and d["ok"] and d["error"] is None
  and d["counts"]["connected"] == 4 and d["counts"]["received"] == 40 and d["counts"]["lost"] == 0
  and all(k in d["steps_us"] for k in ("create_id", "resolve_addr", "resolve_route", "create_qp", "connect", "disconnect", "destroy"))
  and d["connections_per_second"] > 0 and len(d["connections"]) == 4'

# Count mismatch: the server expects 10 replies and gets 3; it must end
# within its timeout and report the loss.
start_bg srv "$BIN/ucmatose" -C 10 --timeout 2000 -j
wait_cm_listen 7471
run_capped 30 "$BIN/ucmatose" -s "$ADDR" -C 3 --timeout 2000
expect_bg srv 1 "count mismatch: server ends with test_failed (1)" 30
check "count mismatch: loss reported in JSON" json_check "$(bg_out srv)" '
  d["ok"] is False and d["exit_code"] == 1 and d["counts"]["lost"] > 0 and d["counts"]["expected"] == 10'

# No server, and a server whose client never comes back.
expect_rc 5 "no server: connect_failed (5)" "$BIN/ucmatose" -s "$ADDR"
start_bg srv "$BIN/ucmatose" -c 2 --timeout 2000
wait_cm_listen 7471
run_capped 30 "$BIN/ucmatose" -s "$ADDR" -c 1 --timeout 2000
expect_bg srv 6 "server short of clients ends with timeout (6)" 30

expect_rc 2 "bad -P value is a usage error" "$BIN/ucmatose" -P udp

finish
