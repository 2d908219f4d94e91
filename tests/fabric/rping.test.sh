#!/usr/bin/env bash
# rping in the Soft-RoCE guest: ours with ours, ours with rdma-core's in both
# directions, the persistent server, JSON, and the failure cases.
. "$(dirname "$0")/lib.sh" "$@"

# Interop both ways at every edge size, with verification.
for size in 23 64 1024 65535; do
  start_bg srv "$BIN/rping" -s -a "$ADDR" -S "$size"
  wait_cm_listen 7174
  expect_rc 0 "ours -> ours, -S $size -V" "$BIN/rping" -c -a "$ADDR" -C 20 -S "$size" -V
  expect_bg srv 0 "our server ends cleanly after -S $size"

  start_bg srv "$ORIG/rping" -s -a "$ADDR" -S "$size"
  wait_cm_listen 7174
  expect_rc 0 "ours -> rdma-core, -S $size -V" "$BIN/rping" -c -a "$ADDR" -C 20 -S "$size" -V
  expect_bg srv 0 "rdma-core server ends cleanly after -S $size"

  start_bg srv "$BIN/rping" -s -a "$ADDR" -S "$size"
  wait_cm_listen 7174
  expect_rc 0 "rdma-core -> ours, -S $size -V" "$ORIG/rping" -c -a "$ADDR" -C 20 -S "$size" -V
  expect_bg srv 0 "our server serves rdma-core's client at -S $size"
done

# Human output: the same lines as the original.
start_bg srv "$ORIG/rping" -s -a "$ADDR" -v
wait_cm_listen 7174
run_capped 30 "$BIN/rping" -c -a "$ADDR" -C 3 -v
check "client prints the original's ping data lines" \
  grep -qxF 'ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqr' "$LAST_OUT"
check "exactly 3 ping lines" test "$(grep -c '^ping data: ' "$LAST_OUT")" -eq 3
check "client's stderr: the original's disconnect line" diff -u - "$LAST_ERR" <<<'client DISCONNECT EVENT...'
wait_bg srv 20
check "rdma-core server saw the same data" grep -q '^server ping data: rdma-ping-2: CDEF' "$(bg_out srv)"

start_bg srv "$BIN/rping" -s -a "$ADDR" -v
wait_cm_listen 7174
run_capped 30 "$ORIG/rping" -c -a "$ADDR" -C 2 -v
wait_bg srv 20
check "our server prints 'server ping data:' lines" \
  grep -qxF 'server ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrs' "$(bg_out srv)"
check "our server's stderr: the original's two lines at the client's end" diff -u - "$(bg_err srv)" <<'ERR'
server DISCONNECT EVENT...
wait for RDMA_READ_ADV state 10
ERR

# IPv6 and the self-created QP (-q).
start_bg srv "$BIN/rping" -s -a "$FABRIC_ADDR6" -q
wait_cm_listen 7174
expect_rc 0 "IPv6 with -q both sides" "$BIN/rping" -c -a "$FABRIC_ADDR6" -C 5 -V -q
expect_bg srv 0 "IPv6 -q server ends cleanly"

# JSON: one document, with the documented keys.
start_bg srv "$BIN/rping" -s -a "$ADDR"
wait_cm_listen 7174
expect_rc 0 "JSON client run" "$BIN/rping" -c -a "$ADDR" -C 50 -V -j
check "JSON client document" json_check "$LAST_OUT" \
  'd["tool"] == "rping" and d["role"] == "client" and d["ok"] is True and d["exit_code"] == 0 and d["error"] is None
   and d["summary"]["pings"] == 50 and d["summary"]["verify_errors"] == 0 and d["options"]["size"] == 64
   and d["options"]["verify"] is True and d["results"][0]["ok"] is True and d["results"][0]["pings"] == 50
   and all(d["summary"]["rtt"][k + "_us"] > 0 for k in ("min", "p50", "p99", "p999", "max", "mean"))
   and d["summary"]["rtt"]["min_us"] <= d["summary"]["rtt"]["p50_us"] <= d["summary"]["rtt"]["p99_us"] <= d["summary"]["rtt"]["max_us"]'
wait_bg srv 20

