#!/usr/bin/env bash
# ib_acme against the ACM stand-in: rdma-core's own ib_acme proves the
# stand-in faithful, then ours must print the same for every option, exit
# as documented, and refuse every malformed reply with exit 7.
. "$(dirname "$0")/lib.sh" "$@"
OURS=$BIN/ib_acme

# The original's output for one known case, checked line by line: the
# stand-in speaks the protocol as ibacm does.
responder faithful
capped 20 "$WORK/orig" "$ORIG" -S "$WORK/faithful.sock" -d 10.0.0.5
if [ "$(cat "$WORK/orig")" = "Service: $WORK/faithful.sock
Destination: 10.0.0.5
Source: 10.0.0.1
Path information
  dgid: fe80::2:c903:0:6
  sgid: fe80::2:c903:0:1
  dlid: 6
  slid: 1
  flow label: 0x0
  hop limit: 0
  tclass: 0
  reversible: 1
  pkey: 0xffff
  sl: 0
  mtu: 4
  rate: 7
  packet lifetime: 18

return status 0x0" ]; then pass "rdma-core's ib_acme resolves through the stand-in"; else fail "rdma-core's ib_acme against the stand-in"; cat "$WORK/orig" "$WORK/orig.err"; fi
capped 20 "$WORK/orig" "$ORIG" -S "$WORK/faithful.sock" -e
if grep -q '^/.*,0x0002c90300abcdef,1,0xffff,1,ibacmp,10.0.0.1,fd00::1,acm-host$' "$WORK/orig"; then
  pass "rdma-core's ib_acme lists the stand-in's endpoints"; else fail "rdma-core's ib_acme -e"; cat "$WORK/orig"; fi
capped 20 "$WORK/orig" "$ORIG" -S "$WORK/faithful.sock" -P col
if grep -q '^Resolve Count : 1$' "$WORK/orig"; then pass "rdma-core's ib_acme reads the stand-in's counters"; else fail "rdma-core's ib_acme -P col"; cat "$WORK/orig"; fi
stop_responder "$RESPONDER_PID"

# same ARGS...: a fresh stand-in for each tool (the counters move), the
# same stdout and stderr, and our exit status as documented for theirs.
# With -V ours may add one line, its error line naming what failed.
same() {
  local args=("$@") orc=0 rc=0 want
  responder cmp
  capped 60 "$WORK/orig" "$ORIG" -S "$WORK/cmp.sock" "${args[@]}" || orc=$?
  stop_responder "$RESPONDER_PID"
  responder cmp
  capped 60 "$WORK/ours" "$OURS" -S "$WORK/cmp.sock" "${args[@]}" || rc=$?
  stop_responder "$RESPONDER_PID"
  # Theirs exits with the last result (255 for -1); ours 0, or 1 when any
  # destination failed.
  want=0
  [ "$orc" -ne 0 ] && want=1
  grep -Eqi 'failed|not available' "$WORK/ours" && want=1
  local ours_err=$WORK/ours.err
  if [[ " ${args[*]} " == *" -V "* ]]; then
    grep -v '^ib_acme: error: ' "$WORK/ours.err" >"$WORK/ours.err-V" || true
    ours_err=$WORK/ours.err-V
  fi
  if ! diff -u "$WORK/orig" "$WORK/ours" >"$WORK/diff"; then
    fail "same output: ib_acme ${args[*]}"; sed 's/^/    | /' "$WORK/diff" | head -20
  elif ! diff -u "$WORK/orig.err" "$ours_err" >"$WORK/diff"; then
    fail "same stderr: ib_acme ${args[*]}"; sed 's/^/    | /' "$WORK/diff" | head -20
  elif [ "$rc" -ne "$want" ]; then
    fail "exit status of ib_acme ${args[*]}: $rc (theirs $orc, want $want)"
  else
    pass "same output: ib_acme ${args[*]} (exit $rc)"
  fi
}

same -d 10.0.0.5
same -d 10.0.0.250
same -d fd00::7
same -d 10.0.0.[1-3,05]
same -s 10.0.0.1 -d 10.0.0.9
same -s 10.0.1.1 -d 10.0.0.[8-9]
same -s 10.0.9.9 -d 10.0.0.8
same -s fd00::1 -d 10.0.0.8
same -f i -d not-an-address
same -f n -s acm-host -d node[1-3]
same -f n -d node4
same -f n -s acm-host -d unknown
same -f l -d 5
same -f l -s 1 -d [4-6]
same -f l -d 2000
same -f g -d fe80::2:c903:0:9
same -f g -d fe80::1:2
same -f g -d zz::zz
same -d 10.0.0.5 -v
same -f l -d 7 -v
same -d 10.0.0.5 -c
same -d 10.0.0.5 -C 5
same -f n -s acm-host -d node1 -C 3
same -P
same -P col
same -P 1
same -P 2
same -P all
same -P s -s 10.0.1.1
same -P s -s 10.0.9.9
same -f n -P s -s acm-host-2
same -V -P s -s acm-host-1
same -e
same -e 1
same -e 2
same -e 4
same -e -P
same -d 10.0.0.5 -P -e
same -V -d 10.0.0.5

# A destination the service does not know: the original's stderr stays
# empty, and so does ours; the count of failed lookups is in the JSON and,
# with -V, on stderr.
same -f i -d 10.0.0.250
same -f i -d 10.0.0.[5,250]
responder unknown
rc=0; capped 20 "$WORK/u" "$OURS" -S "$WORK/unknown.sock" -f i -d 10.0.0.250 -j || rc=$?
if [ "$rc" -eq 1 ] && json_check "$WORK/u" 'd["error"] == "1 of 1 lookups failed" and d["summary"]["failed"] == 1'; then
  pass "unknown destination: the JSON counts the failed lookup"
else fail "unknown destination JSON (exit $rc)"; cat "$WORK/u"; fi
rc=0; capped 20 "$WORK/u" "$OURS" -S "$WORK/unknown.sock" -f i -d 10.0.0.250 -V || rc=$?
if [ "$rc" -eq 1 ] && [ "$(cat "$WORK/u.err")" = "ib_acme: error: 1 of 1 lookups failed" ]; then
  pass "unknown destination: -V names the count on stderr"
else fail "unknown destination -V (exit $rc)"; cat "$WORK/u.err"; fi
stop_responder "$RESPONDER_PID"

# Services: a list, and one that is not there.
responder multi
capped 20 "$WORK/orig" "$ORIG" -S "$WORK/multi.sock" -S "$WORK/nothere.sock" -d 10.0.0.5; orc=$?
rc=0; capped 20 "$WORK/ours" "$OURS" -S "$WORK/multi.sock" -S "$WORK/nothere.sock" -d 10.0.0.5 || rc=$?
if diff -u "$WORK/orig" "$WORK/ours" >"$WORK/diff" && [ "$rc" -eq 5 ]; then pass "unreachable service: same output, exit 5"
else fail "unreachable service (exit $rc, theirs $orc)"; sed 's/^/    | /' "$WORK/diff"; fi
stop_responder "$RESPONDER_PID"

# TCP: the service on 127.0.0.1 at the port the port file names.
if ! ss -ltn 2>/dev/null | grep -q ':6125 '; then
  timeout -k 2 120 "$PY" "$RESPONDER" --tcp 6125 --ready "$WORK/tcp.ready" >"$WORK/tcp.log" 2>&1 &
  tcp_pid=$!; _pids+=("$tcp_pid")
  for _ in $(seq 100); do [ -e "$WORK/tcp.ready" ] && break; sleep 0.05; done
  capped 20 "$WORK/orig" "$ORIG" -S 127.0.0.1 -d 10.0.0.5 -e
  capped 20 "$WORK/ours" "$OURS" -S 127.0.0.1 -d 10.0.0.5 -e --port-file "$WORK/none"
  if diff -u "$WORK/orig" "$WORK/ours" >"$WORK/diff" && grep -q dgid "$WORK/ours"; then pass "TCP service on port 6125: same output"
  else fail "TCP service"; sed 's/^/    | /' "$WORK/diff"; fi
  echo "$(( 6125 ))" >/dev/null
  stop_responder "$tcp_pid"
  timeout -k 2 120 "$PY" "$RESPONDER" --tcp 0 --port-file "$WORK/port" --ready "$WORK/tcp2.ready" >"$WORK/tcp2.log" 2>&1 &
  tcp_pid=$!; _pids+=("$tcp_pid")
  for _ in $(seq 100); do [ -e "$WORK/tcp2.ready" ] && break; sleep 0.05; done
  rc=0; capped 20 "$WORK/ours" "$OURS" -S localhost -d 10.0.0.5 --port-file "$WORK/port" || rc=$?
  if [ "$rc" -eq 0 ] && grep -q 'dlid: 6' "$WORK/ours"; then pass "TCP port taken from the port file"; else fail "TCP port file (exit $rc)"; cat "$WORK/ours.err"; fi
  stop_responder "$tcp_pid"
else
  echo "SKIP: TCP port 6125 busy"
fi

# JSON: one document, one result per source x destination.
responder json
rc=0; capped 20 "$WORK/j" "$OURS" -S "$WORK/json.sock" -s 10.0.0.1 -d 10.0.0.[5-6,250] -C 4 -P -e --json || rc=$?
if [ "$rc" -eq 1 ] && json_check "$WORK/j" 'd["tool"]=="ib_acme" and d["exit_code"]==1 and len(kind("lookup"))==3
    and d["summary"]["lookups"]==3 and d["summary"]["failed"]==1 and kind("service")[0]["reached"]
    and kind("lookup")[0]["ok"] and kind("lookup")[0]["path"]["dlid"]==6 and kind("lookup")[0]["count"]==4
    and kind("lookup")[0]["latency"]["p99_us"]>0 and kind("lookup")[0]["lookups_per_second"]>0
    and kind("lookup")[2]["status"]=="ENODATA" and not kind("lookup")[2]["ok"] and kind("lookup")[2]["index"]==2
    and kind("counters")[0]["counters"]["resolve_count"]>=12 and len(kind("endpoint"))==3
    and d["summary"]["latency"]["count"]==12'; then
  pass "--json: results per destination, failures, latency, perf and endpoints"
else fail "--json (exit $rc)"; head -c 1500 "$WORK/j"; cat "$WORK/j.err"; fi
rc=0; capped 20 "$WORK/s" "$OURS" -S "$WORK/json.sock" -d 10.0.0.5 -C 20 --stats || rc=$?
if [ "$rc" -eq 0 ] && grep -Eq '^Lookups: 20 in .* [0-9]+/s, latency min .*p99' "$WORK/s"; then pass "--stats prints lookups/s and percentiles"
else fail "--stats (exit $rc)"; cat "$WORK/s"; fi
stop_responder "$RESPONDER_PID"

# Malformed replies: exit 7 (protocol), a silent service 6, a closing one 5;
# never a hang, always a one-line error.
for mode in truncated oversize version opcode tid short nopath trailing silent close; do
  case $mode in silent) want=6 ;; close) want=5 ;; *) want=7 ;; esac
  responder bad --misbehave "$mode"
  for args in "-d 10.0.0.5" "-P" "-e 1" "-f l -d 5"; do
    rc=0; capped 20 "$WORK/b" "$OURS" -S "$WORK/bad.sock" $args --timeout 500 || rc=$?
    if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$WORK/b.err")" -eq 1 ] && grep -q '^ib_acme: error: ' "$WORK/b.err"; then
      pass "misbehaving service ($mode), $args: exit $want"
    else fail "misbehaving service ($mode), $args: exit $rc, want $want"; cat "$WORK/b.err"; fi
  done
  rc=0; capped 20 "$WORK/b" "$OURS" -S "$WORK/bad.sock" -d 10.0.0.5 --timeout 500 --json || rc=$?
  if [ "$rc" -eq "$want" ] && json_check "$WORK/b" "d['exit_code']==$want and d['error'] and len(kind('lookup'))==1 and not kind('lookup')[0]['ok']"; then
    pass "misbehaving service ($mode): JSON names the error"
  else fail "misbehaving service ($mode) JSON (exit $rc)"; cat "$WORK/b"; fi
  stop_responder "$RESPONDER_PID"
done

# Usage: bad -f, -s without -d, nothing to do: exit 2.
for args in "-f x -d 1" "-s 10.0.0.1" "" "-d h[a-b]" "-C -3 -d 1"; do
  rc=0; capped 10 "$WORK/u" "$OURS" $args || rc=$?
  if [ "$rc" -eq 2 ]; then pass "usage error: ib_acme $args"; else fail "usage error: ib_acme $args (exit $rc)"; fi
done

finish
