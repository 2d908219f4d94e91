#!/usr/bin/env bash
# ucmatose in the Soft-RoCE guest: ours with ours, ours with rdma-core's in
# both directions for several -c/-C/-S, -m, JSON (every document and line
# validated against its schema), a count mismatch that must end with the
# loss reported, and a phase that a flood of refused requests cannot keep
# alive.
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

for c in 1 2 5 8; do
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
# rdma-core reads -t with strtoul: a word is type of service 0, not an error.
pair "ours -> ours -t tcp" "$BIN" "$BIN" -c 2 -t tcp
check "-t tcp: a warning on stderr" grep -q "^ucmatose: warning: -t 'tcp' is not a number: type of service 0" "$LAST_ERR"

# Our server with --verify accepts rdma-core's payloads (unfilled, or echoes
# of the last message it received) as unverified, not as failures.
start_bg srv "$BIN/ucmatose" -c 2 --verify -j
wait_cm_listen 7471
expect_rc 0 "rdma-core client -> our --verify server" "$ORIG/ucmatose" -s "$ADDR" -c 2
expect_bg srv 0 "our --verify server accepts unfilled payloads"
check "unfilled payloads counted as unverified" json_check "$(bg_out srv)" \
  'd["summary"]["received"] == 20 and d["summary"]["verify_errors"] == 0 and d["summary"]["unverified"] >= 18
   and all(c["ok"] for c in d["results"])'

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
STEPS='("create_id", "resolve_addr", "resolve_route", "create_qp", "connect", "disconnect", "destroy")'
start_bg srv "$BIN/ucmatose" -c 4 -C 5 -j
wait_cm_listen 7471
expect_rc 0 "JSON client run" "$BIN/ucmatose" -s "$ADDR" -c 4 -C 5 -j --verify
wait_bg srv 30
check "JSON client document" json_check "$LAST_OUT" \
  'd["tool"] == "ucmatose" and d["role"] == "client" and d["ok"] is True and d["exit_code"] == 0 and d["error"] is None
   and {k: d["summary"][k] for k in ("connections", "connections_established", "expected", "sent", "received", "lost",
                                     "verify_errors", "unverified")}
       == {"connections": 4, "connections_established": 4, "expected": 20, "sent": 20, "received": 20, "lost": 0,
           "verify_errors": 0, "unverified": 0}
   and d["options"]["server"] == "'"$ADDR"'" and d["options"]["count"] == 5 and d["options"]["verify"] is True
   and d["options"]["tos"] is None and len(d["results"]) == 4 and [c["index"] for c in d["results"]] == [0, 1, 2, 3]
   and all(d["summary"]["steps"][k]["count"] == 4 for k in '"$STEPS"')
   and all(s["min_us"] <= s["p50_us"] <= s["p99_us"] <= s["max_us"] for s in d["summary"]["steps"].values())
   and d["summary"]["setup_us"] > 0 and d["summary"]["connections_per_second"] > 0
   and all(c["ok"] and c["established"] and c["error"] is None and c["expected"] == 5 and c["lost"] == 0
           and c["peer"] == "'"$ADDR"':7471" and all(c[k + "_us"] is not None for k in '"$STEPS"') for c in d["results"])'
check "JSON server document" json_check "$(bg_out srv)" \
  'd["role"] == "server" and d["ok"] is True and d["summary"]["connections_established"] == 4 and d["summary"]["received"] == 20
   and d["options"]["server"] is None and d["summary"]["steps"]["connect"]["count"] == 4
   and d["summary"]["steps"]["create_qp"]["count"] == 4 and d["summary"]["steps"]["create_id"]["count"] == 0
   and d["summary"]["steps"]["create_id"]["p50_us"] is None
   and all(c["connect_us"] is not None and c["create_qp_us"] is not None and c["create_id_us"] is None for c in d["results"])'

# --json=lines: a connected event per connection as it comes up, a result
# event per connection once it is torn down, the document last.
start_bg srv "$BIN/ucmatose" -c 3 -C 5 --json=lines
wait_cm_listen 7471
expect_rc 0 "--json=lines client run" "$BIN/ucmatose" -s "$ADDR" -c 3 -C 5 --json=lines
expect_bg srv 0 "--json=lines server run" 30
for side in client server; do
  out=$LAST_OUT; [ "$side" = server ] && out=$(bg_out srv)
  check "--json=lines $side: connected and result events, then the document" json_lines_check "$out" \
    'd["ok"] is True and d["role"] == "'"$side"'" and all(l["role"] == "'"$side"'" for l in lines[:-1])
     and sorted(l["connected"]["index"] for l in lines if l.get("event") == "connected") == [0, 1, 2]
     and all(l["connected"]["connect_us"] > 0 for l in lines if l.get("event") == "connected")
     and [l["result"] for l in lines if l.get("event") == "result"] == d["results"]
     and len(d["results"]) == 3 and lines[-2]["event"] == "result"
     and max(i for i, l in enumerate(lines) if l.get("event") == "connected")
         < min(i for i, l in enumerate(lines) if l.get("event") == "result")'