# --json=lines: an endless run streams a line per ping and, on Ctrl-C, ends
# with the document on one line; memory stays flat however long it runs.
start_bg srv "$BIN/rping" -s -a "$ADDR" --json=lines
wait_cm_listen 7174
start_bg endless "$BIN/rping" -c -a "$ADDR" -C 0 -V -v --json=lines
for _ in $(seq 100); do [ "$(grep -c '"event":"ping"' "$(bg_out endless)")" -ge 300 ] && break; sleep 0.1; done
stop_bg endless INT
check "endless --json=lines: Ctrl-C gives exit 130" test "$(bg_rc endless)" -eq 130
check "endless --json=lines: ping events, then the document" json_lines_check "$(bg_out endless)" \
  'd["exit_code"] == 130 and d["error"] == "interrupted" and d["options"]["count"] == 0
   and lines[0]["event"] == "connected"
   and sum(1 for l in lines if l.get("event") == "ping") >= 300
   and all(l["ping"]["verified"] and l["ping"]["data"].startswith("rdma-ping-") for l in lines if l.get("event") == "ping")
   and [l["ping"]["seq"] for l in lines if l.get("event") == "ping"] == list(range(d["summary"]["pings"]))
   and lines[-2]["event"] == "result" and lines[-2]["result"] == d["results"][0]
   and d["summary"]["rtt"]["count"] == d["summary"]["pings"]'
# The client may stop in the middle of a ping: its server then ends with 5
# (the disconnect seen), 6 (not seen within --timeout) or 7 (its RDMA READ
# met the client's memory already gone); what matters here is its lines.
wait_bg srv 20
tail -n 1 "$(bg_out srv)" | cut -c1-300 | sed 's/^/    | server document: /'
check "server --json=lines: its own events and document" json_lines_check "$(bg_out srv)" \
  'd["role"] == "server" and d["exit_code"] in (0, 5, 6, 7) and lines[0]["event"] == "connected"
   and lines[0]["role"] == "server" and lines[-2]["event"] == "result"
   and sum(1 for l in lines if l.get("event") == "ping") == d["summary"]["pings"] >= 300'

# A reader that stops reading: the documented exit code, no crash, no hang.
start_bg srv "$BIN/rping" -s -a "$ADDR"
wait_cm_listen 7174
run_capped 60 bash -c "'$BIN/rping' -c -a '$ADDR' -C 0 --json=lines | head -n 5 >/dev/null; echo \"\${PIPESTATUS[0]}\""
check "reader gone: exit 9 (output_closed)" test "$(cat "$LAST_OUT")" = 9
wait_bg srv 20

# A single server serves one client: a second one is refused while the
# first goes on to a clean end.
start_bg srv "$BIN/rping" -s -a "$ADDR" -j
wait_cm_listen 7174
start_bg first "$BIN/rping" -c -a "$ADDR" -C 400 --interval 5 -V
sleep 1
expect_rc 5 "a second client of a single server is refused (5)" "$BIN/rping" -c -a "$ADDR" -C 1
expect_bg first 0 "the first client ends normally" 60
expect_bg srv 0 "the single server ends cleanly after refusing the second client"
check "single server: one result, the first client's" json_check "$(bg_out srv)" \
  'd["ok"] and len(d["results"]) == 1 and d["summary"]["pings"] == 400'

# No server: prompt, documented exit code, JSON still one document.
t0=$SECONDS
expect_rc 5 "no server: connect_failed (5)" "$BIN/rping" -c -a "$ADDR" -C 1
check "no server: ends within 5 s" test $((SECONDS - t0)) -le 5
expect_rc 5 "no server, JSON" "$BIN/rping" -c -a "$ADDR" -C 1 -j
check "no server: JSON error document" json_check "$LAST_OUT" \
  'd["ok"] is False and d["exit_code"] == 5 and "REJECTED" in d["error"] and d["summary"]["rtt"]["p50_us"] is None
   and d["results"][0]["ok"] is False and "REJECTED" in d["results"][0]["error"]'

# --retry: a client started before its server.
start_bg cli "$BIN/rping" -c -a "$ADDR" -C 5 -V --retry=20000
sleep 2
start_bg srv "$BIN/rping" -s -a "$ADDR"
expect_bg cli 0 "--retry connects once the server is up" 40
expect_bg srv 0 "server after --retry client ends cleanly"

# Bad input.
expect_rc 2 "size below 23 is a usage error" "$BIN/rping" -c -a "$ADDR" -S 22
expect_rc 2 "no side is a usage error" "$BIN/rping" -a "$ADDR"
expect_rc 2 "client without -a is a usage error" "$BIN/rping" -c
expect_rc 4 "unresolvable name: resolve_failed (4)" "$BIN/rping" -c -a no-such-host.invalid -C 1

