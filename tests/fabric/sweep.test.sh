#!/usr/bin/env bash
# fabric-sweep in the Soft-RoCE guest: four ranks of one sweep as four
# processes of this host (each pair on its own port), merged by the report;
# the other checks, and the UD ones under a stranger's flood; a host that
# cannot take part (its address on no RDMA device), and one that only
# looks so in its own lookup of its name; then
# one with a host dead from the start, whose rank 0 is pestered by
# strangers while it gathers the ranks' times; a pair whose peer comes later
# than its allowance; then the host's health check, with its port up and down.
. "$(dirname "$0")/lib.sh" "$@"
SWEEP=$BIN/fabric-sweep
T="--timeout 4000"
mkdir -p "$WORK/prom"

# sweep NAME RANKS...: runs the given ranks of a 4-host sweep in line mode,
# all at once; their output goes to $WORK/NAME.jsonl with clush-style labels.
sweep() {
  local name=$1; shift
  local r
  : >"$WORK/$name.jsonl"
  for r in "$@"; do
    start_bg "$name-$r" "$SWEEP" --hosts "h[1-4]" --rank "$r" --address "$ADDR" -C 20 $T --json=lines
  done
  for r in "$@"; do
    wait_bg "$name-$r" 90 >/dev/null || true
    sed "s/^/h$((r + 1)): /" "$WORK/$name-$r.out" >>"$WORK/$name.jsonl"
  done
}

sweep all 0 1 2 3
for r in 0 1 2 3; do
  check "rank $r: valid lines" json_lines_check "$WORK/all-$r.out" \
    'lines[-1]["ok"] and lines[-1]["summary"]["rounds"] == 3 and len([r for r in lines[-1]["results"] if not r["retest"]]) == 3'
done
# Four processes on the guest's two emulated cores make noisy times: the
# outlier rule is the unit tests' to check, here only that all pairs met.
expect_rc 0 "report: every pair passed" "$SWEEP" report --outlier-factor 1000 --html "$WORK/all.html" -j "$WORK/all.jsonl"
check "report: six pairs, all ok, a valid document" json_check "$LAST_OUT" \
  'd["summary"]["passed"] == 6 and d["summary"]["pairs"] == 6 and all(r["latency"]["p50_us"] > 0 for r in d["results"])'
check "report: the heat map is a page with an SVG" grep -q "<svg" "$WORK/all.html"
expect_rc 0 "report --prometheus: the matrix as gauges" "$SWEEP" report --outlier-factor 1000 --prometheus-pairs \
  --prometheus "$WORK/prom/sweep.prom" "$WORK/all.jsonl"
check "report --prometheus: every pair's p50, no bad pair" /usr/bin/python3 - "$WORK/prom/sweep.prom" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert all(re.fullmatch(r'# (HELP|TYPE) .*|[a-z_0-9]+(\{.*\})? \S+', l) for l in text.splitlines()), text
assert len(re.findall(r'^fabric_sweep_pair_p50_seconds\{check="ping",', text, re.M)) == 6, text
assert 'fabric_sweep_pairs{state="ok"} 6' in text and 'fabric_sweep_pair_bad{' not in text, text
PY
expect_rc 0 "report, human: the matrix" "$SWEEP" report --outlier-factor 1000 "$WORK/all.jsonl"
check "report, human: a row per host" test "$(grep -c '^h[1-4] ' "$LAST_OUT")" -eq 4
check "rank 0 heard every rank's times" json_lines_check "$WORK/all-0.out" \
  '[l["outliers"] for l in lines if l.get("event") == "outliers"][0]["ranks_heard"] == 4'
for r in 1 2 3; do
  check "rank $r: the same outliers as rank 0" json_lines_check "$WORK/all-$r.out" \
    "[l['outliers'] for l in lines if l.get('event') == 'outliers'][0]['error'] is None and
     [l['outliers'] for l in lines if l.get('event') == 'outliers'][0]['retest_pairs'] ==
     [l['outliers'] for l in map(__import__('json').loads, open('$WORK/all-0.out')) if l.get('event') == 'outliers'][0]['retest_pairs']"
done

# --repeat: three sweeps, each pair line with its sweep, every sweep on
# ports of its own; the document keeps only the last sweep's pairs.
: >"$WORK/repeat.jsonl"
for r in 0 1 2; do
  start_bg "repeat-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address "$ADDR" -C 10 $T --repeat 3 --interval 200 --json=lines
done
for r in 0 1 2; do
  wait_bg "repeat-$r" 90 >/dev/null || true
  cat "$WORK/repeat-$r.out" >>"$WORK/repeat.jsonl"
  check "repeat, rank $r: three sweeps of two pairs, the last one's in the document" json_lines_check "$WORK/repeat-$r.out" \
    'd["ok"] and d["summary"]["sweeps"] == 3 and {r["sweep"] for r in d["results"]} == {3} and
     sorted(l["result"]["sweep"] for l in lines if l.get("event") == "result" and not l["result"]["retest"]) == [1, 1, 2, 2, 3, 3]'