done

# Count mismatch: the client expects more than the server sends. Both end,
# bounded, and the client reports the loss.
start_bg srv "$BIN/ucmatose" -C 5 --timeout 3000
wait_cm_listen 7471
expect_rc 1 "mismatch: client ends with test_failed (1)" "$BIN/ucmatose" -s "$ADDR" -C 10 --timeout 3000 -j
check "mismatch: loss reported with counts" json_check "$LAST_OUT" \
  'd["ok"] is False and d["exit_code"] == 1 and d["summary"]["expected"] == 10 and d["summary"]["received"] == 5
   and d["summary"]["lost"] == 5 and "5 lost" in d["error"]
   and d["results"][0]["ok"] is False and d["results"][0]["lost"] == 5 and "5 of 10 messages" in d["results"][0]["error"]'
wait_bg srv 30 || true

# The other way round: the server sends 10 to a client with 3 receives
# (its 4th send fails: no receiver-not-ready retries) and gets few replies.
start_bg srv "$BIN/ucmatose" -C 10 --timeout 2000 -j
wait_cm_listen 7471
run_capped 30 "$BIN/ucmatose" -s "$ADDR" -C 3 --timeout 2000
expect_bg srv 1 "mismatch: server ends with test_failed (1)" 30
check "mismatch: server reports the loss in JSON" json_check "$(bg_out srv)" \
  'd["ok"] is False and d["summary"]["expected"] == 10 and d["summary"]["lost"] >= 7
   and d["summary"]["received"] + d["summary"]["lost"] == 10 and d["summary"]["sent"] < 10'

# A server short of clients serves the ones that came, then ends with timeout (6).
start_bg srv "$BIN/ucmatose" -c 2 --timeout 2000 -j
wait_cm_listen 7471
expect_rc 0 "the one client of a short server is served" "$BIN/ucmatose" -s "$ADDR" -c 1 --timeout 5000
expect_bg srv 6 "server short of clients: timeout (6)" 30
check "server short of clients: the one served, the shortage named" json_check "$(bg_out srv)" \
  'd["exit_code"] == 6 and "1 of 2 clients connected" in d["error"] and len(d["results"]) == 1
   and d["results"][0]["ok"] is True and d["summary"]["received"] == 10'

# A flood of refused connection requests does not keep a phase alive: the
# server's client expects more than it sends (-C 20 against -C 10), so the
# server's receiving phase makes no progress, while another client keeps
# asking for connections beyond -c. The phase ends --timeout after its last
# progress all the same. (5 s: time for the flood's clients to start in the
# guest when its CPU is short, so that the server sees many requests.)
start_bg srv "$BIN/ucmatose" -c 1 -C 10 --timeout 5000
wait_cm_listen 7471
start_bg stall "$BIN/ucmatose" -s "$ADDR" -c 1 -C 20 --timeout 60000 --json=lines
# The stalled client holds the server's one place before the flood starts.
for _ in $(seq 200); do grep -q '"event":"connected"' "$(bg_out stall)" && break; sleep 0.1; done
touch "$WORK/hammer"
(
  while [ -e "$WORK/hammer" ]; do
    timeout 20 "$BIN/ucmatose" -s "$ADDR" -c 10 -C 0 --timeout 2000 >/dev/null 2>&1
  done
) &
hammer=$!
t0=$SECONDS
expect_bg srv 1 "flooded server: its stalled phase still ends, loss reported (1)" 45
check "flooded server: ends within 25 s, not at the stalled client's 60 s" test $((SECONDS - t0)) -le 25
rm -f "$WORK/hammer"
wait "$hammer"
check "flooded server: it refused requests meanwhile" \
  test "$(grep -c '^cmatose: failing connection request$' "$(bg_out srv)")" -ge 10
check "flooded server: the loss is named" grep -q "^ucmatose: error: messages: 10 sent, 0 received, 10 lost" "$(bg_err srv)"
stop_bg stall KILL

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
expect_rc 5 "no server, JSON: connect_failed (5)" "$BIN/ucmatose" -s "$ADDR" -c 3 -j
check "no server, JSON: every connection failed, each says why" json_check "$LAST_OUT" \
  'd["ok"] is False and "REJECTED" in d["error"] and len(d["results"]) == 3
   and all(not c["ok"] and not c["established"] and "REJECTED" in c["error"] for c in d["results"])
   and d["summary"]["connections_established"] == 0 and d["summary"]["setup_us"] is None'
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
expect_rc 2 "-t beyond 255 is a usage error" "$BIN/ucmatose" -s "$ADDR" -t 256 -j
check "-t beyond 255: a usage document, nothing run" json_check "$LAST_OUT" \
  'd["exit_code"] == 2 and "-t 256" in d["error"] and d["results"] == []'
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