# A name whose lookup hangs (a name server on the wire that never answers):
# --timeout bounds it as any other wait.
printf 'nameserver 10.0.0.99\noptions timeout:30 attempts:3\n' >"$WORK/resolv.conf"
t0=$SECONDS
expect_rc 6 "a hanging name lookup ends at --timeout (6)" unshare -m bash -c \
  "mount --bind '$WORK/resolv.conf' /etc/resolv.conf && exec '$BIN/rping' -c -a rping-test.example -C 1 --timeout 1500"
check "the hanging lookup gave up within 5 s" test $((SECONDS - t0)) -le 5
check "its error names the lookup" grep -qE "looking up rping-test.example: no answer .* within [0-9]+ ms" "$LAST_ERR"

# A larger client -S than the server's: a clear protocol error, no crash.
start_bg srv "$BIN/rping" -s -a "$ADDR" -S 64
wait_cm_listen 7174
run_capped 30 "$BIN/rping" -c -a "$ADDR" -S 1024 -C 1
expect_bg srv 7 "server refuses a client -S larger than its own (protocol, 7)"
check "server names both sizes" grep -q "1024 bytes, more than this server's -S 64" "$(bg_err srv)"

# A client whose first message is 64 bytes, not 16: longer than the
# server's receive, which the provider fails; the peer's protocol error.
start_bg srv "$BIN/rping" -s -a "$ADDR"
wait_cm_listen 7174
run_capped 30 "$BIN/../tests/hostile_rping" "$ADDR" long
expect_bg srv 7 "server: a 64-byte message is the peer's protocol error (7)"
check "server: the message's length named" grep -q "peer sent a message longer than 16 bytes" "$(bg_err srv)"

# Persistent server: concurrent clients, hostile clients, a killed client.
start_bg psrv "$BIN/rping" -s -P -a "$ADDR" --stats -j
wait_cm_listen 7174
for i in 1 2 3; do start_bg "c$i" "$BIN/rping" -c -a "$ADDR" -C 200 -V; done
start_bg "o1" "$ORIG/rping" -c -a "$ADDR" -C 200 -V
for mode in short oversize badrkey flood; do
  expect_rc 0 "hostile client ($mode) runs" "$BIN/../tests/hostile_rping" "$ADDR" "$mode"
done
start_bg victim "$BIN/rping" -c -a "$ADDR" -C 0
sleep 1
stop_bg victim KILL
for i in 1 2 3; do expect_bg "c$i" 0 "concurrent client $i unaffected" 60; done
expect_bg o1 0 "rdma-core client served concurrently" 60
expect_rc 0 "server still serves after hostile and killed clients" "$BIN/rping" -c -a "$ADDR" -C 10 -V
stop_bg psrv INT
check "persistent server: Ctrl-C is the interrupted exit code (130)" test "$(bg_rc psrv)" -eq 130
check "persistent server: one JSON document after Ctrl-C" json_check "$(bg_out psrv)" \
  'd["role"] == "server" and d["exit_code"] == 130 and d["error"] == "interrupted"
   and len(d["results"]) >= 8 and d["summary"]["pings"] >= 810
   and d["summary"]["failed"] == sum(1 for c in d["results"] if c["error"]) >= 4
   and any("4-byte message" in (c["error"] or "") for c in d["results"])
   and any("two messages while an RDMA READ" in (c["error"] or "") for c in d["results"])
   and any("more than this server" in (c["error"] or "") for c in d["results"])
   and any("remote access error" in (c["error"] or "").lower() or "access" in (c["error"] or "").lower() for c in d["results"])'

# A persistent server in line mode streams each connection as its result
# event and keeps only their totals: its last line's document sums every
# connection and lists none again, so that an endless run keeps constant
# memory.
start_bg lsrv "$BIN/rping" -s -P -a "$ADDR" --json=lines
wait_cm_listen 7174
for i in 1 2 3 4 5; do run_capped 30 "$BIN/rping" -c -a "$ADDR" -C 10; done
stop_bg lsrv INT
check "persistent server, line mode: five result events, their totals in the document" json_lines_check "$(bg_out lsrv)" \
  'd["exit_code"] == 130 and d["summary"]["connections"] == 5 and d["summary"]["pings"] == 50 and d["results"] == []
   and d["summary"]["rtt"]["count"] == 50 and len([l for l in lines if l.get("event") == "result"]) == 5'

finish