done
check "repeat: no two sweeps of a pair on one port" json_lines_check "$WORK/repeat-0.out" \
  'len({l["result"]["port"] for l in lines if l.get("event") == "result"}) == len([l for l in lines if l.get("event") == "result"])'
expect_rc 0 "repeat, report: the latest sweep of each pair" "$SWEEP" report --outlier-factor 1000 -j "$WORK/repeat.jsonl"
check "repeat, report: three pairs of sweep 3" json_check "$LAST_OUT" '[r["sweep"] for r in d["results"]] == [3, 3, 3]'

# --check connect and ud: the same rounds over other flows. Every pair
# line says its check; the report takes one check a matrix.
for c in connect ud; do
  for r in 0 1 2; do
    start_bg "$c-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address "$ADDR" --check "$c" -C 20 $T --retests 0 --json=lines
  done
  for r in 0 1 2; do wait_bg "$c-$r" 90 >/dev/null || true; done
done
for r in 0 1 2; do
  check "--check connect, rank $r: 20 connections a pair, their setup timed" json_lines_check "$WORK/connect-$r.out" \
    'd["ok"] and d["options"]["check"] == "connect" and all(p["check"] == "connect" and p["connections"] == 20 and
     (p["side"] == "server" or p["latency"]["count"] == 20) for p in d["results"])'
  check "--check ud, rank $r: 20 datagrams a pair, none lost" json_lines_check "$WORK/ud-$r.out" \
    'd["ok"] and all(p["check"] == "ud" and p["sent"] == 20 and p["pings"] == 20 and
     (p["side"] == "server" or (p["lost"] == 0 and p["latency"]["count"] == 20)) for p in d["results"])'
done
cat "$WORK"/connect-[012].out "$WORK"/ud-[012].out >"$WORK/mixed.jsonl"
expect_rc 0 "report of two checks: the first one's matrix" "$SWEEP" report --outlier-factor 1000 -j "$WORK/mixed.jsonl"
check "report of two checks: connect's three pairs, ud's lines skipped with a note" json_check "$LAST_OUT" \
  'd["summary"]["check"] == "connect" and d["summary"]["passed"] == 3 and any("other checks" in n for n in d["summary"]["notes"])'
expect_rc 0 "report --check ud: the UD matrix" "$SWEEP" report --check ud --outlier-factor 1000 "$WORK/mixed.jsonl"
check "report --check ud, human: the UD round trips named" grep -q "^p50 UD round-trip time" "$LAST_OUT"
expect_rc 2 "report --check with a word it does not know (2)" "$SWEEP" report --check rdma "$WORK/mixed.jsonl"

# A host that cannot take part: h4's address is on no RDMA device (an
# address of the loopback device's, outside 127/8, which rdma_cm serves).
# It says so at the start, and its three pairs fail at once on both sides,
# in the same words; the other three pairs pass.
ip addr add 10.255.0.1/32 dev lo
printf 'h1 %s\nh2 %s\nh3 %s\nh4 10.255.0.1\n' "$ADDR" "$ADDR" "$ADDR" >"$WORK/unable.addresses"
for r in 0 1 2 3; do
  start_bg "unable-$r" "$SWEEP" --hosts "h[1-4]" --rank "$r" --address-file "$WORK/unable.addresses" -C 10 $T --retests 0 \
    --json=lines
done
for r in 0 1 2 3; do wait_bg "unable-$r" 90 >/dev/null || true; done
cat "$WORK"/unable-[0-3].out >"$WORK/unable.jsonl"
for r in 0 1 2 3; do
  check "unable, rank $r: told at the start that h4 cannot take part, and why" json_lines_check "$WORK/unable-$r.out" \
    '[l["started"]["unable"] for l in lines if l.get("event") == "started"] ==
     [[{"host": "h4", "error": "no RDMA device has the address 10.255.0.1"}]]'
done
expect_rc 1 "unable: the report fails h4's pairs (1)" "$SWEEP" report --outlier-factor 1000 -j "$WORK/unable.jsonl"
check "unable: h4's three pairs failed, both sides in the same words; the rest passed" json_check "$LAST_OUT" \
  'sorted((r["a"], r["b"], r["state"]) for r in d["results"]) == [("h1", "h2", "ok"), ("h1", "h3", "ok"), ("h1", "h4", "failed"),
   ("h2", "h3", "ok"), ("h2", "h4", "failed"), ("h3", "h4", "failed")] and
   all(r["error"] == "h4 cannot take part: no RDMA device has the address 10.255.0.1" for r in d["results"] if not r["ok"])'
check "unable: each side of h4's pairs failed without meeting" /usr/bin/python3 - "$WORK/unable.jsonl" <<'PY'
import json, sys
pairs = [json.loads(l)["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
h4 = [p for p in pairs if "h4" in (p["server"], p["client"])]
assert len(h4) == 6 and all(p["error"].startswith("h4 cannot take part: ") and p["connect_us"] is None for p in h4), h4
PY

# A host whose own lookup of its name differs from its peers' (its
# /etc/hosts puts its name at its management network's address, DNS at
# its RDMA one): h2, in its own view, is at 10.255.0.1 again; h1 finds it
# at the RDMA address. Only a literal address is sure, so h2 takes part
# and the pair passes. (Each rank reads its own /etc/hosts, bound over the
# guest's in a mount namespace; 10.255.0.1 stays on the loopback device
# from the case before until this one ends.)
printf '%s fabric-h2\n' "$ADDR" >"$WORK/hosts.0"
printf '10.255.0.1 fabric-h2\n' >"$WORK/hosts.1"
printf 'h1 %s\nh2 fabric-h2\n' "$ADDR" >"$WORK/own-view.addresses"
for r in 0 1; do
  start_bg "own-view-$r" unshare -m /bin/sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$WORK/hosts.$r" \
    "$SWEEP" --hosts "h[1-2]" --rank "$r" --address-file "$WORK/own-view.addresses" -C 10 $T --retests 0 --json=lines
done
for r in 0 1; do wait_bg "own-view-$r" 60 >/dev/null || true; done
ip addr del 10.255.0.1/32 dev lo
check "own view: h2, its name at no RDMA device's address in its own lookup only, takes part and its pair passes" \
  json_lines_check "$WORK/own-view-1.out" \
  '[l["started"]["unable"] for l in lines if l.get("event") == "started"] == [[]] and d["ok"] and
   [(p["server"], p["client"], p["ok"]) for p in d["results"]] == [("h1", "h2", True)]'

# --check bw: RDMA WRITE bandwidth, both directions at once, each side's
# line carrying both; --unidirectional: the client's writes alone; -C
# counts the writes instead of a time; human lines name each direction.
BW="--check bw -S 65536 --duration 300 $T --retests 0"
for r in 0 1 2; do
  start_bg "bw-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address "$ADDR" $BW --json=lines
done
for r in 0 1 2; do wait_bg "bw-$r" 90 >/dev/null || true; done
for r in 0 1 2; do
  check "--check bw, rank $r: both directions of each pair, as each writer measured them" json_lines_check "$WORK/bw-$r.out" \
    'd["ok"] and d["options"]["size"] == 65536 and d["options"]["duration"] == 300 and d["options"]["count"] is None and
     len(d["results"]) == 2 and
     all(p["check"] == "bw" and p["latency"] is None and
         all(w["gbps"] > 0 and w["bytes"] % 65536 == 0 and 250e3 < w["elapsed_us"] < 5e6 for w in p["bandwidth"].values())
         for p in d["results"])'
done
check "--check bw: both sides of a pair carry the same figures" json_lines_check "$WORK/bw-0.out" \
  "[p['bandwidth'] for p in d['results'] if p['client'] == 'h2'] ==
   [p['bandwidth'] for p in __import__('json').loads(open('$WORK/bw-1.out').read().splitlines()[-1])['results'] if p['server'] == 'h1']"
for r in 0 1; do
  start_bg "bwu-$r" "$SWEEP" --hosts "h[1-2]" --rank "$r" --address "$ADDR" --check bw -S 4096 -C 200 --unidirectional $T --json=lines
done
for r in 0 1; do wait_bg "bwu-$r" 90 >/dev/null || true; done
check "--check bw -C 200 --unidirectional: 200 writes from the client, none back" json_lines_check "$WORK/bwu-1.out" \
  'd["ok"] and [(p["bandwidth"]["client_to_server"]["bytes"], p["bandwidth"]["server_to_client"]) for p in d["results"]] == [(819200, None)]'
start_bg "bwh-0" "$SWEEP" --hosts "h[1-2]" --rank 0 --address "$ADDR" $BW
expect_rc 0 "--check bw, human" "$SWEEP" --hosts "h[1-2]" --rank 1 --address "$ADDR" $BW
wait_bg "bwh-0" 60 >/dev/null || true
check "--check bw, human: each direction in Gb/s" \
  grep -Eq '^round 1: h1 <-> h2: h2 -> h1 [0-9.]+ Gb/s, h1 -> h2 [0-9.]+ Gb/s in 64 KiB writes$' "$LAST_OUT"
expect_rc 2 "--check bw -S beyond its limit (2)" "$SWEEP" --hosts "h[1-2]" --rank 0 --check bw -S 300000000
expect_rc 2 "--check bw: -C and --duration both (2)" "$SWEEP" --hosts "h[1-2]" --rank 0 --check bw -C 5 --duration 100
expect_rc 2 "--duration without --check bw (2)" "$SWEEP" --hosts "h[1-2]" --rank 0 --duration 100

# --quick: one round, h1-h3 and h2-h4; --pairs: just the pairs of a file,
# in its rounds.
for r in 0 1 2 3; do
  start_bg "quick-$r" "$SWEEP" --hosts "h[1-4]" --rank "$r" --address "$ADDR" --quick -C 10 $T --retests 0 --json=lines
done
for r in 0 1 2 3; do wait_bg "quick-$r" 60 >/dev/null || true; done
check "--quick: one round, h1-h3 and h2-h4" json_lines_check "$WORK/quick-0.out" \
  'd["ok"] and d["summary"]["rounds"] == 1 and [(p["server"], p["client"], p["round"]) for p in d["results"]] == [("h1", "h3", 1)]'
check "--quick: h2 met h4" json_lines_check "$WORK/quick-3.out" \
  '[(p["server"], p["client"]) for p in d["results"]] == [("h2", "h4")] and d["summary"]["peers"] == ["h2"]'
cat "$WORK"/quick-[0-3].out >"$WORK/quick.jsonl"
expect_rc 0 "report of a --quick run: its two pairs passed, the four it did not plan are not missing (0)" \
  "$SWEEP" report -j "$WORK/quick.jsonl"
check "report of a --quick run: two pairs judged, two results" json_check "$LAST_OUT" \
  'd["summary"]["pairs"] == 2 and d["summary"]["passed"] == 2 and d["summary"]["missing"] == 0 and len(d["results"]) == 2'
printf '# the suspects\n1 h1 h2\n1 h3 h4\n2 h2 h4\n' >"$WORK/pairs"
for r in 0 1 2 3; do
  start_bg "pairs-$r" "$SWEEP" --hosts "h[1-4]" --rank "$r" --address "$ADDR" --pairs "$WORK/pairs" -C 10 $T --retests 0 --json=lines
done
for r in 0 1 2 3; do wait_bg "pairs-$r" 60 >/dev/null || true; done
check "--pairs: h4 met h3 in round 1, h2 in round 2" json_lines_check "$WORK/pairs-3.out" \
  'd["ok"] and d["summary"]["rounds"] == 2 and [(p["server"], p["client"], p["round"]) for p in d["results"]] == [("h3", "h4", 1), ("h2", "h4", 2)]'
check "--pairs: h1 met h2 alone" json_lines_check "$WORK/pairs-0.out" '[p["client"] for p in d["results"]] == ["h2"]'
printf '1 h1 h2\n1 h2 h3\n' >"$WORK/bad-pairs"
expect_rc 2 "--pairs: a host twice in one round is a usage error (2)" "$SWEEP" --hosts "h[1-4]" --rank 0 --pairs "$WORK/bad-pairs"
check "--pairs: the error names the line" grep -q "bad-pairs:2: h2 is in round 1 already (line 1)" "$LAST_ERR"

# --check multicast: three ranks in one group at once, each hearing the
# others' datagrams; then with h3 never started, whose pairs fail.
for r in 0 1 2; do
  start_bg "mc-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address "$ADDR" --check multicast -C 30 $T --json=lines
done
for r in 0 1 2; do wait_bg "mc-$r" 60 >/dev/null || true; done
for r in 0 1 2; do
  check "--check multicast, rank $r: both peers heard, 30 datagrams each" json_lines_check "$WORK/mc-$r.out" \
    'd["ok"] and d["summary"]["rounds"] == 1 and [(p["check"], p["received"], p["pings"], p["lost"], p["round"]) for p in d["results"]] == [("multicast", 30, None, 0, 1)] * 2'
done
cat "$WORK"/mc-[012].out >"$WORK/mc.jsonl"
expect_rc 0 "report --check multicast: every pair heard both ways" "$SWEEP" report "$WORK/mc.jsonl"
check "report --check multicast, human: the multicast matrix" grep -q "^multicast: ok when each of a pair heard" "$LAST_OUT"
for r in 0 1; do
  start_bg "mcd-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address "$ADDR" --check multicast -C 30 --timeout 2000 --json=lines
done
t0=$SECONDS
for r in 0 1; do wait_bg "mcd-$r" 60 >/dev/null || true; done
check "--check multicast with a dead host: a bounded wait" test $((SECONDS - t0)) -le 30
cat "$WORK"/mcd-[01].out >"$WORK/mcd.jsonl"
expect_rc 1 "report --check multicast, a dead host: its pairs fail (1)" "$SWEEP" report -j "$WORK/mcd.jsonl"
check "report --check multicast, a dead host: h1-h2 ok, h3's pairs failed" json_check "$LAST_OUT" \
  'd["summary"]["check"] == "multicast" and [r["state"] for r in d["results"]] == ["ok", "failed", "failed"]'

# A stranger dials the pairs' port without a pause while they run, four
# requests at a time (tests/peers/cm_stranger: requests without a pair's
# key), through each of a --check connect pair's 50 connections and a ping
# pair: the server refuses each and goes on, whatever it waits for then,
# and both pairs pass on both sides. A stranger's request queued at the
# listener never costs the client's a CM retry (a listener with room for
# one alone drops the client's: seconds a connection, out of the pair's
# time).
for c in connect ping; do
  start_bg stranger "$BIN/../tests/cm_stranger" "$ADDR" 18515 15000 4
  sleep 1
  for r in 0 1; do
    start_bg "stray-$c-$r" "$SWEEP" --hosts "h[1-2]" --rank "$r" --address "$ADDR" --check "$c" -C 50 --timeout 10000 \
      --retests 0 --json=lines
  done
  for r in 0 1; do wait_bg "stray-$c-$r" 60 >/dev/null || true; done
  wait_bg stranger 30 >/dev/null || true
  for r in 0 1; do
    check "a stranger at the pair's port, --check $c, rank $r: the pair passed" json_lines_check "$WORK/stray-$c-$r.out" \
      'd["ok"] and [p["ok"] for p in d["results"]] == [True]'
  done
  check "a stranger at the pair's port, --check $c: its requests were refused" \
    grep -qE "^[0-9]+ requests, [1-9][0-9]* refused" "$(bg_out stranger)"
done

# A ping pair asked for more than its --pair-timeout allows fails, and says
# how far it got: the pings made and their round trips, on both sides.
for r in 0 1; do
  start_bg "long-$r" "$SWEEP" --hosts "h[1-2]" --rank "$r" --address "$ADDR" -C 1000000 --timeout 2000 --retests 0 \
    --json=lines
done
for r in 0 1; do wait_bg "long-$r" 60 >/dev/null || true; done
check "a ping pair out of time, the client: failed, with its pings and their round trips" \
  json_lines_check "$WORK/long-1.out" \
  'not d["ok"] and d["results"][0]["side"] == "client" and d["results"][0]["pings"] > 0
   and d["results"][0]["latency"]["count"] == d["results"][0]["pings"] and d["results"][0]["connect_us"] > 0'
check "a ping pair out of time, the server: failed, with the pings it answered" json_lines_check "$WORK/long-0.out" \
  'not d["ok"] and d["results"][0]["pings"] > 0'

# A stranger floods the UD QPs of two ranks (ud_spray, from another
# address of this host, once their QPs are there) while they run: a
# --check ud pair asked for more datagrams than its --pair-timeout allows
# ends at that bound, and the multicast check with h3 dead at its silence,
# on both sides, while the flood goes on; a wait that took strangers'
# datagrams for its peer's would last as long as the flood.
SPRAY_DEV=$(ip -o -4 addr show | awk -v a="$ADDR" '$4 ~ "^" a "/" { print $2; exit }')
ip addr add 10.254.254.2/32 dev "$SPRAY_DEV"
sleep 1  # the GID table follows the address
# sweep_ud_qps: the numbers of fabric-sweep's UD QPs now.
sweep_ud_qps() {
  rdma resource show qp 2>/dev/null |
    awk '/ type UD / && /comm fabric-sweep/ { for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }'
}
flooded() {
  local name=$1 hosts=$2 qps=() until=$((SECONDS + 20)); shift 2
  for r in 0 1; do
    start_bg "$name-$r" "$SWEEP" --hosts "$hosts" --rank "$r" --address "$ADDR" --timeout 2000 --retests 0 --json=lines "$@"
  done
  while [ ${#qps[@]} -lt 2 ] && [ $SECONDS -lt $until ]; do
    mapfile -t qps < <(sweep_ud_qps)
    sleep 0.05
  done
  start_bg spray "$BIN/../tests/ud_spray" 10.254.254.2 "$ADDR" 60000 "${qps[@]}"
  for r in 0 1; do wait_bg "$name-$r" 45 >/dev/null || true; done
  check "$name: both ranks ended while the flood went on (QPs ${qps[*]})" kill -0 "${_bg_pid[spray]}"
  stop_bg spray
  for r in 0 1; do
    check "$name, rank $r: its document, the pair ended by its bound" json_lines_check "$WORK/$name-$r.out" \
      'lines[-1]["results"] and all(p["check"] == lines[-1]["options"]["check"] for p in lines[-1]["results"])'
  done
}
flooded ud-flood "h[1-2]" --check ud -C 1000000
check "ud-flood: the client's datagrams stopped at the pair's bound" json_lines_check "$WORK/ud-flood-1.out" \
  '0 < d["results"][0]["sent"] < 1000000'
flooded mc-flood "h[1-3]" --check multicast -C 30
ip addr del 10.254.254.2/32 dev "$SPRAY_DEV"

# --check acm: each rank looks up its peers through an ACM service, the
# stand-in of the ACM tests (an address ending in 1..199 resolves, one
# ending in 250 has no data): h3's pairs fail, h1-h2 passes.
/usr/bin/python3 "$(dirname "$0")/../acm/acm_responder.py" --unix "$WORK/acm.sock" --ready "$WORK/acm.ready" >"$WORK/acm.log" 2>&1 &
ACM_PID=$!
for _ in $(seq 100); do [ -e "$WORK/acm.ready" ] && break; sleep 0.05; done
printf 'h1 10.0.0.1\nh2 10.0.0.2\nh3 10.0.0.250\n' >"$WORK/acm-addresses"
for r in 0 1 2; do
  start_bg "acm-$r" "$SWEEP" --hosts "h[1-3]" --rank "$r" --address-file "$WORK/acm-addresses" --check acm \
    --acm-service "$WORK/acm.sock" -C 5 $T --retests 0 --json=lines
done
for r in 0 1 2; do wait_bg "acm-$r" 60 >/dev/null || true; done
kill "$ACM_PID" 2>/dev/null || true
check "--check acm, rank 0: five lookups of h2, each timed" json_lines_check "$WORK/acm-0.out" \
  '[(p["ok"], p["lookups"], p["latency"]["count"]) for p in d["results"] if p["client"] == "h2"] == [(True, 5, 5)]'
cat "$WORK"/acm-[012].out >"$WORK/acm.jsonl"
expect_rc 1 "report --check acm: an address without data fails its pairs (1)" "$SWEEP" report -j "$WORK/acm.jsonl"
check "report --check acm: h1-h2 ok, h1-h3 and h2-h3 failed for ENODATA" json_check "$LAST_OUT" \
  'd["summary"]["check"] == "acm" and [r["state"] for r in d["results"]] == ["ok", "failed", "failed"] and
   all("ENODATA" in r["error"] for r in d["results"][1:])'

# Host h4 never starts: each of its peers loses one timeout, not more, and
# the report names it. Rank 0 gathers the ranks' times while h2 still
# waits out h4 in the last round; meanwhile strangers come to its
# gathering port: one drips, one floods a line that never ends, one sends
# bytes that are not text, one lies about a rank. They are not counted,
# the ranks still get rank 0's answer, nothing crashes.
cat >"$WORK/pester.py" <<'PY'
import socket, sys, time
addr, port = sys.argv[1], int(sys.argv[2])
def connect():
    for _ in range(600):
        try:
            return socket.create_connection((addr, port), timeout=2)
        except OSError:
            time.sleep(0.1)
    sys.exit("rank 0 never listened")
drip = connect(); drip.sendall(b'{"rank":')
flood = connect()
try:
    flood.sendall(b"x" * (3 << 20))
except OSError:
    pass
junk = connect(); junk.sendall(b"\xff\xfe\x00 not json\n")
liar = connect(); liar.sendall(b'{"rank":9,"p50_us":[[0,9,1e9]]}\n')
time.sleep(3)
print("pestered")
PY
python3 "$WORK/pester.py" "$ADDR" 18515 >"$WORK/pester.out" 2>&1 &
PESTER=$!
t0=$SECONDS
sweep dead 0 1 2
check "a dead host costs its peers a bounded wait" test $((SECONDS - t0)) -le 60
wait "$PESTER" || true
check "the strangers reached rank 0 while it gathered" grep -q pestered "$WORK/pester.out"
expect_rc 1 "report: the dead host's pairs fail (1)" "$SWEEP" report --outlier-factor 1000 -j "$WORK/dead.jsonl"
check "report: h4 is the worst host, its three pairs failed" json_check "$LAST_OUT" \
  'd["summary"]["failed"] == 3 and d["summary"]["passed"] == 3 and d["summary"]["worst_hosts"][0]["host"] == "h4"'
check "rank 0 heard ranks 1 and 2, not h4 nor the strangers" json_lines_check "$WORK/dead-0.out" \
  '[l["outliers"] for l in lines if l.get("event") == "outliers"][0]["ranks_heard"] == 3'
for r in 1 2; do
  check "rank $r beside a dead host: rank 0's answer" json_lines_check "$WORK/dead-$r.out" \
    '[l["outliers"] for l in lines if l.get("event") == "outliers"][0]["error"] is None'
done

# A peer later than its pair's allowance, held up by dead hosts of its
# own: h1 meets h3 in round 2 and h4 in round 3, both killed as the sweep
# starts, and waits out each one's allowance (two and three timeouts);
# h2, idle until round 4, waits four timeouts for h1 there, one too few:
# the healthy pair failed so, until a rank asked a late peer where it was
# (h1: still in round 3) and waited on while it answered an earlier round.
printf '1 h1 h5\n2 h1 h3\n3 h1 h4\n4 h1 h2\n' >"$WORK/late-pairs"
LATE=(--hosts "h[1-5]" --address "$ADDR" --pairs "$WORK/late-pairs" -C 5 --timeout 2000 --retests 0 --json=lines)
# doomed SIGNAL NAME RANK ARGS...: runs the rank (its lines in
# NAME-RANK.out, its pid in NAME-RANK.pid) and sends it SIGNAL the moment
# it says the sweep started (the shell's own read: no program to start in
# between); returns when the rank has ended.
doomed() {
  local sig=$1 name=$2 r=$3 pid line
  shift 3
  mkfifo "$WORK/$name-$r.pipe"
  "$SWEEP" "$@" --rank "$r" >"$WORK/$name-$r.pipe" 2>/dev/null &
  pid=$!
  echo "$pid" >"$WORK/$name-$r.pid"
  while IFS= read -r line; do
    printf '%s\n' "$line"
    [[ $line == *'"event":"started"'* ]] && kill -s "$sig" "$pid"
  done <"$WORK/$name-$r.pipe" >"$WORK/$name-$r.out"
  wait "$pid" 2>/dev/null || true
}
doomed KILL late 2 "${LATE[@]}" & d3=$!
doomed KILL late 3 "${LATE[@]}" & d4=$!
for r in 0 1 4; do start_bg "late-$r" "$SWEEP" "${LATE[@]}" --rank "$r"; done
wait "$d3" "$d4"
: >"$WORK/late.jsonl"
for r in 0 1 2 3 4; do
  [ "$r" = 2 ] || [ "$r" = 3 ] || wait_bg "late-$r" 60 >/dev/null || true
  sed "s/^/h$((r + 1)): /" "$WORK/late-$r.out" >>"$WORK/late.jsonl"
done
expect_rc 1 "report, h3 and h4 killed: their pairs fail (1)" "$SWEEP" report --outlier-factor 1000 -j "$WORK/late.jsonl"
check "report: h1-h2 met in round 4 though h1 came later than its allowance" json_check "$LAST_OUT" \
  '{(r["a"], r["b"]): r["state"] for r in d["results"] if r["state"] != "missing"} ==
     {("h1", "h5"): "ok", ("h1", "h3"): "failed", ("h1", "h4"): "failed", ("h1", "h2"): "ok"}'
"$SWEEP" report --outlier-factor 1000 "$WORK/late.jsonl" 2>/dev/null | grep '^failed:' | sed 's/^/    | /'

# A stranger on a pair's port: h1 listens in round 2 for h2, which comes
# late, after waiting out h3 (frozen as the sweep starts: silent, not
# gone) in round 1; an rping client dials h1's port (18516: the second
# round's first) in the meantime. Its request lacks the pair's key: h1
# refuses it and goes on waiting, and h1-h2 passes (taken as h2, it failed
# the pair). (A killed h3 refuses h2 at once, "left the sweep": h2 then
# came about as soon as h1, and h1 listened too briefly to be seen.)
printf '1 h2 h3\n2 h1 h2\n' >"$WORK/stranger-pairs"
STRANGER=(--hosts "h[1-3]" --address "$ADDR" --pairs "$WORK/stranger-pairs" -C 5 --timeout 3000 --retests 0 --json=lines)
doomed STOP stranger 2 "${STRANGER[@]}" & d3=$!
for r in 0 1; do start_bg "stranger-$r" "$SWEEP" "${STRANGER[@]}" --rank "$r"; done
check "stranger: h1 listens for h2" wait_cm_listen 18516 10
run_capped 20 "$ORIG/rping" -c -a "$ADDR" -p 18516 -C 1
# 28: the listener's own refusal (8 would be nobody listening).
check "stranger: rping's request was refused by h1" grep -q "REJECTED, error 28" "$LAST_ERR" "$LAST_OUT"
for r in 0 1; do wait_bg "stranger-$r" 60 >/dev/null || true; done
kill -KILL "$(cat "$WORK/stranger-2.pid")"
wait "$d3"
: >"$WORK/stranger.jsonl"
for r in 0 1 2; do sed "s/^/h$((r + 1)): /" "$WORK/stranger-$r.out" >>"$WORK/stranger.jsonl"; done
expect_rc 1 "report, a stranger on h1's port and h3 frozen: h3's pair fails (1)" \
  "$SWEEP" report --outlier-factor 1000 -j "$WORK/stranger.jsonl"
check "report: h1-h2 passed, the stranger refused" json_check "$LAST_OUT" \
  '{(r["a"], r["b"]): r["state"] for r in d["results"] if r["state"] != "missing"} == {("h2", "h3"): "failed", ("h1", "h2"): "ok"}'
"$SWEEP" report --outlier-factor 1000 "$WORK/stranger.jsonl" 2>/dev/null | grep '^failed:' | sed 's/^/    | /'

# The host alone, as NHC runs it: one JSON line, the port Active, the
# self-connection timed; the gauges beside it.
expect_rc 0 "health: a port Active and a self-connection" \
  "$SWEEP" health --address "$ADDR" -C 50 --json=lines --prometheus "$WORK/prom/health.prom"
check "health: one line, the port and the self-connection" json_lines_check "$LAST_OUT" \
  'len(lines) == 1 and d["summary"]["active_ports"] >= 1 and d["summary"]["self_ok"] and
   kind("self")[0]["latency"]["count"] == 50 and kind("port")[0]["state"] == "Active"'
check "health --prometheus: ok, the port active, the self RTT" grep -q '^fabric_health_self_rtt_p50_seconds ' "$WORK/prom/health.prom"
check "health --prometheus: fabric_health_ok 1" grep -qx 'fabric_health_ok 1' "$WORK/prom/health.prom"
expect_rc 0 "health, human: the port's line" "$SWEEP" health --address "$ADDR"
check "health, human: state, link layer, MTU and rate" \
  grep -Eq '^rxe[0-9a-z_]* port 1: Active, Ethernet, MTU [0-9]+, [0-9.]+ Gb/sec \([0-9]+X [A-Z0-9]+\)$' "$LAST_OUT"

# The port's rate as the kernel reports it, held to what the admin expects
# (NHC's check_hw_ib): a port below it fails, named with its rate.
RATE=$(awk '{print $1}' /sys/class/infiniband/*/ports/1/rate | head -n 1)
expect_rc 0 "health --expect-rate at the port's own rate: ok" "$SWEEP" health --address "$ADDR" -C 5 --expect-rate "$RATE" -j
check "health -j: the port's width, speed and rate" json_check "$LAST_OUT" \
  'kind("port")[0]["rate_gbps"] > 0 and kind("port")[0]["width"].endswith("X") and kind("port")[0]["rate_text"].endswith(")")'
expect_rc 1 "health --expect-rate 100: a port below it fails (1)" "$SWEEP" health --address "$ADDR" -C 5 --expect-rate 100 \
  --prometheus "$WORK/prom/health.prom"
check "health --expect-rate: the error names the port, its rate and the rate expected" \
  grep -Eq '^fabric-sweep: error: rxe[0-9a-z_]* port 1: [0-9.]+ Gb/sec \([0-9]+X [A-Z0-9]+\), expected 100$' "$LAST_ERR"
check "health --expect-rate --prometheus: unhealthy, the port's rate in bytes per second" \
  grep -qx 'fabric_health_ok 0' "$WORK/prom/health.prom"
check "health --prometheus: the rate gauge" grep -q '^fabric_health_port_rate_bytes_per_second{' "$WORK/prom/health.prom"
expect_rc 1 "health --expect-width 4X: a narrower port fails (1)" "$SWEEP" health --address "$ADDR" -C 5 --expect-width 4X -j
check "health --expect-width: the port's result says why" json_check "$LAST_OUT" \
  'not kind("port")[0]["ok"] and kind("port")[0]["error"].endswith("wide, expected 4X")'
expect_rc 3 "health --device of no port (3)" "$SWEEP" health --address "$ADDR" --device nosuchdev -j
check "health --device: the error names it" json_check "$LAST_OUT" 'd["error"] == "no port of nosuchdev"'
expect_rc 2 "health --expect-rate nan (2)" "$SWEEP" health --expect-rate nan

# An address that is not this host's: the self-connection fails, bounded.
t0=$SECONDS
expect_rc 5 "health: an address that is not ours (5)" "$SWEEP" health --address 10.0.0.99 --timeout 3000 -j
check "health: the self-connection's failure is named" json_check "$LAST_OUT" \
  'd["summary"]["self_ok"] is False and d["error"].startswith("self-connection to 10.0.0.99")'
check "health: a failed self-connection costs one timeout" test $((SECONDS - t0)) -le 10

# The port down (its link down): 3, and the gauges say so. The link comes
# back up before the test ends.
DEV=$(ip -o -4 addr show | awk -v a="$ADDR" '$4 ~ "^" a "/" { print $2 }')
ip link set "$DEV" down
expect_rc 3 "health: no Active port (3)" "$SWEEP" health --address "$ADDR" -j --prometheus "$WORK/prom/health.prom"
ip link set "$DEV" up
check "health: the port's state is named" json_check "$LAST_OUT" \
  'd["error"].startswith("no Active port") and kind("port")[0]["state"] != "Active" and d["summary"]["self_ok"] is None'
check "health --prometheus: fabric_health_ok 0" grep -qx 'fabric_health_ok 0' "$WORK/prom/health.prom"
for _ in $(seq 50); do "$SWEEP" health --address "$ADDR" --timeout 2000 >/dev/null 2>&1 && break; sleep 0.2; done

finish
