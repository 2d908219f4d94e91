#!/usr/bin/env bash
# fabric-sweep across four guests on one wire (tests/fabric/bed --hosts 4),
# launched by real Slurm (slurmctld on A, slurmd and munged on every guest)
# and by ClusterShell and pdsh through the bed's remote shell: a clean
# sweep, a delayed link and a lossy one (netem), a host down from the
# start, a host killed mid-sweep and one frozen, each merged by
# `fabric-sweep report`; health on both rails, and every rail of every
# host in one sweep (--rails auto), one rail throttled, one device gone.
. "$(dirname "$0")/../fabric/lib.sh" "$@"
BED=$(cd "$(dirname "$0")/../fabric" && pwd)
SWEEP=$BIN/fabric-sweep
HOSTS=fabric-a,fabric-b,fabric-c,fabric-d  # letters: no range syntax

# Slurm comes up on every guest at once (one after another took 30 s).
for h in b c d; do "$BED/on-peer" --host "$h" run "$BED/slurm-up" 4 >/dev/null & done
"$BED/slurm-up" 4 >/dev/null
wait
export SLURM_CONF=/run/slurm/slurm.conf
for _ in $(seq 60); do
  [ "$(sinfo -h -o %t | sort -u)" = idle ] && break
  sleep 0.5
done
check "Slurm: four idle nodes" test "$(sinfo -h -N -o %t | grep -c idle)" -eq 4

# Every guest reads the address file: it goes where all of them see it.
printf 'fabric-a 10.0.0.1\nfabric-b 10.0.0.2\nfabric-c 10.0.0.3\nfabric-d 10.0.0.4\n' >"$FABRIC_OUT/addresses"
BASE=(--address-file "$FABRIC_OUT/addresses" --json=lines)
ARGS=("${BASE[@]}" -C 30)
CAP=240  # a whole sweep per command

# on HOST CMD...: runs CMD on guest HOST (a: here).
on() {
  local h=$1; shift
  if [ "$h" = a ]; then "$@"; else "$BED/on-peer" --host "$h" run "$@"; fi
}
# delay_link FROM TO_ADDR NETEM...: netem on FROM's packets to TO_ADDR only.
delay_link() {
  local from=$1 to=$2; shift 2
  on "$from" tc qdisc add dev eth0 root handle 1: prio
  on "$from" tc qdisc add dev eth0 parent 1:3 handle 30: netem "$@"
  on "$from" tc filter add dev eth0 parent 1:0 protocol ip u32 match ip dst "$to/32" flowid 1:3
}
clear_tc() { for h in a b c d; do on "$h" tc qdisc del dev eth0 root 2>/dev/null || true; done; }

# 1. A clean sweep under srun: every pair, one task per guest.
t0=$SECONDS
expect_rc 0 "srun: a clean sweep" srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${ARGS[@]}"
cp "$LAST_OUT" "$WORK/clean.jsonl"
clean_s=$((SECONDS - t0))
check "srun: lines carry srun's labels" grep -q '^0: {' "$WORK/clean.jsonl"
expect_rc 0 "report: every pair of four hosts passed" "$SWEEP" report --html "$WORK/clean.html" -j "$WORK/clean.jsonl"
check "report: six pairs ok, ranks from Slurm" json_check "$LAST_OUT" \
  'd["summary"]["passed"] == 6 and d["summary"]["hosts"] == ["fabric-a","fabric-b","fabric-c","fabric-d"]'
check "report: the HTML page has the heat map" grep -q "<svg" "$WORK/clean.html"
# Four emulated guests share the host's cores: a healthy pair's round trip
# is milliseconds here (3 to 15 ms at p50, varying by machine and round,
# and higher beside a lossy link's retransmissions). The delayed link
# below gets five times the clean sweep's median, 50 ms at least, so that
# it stands out by its fault, not by the noise (20 ms was 2.4 times the
# median in some runs, below the verdict's 2.5).
clean_median_ms=$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["summary"]["median_p50_us"] / 1000))' "$LAST_OUT" 2>/dev/null || echo 4)
delay_ms=$((clean_median_ms * 5 > 50 ? clean_median_ms * 5 : 50))
echo "    | clean sweep of 4 hosts under srun: ${clean_s}s, median round trip ${clean_median_ms} ms"

# --check multicast: all four guests in one group at once, every pair
# heard both ways.
expect_rc 0 "srun --check multicast: every guest heard every other" \
  srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${ARGS[@]}" --check multicast
cp "$LAST_OUT" "$WORK/multicast.jsonl"
expect_rc 0 "report --check multicast: six pairs ok" "$SWEEP" report -j "$WORK/multicast.jsonl"
check "report --check multicast: six pairs ok in one round" json_check "$LAST_OUT" \
  'd["summary"]["check"] == "multicast" and d["summary"]["passed"] == 6 and d["summary"]["rounds"] == 1'

# Many ranks on few hosts, as a launcher starts thousands of tasks seconds
# apart: 32 ranks, 8 a guest, each named in --hosts (srun's task number is
# its rank) with its guest's address; 31 rounds of 16 pairs, every pair
# ok, the launch's skew absorbed by the meeting before the first round.
# Many ranks a guest on a loaded machine make this the slowest part of the
# test (64 ranks took 200-220 s, pairs up to 9 s, and once one pair of 2016
# failed with a 20 s --timeout; each wait and the command get twice that).
for i in $(seq 1 32); do printf 'r%02d 10.0.0.%d\n' "$i" $(((i - 1) / 8 + 1)); done >"$FABRIC_OUT/many-addresses"
t0=$SECONDS
CAP=480 expect_rc 0 "srun, 32 ranks on four guests: every pair passed" \
  srun -N4 -n32 --ntasks-per-node=8 -O --label "$SWEEP" --hosts 'r[01-32]' --address-file "$FABRIC_OUT/many-addresses" \
  -C 5 --timeout 40000 --retests 0 --json=lines
cp "$LAST_OUT" "$WORK/many.jsonl"
echo "    | 32 ranks, 31 rounds under srun: $((SECONDS - t0))s"
# A failed pair says why (the document's tail above does not).
"$SWEEP" report --outlier-factor 1000 "$WORK/many.jsonl" 2>/dev/null | grep -E '^(failed|note):' | sed 's/^/    | /'
expect_rc 0 "report, 32 ranks: 496 pairs ok" "$SWEEP" report --outlier-factor 1000 -j "$WORK/many.jsonl"
check "report, 32 ranks: 496 pairs ok in 31 rounds, one run" json_check "$LAST_OUT" \
  'd["summary"]["passed"] == 496 and d["summary"]["rounds"] == 31 and len(d["summary"]["hosts"]) == 32'
check "32 ranks: every rank came to the start, each says how long it took" python3 - "$WORK/many.jsonl" <<'PY'
import json, sys
events = [json.loads(l[l.index("{"):]) for l in open(sys.argv[1]) if '"event":"started"' in l]
assert len(events) == 32, len(events)
assert all(e["started"]["absent"] == [] and e["started"]["start_us"] > 0 for e in events)
assert len({e["started"]["run"] for e in events}) == 1 and events[0]["started"]["run"].startswith("slurm-")
PY

# 2. One link delayed (c -> d), one lossy (a -> b): the delayed link is the
# outlier, the lossy one is not passed as ok.
delay_link c 10.0.0.4 delay "${delay_ms}ms"
delay_link a 10.0.0.2 loss 30%
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${ARGS[@]}" --timeout 8000 >"$WORK/faulty.jsonl" 2>"$WORK/faulty.err" || true
# The same links with --check ud: RC hides loss in retransmissions, UD
# shows it.
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${ARGS[@]}" --check ud --retests 0 --timeout 8000 \
  >"$WORK/faulty-ud.jsonl" 2>"$WORK/faulty-ud.err" || true
clear_tc
expect_rc 1 "report --check ud: the lossy link fails the sweep (1)" "$SWEEP" report -j "$WORK/faulty-ud.jsonl"
check "report --check ud: a-b alone failed, for its lost datagrams" json_check "$LAST_OUT" \
  'd["summary"]["check"] == "ud" and
   [(r["a"], r["b"]) for r in d["results"] if r["state"] == "failed"] == [("fabric-a", "fabric-b")] and
   [r for r in d["results"] if r["state"] == "failed"][0]["error"] is not None'
expect_rc 1 "report: a delayed and a lossy link fail the sweep (1)" "$SWEEP" report -j "$WORK/faulty.jsonl"
check "report: the delayed link c-d is the slow pair" json_check "$LAST_OUT" \
  '[(r["a"], r["b"]) for r in d["results"] if r["state"] == "slow"] == [("fabric-c", "fabric-d")] or
   ("fabric-c", "fabric-d") in [(r["a"], r["b"]) for r in d["results"] if r["state"] == "slow"]'
check "report: the delayed link was met again after the rounds, and stayed slow" json_check "$LAST_OUT" \
  '[(r["retests"], r["state"]) for r in d["results"] if (r["a"], r["b"]) == ("fabric-c", "fabric-d")] == [(1, "slow")]'
check "rank 0 named the delayed link an outlier" grep -q '"retest_pairs":\[[^]]*{"client":"fabric-d","server":"fabric-c"}' "$WORK/faulty.jsonl"
check "report: the lossy link a-b is not ok" json_check "$LAST_OUT" \
  'not [r for r in d["results"] if (r["a"], r["b"]) == ("fabric-a", "fabric-b")][0]["ok"]'

# Bandwidth: a link that came up below its rate answers pings in time;
# its bandwidth finds it. The guests' own rate first, then fabric-d's wire
# throttled to an eighth of it (netem rate): --check bw names d's three
# pairs slow and d the worst host, --check ping passes them all; then
# ClusterKit's quick mode, and a re-run of just the suspects from the
# report's --outliers file, each judged by an absolute bar from the clean
# sweep (a few pairs make no fleet; the file is where every guest reads
# it). Emulated guests' bandwidth varies far more than a fabric's (healthy
# pairs seen from 0.03 to 0.07 Gb/s in one sweep, lower still on a loaded
# machine), so the bars here are a quarter of the fleet's rate, the
# throttled link half that again. Each pair writes one way, the higher rank
# to the lower (fabric-d in each of its pairs, through its throttled
# egress): two directions at once can starve one in emulated guests (a
# healthy pair measured 0.10 Gb/s one way and 0.009 the other).
# Every run gets the sweep's default re-test of outliers, as a fleet
# would: a healthy pair once moved four writes in its second (likely an
# RC retransmission's wait, after a frame the loaded machine dropped); met
# again, it keeps its best. The throttled sweep is told what the guests
# should reach (--expect-gbps), as an admin would tell it: half its pairs
# are d's, and by the fleet's own figures rank 0 would see no outlier to
# meet again (CI failed there twice; the second time b-c was at d's
# rate). That costs d's slow pairs a second meeting. The re-run of the
# suspects alone, all of them d's, gets none.
BW=(--check bw --unidirectional -S 262144 --duration 1000 --timeout 15000 --bw-fraction 0.25)
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${BASE[@]}" "${BW[@]}" >"$WORK/bw-clean.jsonl" 2>"$WORK/bw-clean.err" || true
expect_rc 0 "report --check bw, the guests as they are: every pair ok" "$SWEEP" report -j --bw-fraction 0.25 "$WORK/bw-clean.jsonl"
clean_gbps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["bar"]["healthy_median_gbps"])' "$LAST_OUT")
echo "    | the guests' bandwidth: median ${clean_gbps} Gb/s"
eighth_mbit=$(awk -v g="$clean_gbps" 'BEGIN {printf "%d", g * 1000 / 8 + 1}')
# What the guests should reach: the sweep's --bw-fraction 0.25 of it is the bar.
expect_gbps=$(awk -v g="$clean_gbps" 'BEGIN {printf "%.4f", g}')
# Each rank names its port; --expect-gbps auto judges each pair by its
# ports' data rate (rxe on a virtio NIC: 2.5 Gb/s, 1X SDR, MTU 1024), of
# which the emulated guests reach a few hundredths: a fraction that puts
# the bar at a quarter of the guests' rate.
port_gbps=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if "\"event\":\"started\"" in l:
        print(json.loads(l[l.index("{"):])["started"]["adapter"]["data_rate_gbps"]); break' "$WORK/bw-clean.jsonl")
auto_fraction=$(awk -v g="$clean_gbps" -v p="$port_gbps" 'BEGIN {printf "%.4f", g / 4 / p}')
echo "    | the guests' ports: ${port_gbps} Gb/s of data, --bw-fraction ${auto_fraction} of it a quarter of their rate"
check "the ranks name their port: rxe, Ethernet, MTU 1024, its rate and data rate" python3 - "$WORK/bw-clean.jsonl" <<'PY'
import json, sys
started = [json.loads(l[l.index("{"):])["started"] for l in open(sys.argv[1]) if '"event":"started"' in l]
assert len(started) == 4, len(started)
for s in started:
    a = s["adapter"]
    assert a["device"].startswith("rxe") and a["link_layer"] == "Ethernet" and a["mtu"] == 1024, a
    assert a["rate_gbps"] > 0 and 0 < a["data_rate_gbps"] < a["rate_gbps"], a
PY
expect_rc 0 "report --expect-gbps auto, the guests as they are: every pair reaches a quarter of the guests' rate" \
  "$SWEEP" report -j --expect-gbps auto --bw-fraction "$auto_fraction" "$WORK/bw-clean.jsonl"
check "report --expect-gbps auto: judged by the ports, each pair's own bar" json_check "$LAST_OUT" \
  'd["summary"]["bar"]["by"] == "ports" and all(r["bandwidth"]["bar_gbps"] > 0 for r in d["results"])'

on d tc qdisc add dev eth0 root netem rate "${eighth_mbit}mbit" limit 100000
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${BASE[@]}" "${BW[@]}" --expect-gbps "$expect_gbps" \
  >"$WORK/bw-slow.jsonl" 2>"$WORK/bw-slow.err" || true
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${ARGS[@]}" --timeout 15000 >"$WORK/ping-slow.jsonl" 2>"$WORK/ping-slow.err" || true
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${BASE[@]}" "${BW[@]}" --expect-gbps "$expect_gbps" --quick \
  >"$WORK/bw-quick.jsonl" 2>"$WORK/bw-quick.err" || true
expect_rc 1 "report --check bw, fabric-d at an eighth of its rate (1)" "$SWEEP" report -j --expect-gbps "$expect_gbps" \
  --outliers "$FABRIC_OUT/suspects" --csv "$WORK/bw.csv" "$WORK/bw-slow.jsonl"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("    | the throttled run: " + ", ".join("%s-%s %s %.4f" % (r["a"][-1], r["b"][-1], r["state"], (r["bandwidth"] or {}).get("gbps") or 0)
                                         for r in d["results"]))' "$LAST_OUT" || true
check "report --check bw: d's three pairs slow, no other; fabric-d the worst host" json_check "$LAST_OUT" \
  'sorted((r["a"], r["b"]) for r in d["results"] if r["state"] != "ok") ==
     [("fabric-a", "fabric-d"), ("fabric-b", "fabric-d"), ("fabric-c", "fabric-d")] and
   all(r["state"] == "slow" for r in d["results"] if r["state"] != "ok") and
   d["summary"]["worst_hosts"][0]["host"] == "fabric-d" and d["summary"]["worst_hosts"][0]["bad_pairs"] == 3'
check "--expect-gbps: rank 0 met d's three pairs again, by a quarter of what the guests should reach" \
  python3 - "$WORK/bw-slow.jsonl" "$expect_gbps" <<'PY'
import json, sys
ev = [json.loads(l[l.index("{"):])["outliers"] for l in open(sys.argv[1]) if '"event":"outliers"' in l]
assert ev and ev[0]["error"] is None, ev
assert abs(ev[0]["bar_gbps"] - 0.25 * float(sys.argv[2])) < 1e-9, ev[0]
again = {tuple(sorted((p["server"], p["client"]))) for p in ev[0]["retest_pairs"]}
assert {("fabric-a", "fabric-d"), ("fabric-b", "fabric-d"), ("fabric-c", "fabric-d")} <= again, again
PY
check "report --outliers: d's three pairs, as ClusterKit's custom mode writes them" \
  test "$(grep -v '^#' "$FABRIC_OUT/suspects" | awk '{print $2 "-" $3}' | sort | tr '\n' ' ')" = "fabric-a-fabric-d fabric-b-fabric-d fabric-c-fabric-d "
check "report --csv: a header and six pairs" test "$(wc -l <"$WORK/bw.csv")" -eq 7
check "report --outliers: the bar they were judged by, for the re-run" grep -q '^#bar bw ' "$FABRIC_OUT/suspects"
expect_rc 1 "report --expect-gbps auto, fabric-d at an eighth of its rate (1)" "$SWEEP" report -j --expect-gbps auto \
  --bw-fraction "$auto_fraction" "$WORK/bw-slow.jsonl"
check "report --expect-gbps auto: d's three pairs slow, no other" json_check "$LAST_OUT" \
  'sorted((r["a"], r["b"]) for r in d["results"] if r["state"] != "ok") ==
     [("fabric-a", "fabric-d"), ("fabric-b", "fabric-d"), ("fabric-c", "fabric-d")]'
expect_rc 0 "report --check ping, the same wire: every pair ok (pings do not see a rate)" "$SWEEP" report -j "$WORK/ping-slow.jsonl"
check "report --check ping: six pairs ok" json_check "$LAST_OUT" 'd["summary"]["passed"] == 6'
expect_rc 1 "report --check bw --quick: b-d below a quarter of the guests' rate (1)" "$SWEEP" report -j --expect-gbps "$expect_gbps" "$WORK/bw-quick.jsonl"
check "report --check bw --quick: a-c ok, b-d slow, the others not met" json_check "$LAST_OUT" \
  '{(r["a"], r["b"]): r["state"] for r in d["results"] if r["state"] != "missing"} ==
     {("fabric-a", "fabric-c"): "ok", ("fabric-b", "fabric-d"): "slow"}'
# One round; its slow pair, b-d, met again after it (by the sweep's
# --expect-gbps, as in the run before).
check "--quick: one round, then b-d's re-test" python3 - "$WORK/bw-quick.jsonl" <<'PY'
import json, sys
said = [json.loads(l[l.index("{"):])["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
assert {r["round"] for r in said if not r["retest"]} == {1}, said
assert {tuple(sorted((r["server"], r["client"]))) for r in said if r["retest"]} <= {("fabric-b", "fabric-d")}, said
PY
srun -N4 --ntasks-per-node=1 --label "$SWEEP" "${BASE[@]}" "${BW[@]}" --retests 0 --pairs "$FABRIC_OUT/suspects" \
  >"$WORK/bw-suspects.jsonl" 2>"$WORK/bw-suspects.err" || true
# The re-run's ranks carry the first run's bar from the file: its report
# judges by it, not by the three slow pairs alone.
expect_rc 1 "report --check bw --pairs: the suspects again, still slow by the first run's bar (1)" "$SWEEP" report -j "$WORK/bw-suspects.jsonl"
check "report --check bw --pairs: judged by the first run's bar" json_check "$LAST_OUT" 'd["summary"]["bar"]["by"] == "first_run"'
check "report --check bw --pairs: just d's three pairs met, each slow" json_check "$LAST_OUT" \
  'sorted((r["a"], r["b"], r["state"]) for r in d["results"] if r["state"] != "missing") ==
     [("fabric-a", "fabric-d", "slow"), ("fabric-b", "fabric-d", "slow"), ("fabric-c", "fabric-d", "slow")]'
# The same link with 4 MiB writes and a wait shorter than its two writes in
# flight take (a 2.5 Gb/s port keeps what it carries in 4 ms in flight, two
# writes at least), longer than one: the pair fails, and says how far its
# writes got and at what rate.
stuck_ms=$(awk -v m="$eighth_mbit" 'BEGIN {printf "%d", 50300 / m + 1000}')
srun -N2 -w fabric-a,fabric-d --ntasks-per-node=1 --label "$SWEEP" "${BASE[@]}" --check bw -S 4194304 --duration 300 \
  --timeout "$stuck_ms" --retests 0 >"$WORK/bw-stuck.jsonl" 2>"$WORK/bw-stuck.err" || true
check "--check bw, writes outlasting the wait: the error says how far they got, in Gb/s" grep -Eq \
  'the writes did not complete in time \([0-9]+ of [0-9]+ writes of 4194304 bytes in [0-9.]+ s: [0-9.e-]+ Gb/s' "$WORK/bw-stuck.jsonl"
check "--check bw, writes outlasting the wait: a side's failed result carries its writes so far, in its own direction" \
  python3 - "$WORK/bw-stuck.jsonl" <<'PY'
import json, sys
said = [json.loads(l[l.index("{"):])["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
assert len(said) == 2 and not any(r["ok"] for r in said), said
stuck = [r for r in said if "the writes did not complete in time (" in r["error"]]
assert stuck, said
for r in stuck:
    own = r["bandwidth"]["server_to_client" if r["side"] == "server" else "client_to_server"]
    assert r["connect_us"] > 0 and own["bytes"] > 0 and own["gbps"] > 0, r
PY
clear_tc

# 3. ClusterShell with the bed's remote shell, host d down from the start:
# its peers each lose a bounded wait, and the report names it.
t0=$SECONDS
clush -R exec -w fabric-a,fabric-b,fabric-c "$BED/bed-rsh" %h "$SWEEP" --hosts "$HOSTS" "${ARGS[@]}" --timeout 3000 \
  </dev/null >"$WORK/down.jsonl" 2>"$WORK/down.err" || true
check "clush: a dead host costs its peers a bounded wait" test $((SECONDS - t0)) -le 90
check "clush: lines carry clush's labels" grep -q '^fabric-b: {' "$WORK/down.jsonl"
expect_rc 1 "report: a host down from the start (1)" "$SWEEP" report -j "$WORK/down.jsonl"
check "report: fabric-d's three pairs failed, it is the worst host" json_check "$LAST_OUT" \
  'd["summary"]["failed"] == 3 and d["summary"]["passed"] == 3 and d["summary"]["worst_hosts"][0]["host"] == "fabric-d"'

# Hosts that die or hang mid-sweep: on-first-pair runs the sweep and, on
# the one host named, sends it a signal as soon as it has printed its first
# pair. Tied to that event, not to a time: the host then loses its two later
# pairs and their two peers one each on any machine, so it is the worst host
# alone (a kill after some seconds landed in a different round on a faster
# or a loaded machine).
cat >"$FABRIC_OUT/on-first-pair" <<'SH'
#!/usr/bin/env bash
# on-first-pair HOST SIGNAL CMD...
host=$1 sig=$2
shift 2
[ "$(hostname)" = "$host" ] || exec "$@"
pidfile=$(mktemp)
trap 'rm -f "$pidfile"' EXIT
{ "$@" & echo $! >"$pidfile"; wait $!; } | {
  sent=
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [ -z "$sent" ] && [[ $line == *'"event":"result"'* ]]; then kill -s "$sig" "$(cat "$pidfile")"; sent=yes; fi
  done
}
SH
chmod +x "$FABRIC_OUT/on-first-pair"
# A pair's pings must fit its pair timeout (8 s here) with room: 600 of
# them took 7 s at a healthy 11 ms round trip, and on a loaded machine a
# healthy pair ran out of its time; 200 take a third of it.
LONG="--hosts $HOSTS --address-file $FABRIC_OUT/addresses -C 200 --json=lines --timeout 8000"

# 4. pdsh, host b killed mid-sweep: what it printed counts, its later
# pairs fail, the others pass. Every wait of the sweep is bounded, and so
# is the launcher here (pdsh -u): a rank that outlived it fails the check
# on the documents below, and the rest of the test still runs.
pdsh -u 150 -R exec -w "$HOSTS" "$BED/bed-rsh" %h "$FABRIC_OUT/on-first-pair" fabric-b KILL "$SWEEP" $LONG \
  </dev/null >"$WORK/killed.jsonl" 2>"$WORK/killed.err" || true
documents=$(grep -c '^fabric-[acd]: {.*"exit_code":' "$WORK/killed.jsonl")
check "pdsh: every rank but the killed one wrote its document" test "$documents" -eq 3
[ "$documents" -eq 3 ] || show "$WORK/killed.err" "$WORK/killed.jsonl"
check "pdsh: lines carry pdsh's labels" grep -q '^fabric-c: {' "$WORK/killed.jsonl"
check "pdsh: the killed host printed its first pair" grep -q '^fabric-b: .*"event":"result"' "$WORK/killed.jsonl"
# Its later peers dialled its answering port soon after the start: they
# find it refused before the pair, and fail the pair without a wait.
check "pdsh: a later peer of the killed host found it gone" grep -q '"error":"fabric-b left the sweep' "$WORK/killed.jsonl"
expect_rc 1 "report: a host killed mid-sweep (1)" "$SWEEP" report -j "$WORK/killed.jsonl"
check "report: every pair without fabric-b passed; fabric-b is the worst host" json_check "$LAST_OUT" \
  'all(r["state"] != "failed" for r in d["results"] if "fabric-b" not in (r["a"], r["b"])) and d["summary"]["worst_hosts"][0]["host"] == "fabric-b"'

# 5. ClusterShell, host d frozen mid-sweep (stopped, not killed: its
# connections stay open and its kernel still answers the transport): its
# peers each lose a bounded wait and the other ranks finish; the launcher
# would wait for the frozen task for ever, and its command timeout
# (clush -u) bounds it. fabric-d's first pair is with rank 0 (the rounds
# of four: a-d and b-c first), so rank 0 waits for its word after the
# rounds, as for every rank it met.
t0=$SECONDS
clush -u 60 -R exec -w "$HOSTS" "$BED/bed-rsh" %h "$FABRIC_OUT/on-first-pair" fabric-d STOP "$SWEEP" $LONG \
  </dev/null >"$WORK/frozen.jsonl" 2>"$WORK/frozen.err" || true
check "clush -u: the launcher ends despite the frozen task" test $((SECONDS - t0)) -le 100
on d pkill -KILL -f "$SWEEP" || true
check "a frozen host: every other rank wrote its document" test "$(grep -c '"exit_code":' "$WORK/frozen.jsonl")" -eq 3
expect_rc 1 "report: a host frozen mid-sweep (1)" "$SWEEP" report -j "$WORK/frozen.jsonl"
check "report: no pair without fabric-d failed; fabric-d is the worst host" json_check "$LAST_OUT" \
  'all(r["state"] != "failed" for r in d["results"] if "fabric-d" not in (r["a"], r["b"])) and d["summary"]["worst_hosts"][0]["host"] == "fabric-d"'
# Its later peers knew it gone once it had been silent a few seconds, not
# after their meetings' waits (up to four pair timeouts a round): in a
# fleet, each such wait would hold up every round after it.
check "a frozen host: its later peers failed their pairs within one pair timeout, for its silence" python3 - "$WORK/frozen.jsonl" <<'PY'
import json, sys
later = [json.loads(l[l.index("{"):])["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
# (Round 2 may have started before the signal came: its pair then waits out its work.)
later = [r for r in later if "fabric-d" in (r["server"], r["client"]) and r["round"] > 2]
assert later, "no later pair of fabric-d reported"
for r in later:
    assert not r["ok"] and "fabric-d stopped answering" in r["error"], r
    assert r["elapsed_us"] < 8e6, r
PY
# Rank 0 met fabric-d in the first round and waited for its word after the
# rounds only until it knew it stopped (its silence), not four pair
# timeouts: the others' answers wait on that.
check "a frozen host: rank 0 agreed on the outliers without it, within two pair timeouts of its last pair" \
  python3 - "$WORK/frozen.jsonl" <<'PY'
import json, sys
mine = [json.loads(l[l.index("{"):]) for l in open(sys.argv[1]) if l.startswith("fabric-a: ") and '"event"' in l]
last_pair = max(e["time"] for e in mine if e["event"] == "result")
agreed = [e for e in mine if e["event"] == "outliers"]
assert agreed and agreed[0]["outliers"]["error"] is None, agreed
assert agreed[0]["outliers"]["ranks_heard"] == 3, agreed[0]
assert agreed[0]["time"] - last_pair < 16, (agreed[0]["time"] - last_pair)
PY

# 6. The second rail, and health on both. rdma-core's rping from A to B
# over rxe1 (the second wire) proves the bed's second rail; then health
# on fabric-c with its second rail's link down fails the host, naming the
# port, and, the link up again, health on every guest passes: both ports
# Active, the self-connection, and the ping-pong from rxe0's address to
# rxe1's (across the hub and back into the guest).
t0=$SECONDS
"$BED/on-peer" start rping2 timeout 60 "$ORIG/rping" -s -a "$FABRIC_PEER2" -C 10 -V
peer_wait_cm LISTEN 7174 30 >/dev/null
expect_rc 0 "rdma-core rping -V from A to B over the second rail (rxe1)" timeout 30 "$ORIG/rping" -c -a "$FABRIC_PEER2" -C 10 -V
check "rdma-core rping over the second rail: B's server ended cleanly" "$BED/on-peer" wait rping2 30
HEALTH=(health --address-file "$FABRIC_OUT/addresses" -C 20 --timeout 8000 --json=lines)
# shellcheck disable=SC2016  # expanded on c, with c's variables
on c bash -c 'ip link set "$FABRIC_NETDEV2" down'
expect_rc 1 "health, fabric-c's second rail down: the host fails (1)" srun -N1 -w fabric-c "$SWEEP" "${HEALTH[@]}"
on c "$BED/rails-up"
check "health: the error names the Down port; the first rail and the self-connection pass" json_lines_check "$LAST_OUT" \
  'd["error"] == "rxe1 port 1 is Down" and [(r["device"], r["ok"]) for r in kind("port")] == [("rxe0", True), ("rxe1", False)] and
   d["summary"]["self_ok"] and d["summary"]["intra_ok"] is None and d["summary"]["expected_ports"] == 2'
# Each guest writes its document to a file of its own: srun cuts a long
# line into pieces of 1024 bytes and mixes the tasks' pieces.
# shellcheck disable=SC2016  # $0, $@ and hostname are the task's
expect_rc 0 "srun health: every guest's two rails pass" srun -N4 --ntasks-per-node=1 \
  bash -c '"$0" "$@" >"'"$FABRIC_OUT"'/health-$(hostname).json"' "$SWEEP" "${HEALTH[@]}"
n=0
for h in fabric-a fabric-b fabric-c fabric-d; do
  n=$((n + 1))
  check "srun health, $h: both rails Active, each at its own address, and the rail pair rxe0 to rxe1 passed" \
    json_check "$FABRIC_OUT/health-$h.json" \
    'd["ok"] and d["summary"]["host"] == "'"$h"'" and d["summary"]["active_ports"] == 2 and d["summary"]["intra_ok"] and
     [(r["device"], r["address"]) for r in kind("port")] == [("rxe0", "10.0.0.'"$n"'"), ("rxe1", "10.0.1.'"$n"'")] and
     [(r["device"], r["peer_device"], r["ok"], r["pings"]) for r in kind("rail_pair")] == [("rxe0", "rxe1", True, 20)] and
     all(r["pcie_width"] is None and r["ok"] for r in kind("device"))'
done
echo "    | the second rail, and health on it: $((SECONDS - t0))s"

# 7. Every rail of every host in one run (--rails auto): rail i of each
# guest meets rail i of the others, both rails of a round at once. First
# the second rail throttled from fabric-d to fabric-c alone (tc on d's
# eth1, filtered to c's second address): that one meeting is slow, c-d
# on rxe0 and every other meeting pass. Then fabric-b's second device
# removed: the ranks agree on two rails at the start, b's rxe1 meetings
# fail at once naming the missing device, and --check intra shows b's
# bad rail with no peer while the other hosts' rxe0 -> rxe1 pass. Each
# guest writes its lines to a file of its own (srun cuts long lines); the
# first run's are kept for the report's tests ($WORK/rails-bw.jsonl).
t0=$SECONDS
# rails_run NAME ARGS...: the sweep under srun, each guest's lines in a
# file, all of them in $WORK/NAME.jsonl.
rails_run() {
  local name=$1; shift
  rm -f "$FABRIC_OUT/$name-"*.jsonl
  # shellcheck disable=SC2016  # $0, $@ and hostname are the task's
  srun -N4 --ntasks-per-node=1 bash -c '"$0" "$@" >"'"$FABRIC_OUT/$name"'-$(hostname).jsonl"' "$SWEEP" "$@" \
    2>"$WORK/$name.err" || true
  cat "$FABRIC_OUT/$name-"*.jsonl >"$WORK/$name.jsonl"
}
RAILS=(--address-file "$FABRIC_OUT/addresses" --json=lines --rails auto --check bw --unidirectional -S 262144
  --duration 1000 --timeout 15000 --bw-fraction 0.25)
on d tc qdisc add dev eth1 root handle 1: prio
on d tc qdisc add dev eth1 parent 1:3 handle 30: netem rate 2mbit limit 100000
on d tc filter add dev eth1 parent 1:0 protocol ip u32 match ip dst 10.0.1.3/32 flowid 1:3
rails_run rails-bw "${RAILS[@]}"
on d tc qdisc del dev eth1 root 2>/dev/null || true
check "--rails auto: every rank agreed on rxe0 and rxe1, each at its address on each" python3 - "$WORK/rails-bw.jsonl" <<'PY'
import json, sys
started = [json.loads(l[l.index("{"):])["started"] for l in open(sys.argv[1]) if '"event":"started"' in l]
assert len(started) == 4, len(started)
for s in started:
    n = "abcd".index(s["host"][-1]) + 1
    assert [(r["name"], r["address"], r["trouble"]) for r in s["rails"]] == \
        [("rxe0", "10.0.0.%d" % n, None), ("rxe1", "10.0.1.%d" % n, None)], s["rails"]
    assert all(r["adapter"]["device"] == r["name"] for r in s["rails"]), s["rails"]
PY
check "--rails auto, rxe1 throttled from d to c: that meeting alone is slow, the eleven others pass" python3 - "$WORK/rails-bw.jsonl" <<'PY'
import json, sys
said = [json.loads(l[l.index("{"):])["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
mine = [r for r in said if r["side"] == "client" and not r["retest"]]
meet = {(r["server"], r["client"], r["server_rail"], r["client_rail"]): r for r in mine}
assert len(meet) == 12 and len(mine) == 12, sorted(meet)
assert all(k[2] == k[3] for k in meet), "rail i meets rail i"
gbps = lambda r: r["bandwidth"]["client_to_server"]["gbps"] if r["ok"] else 0
slow = meet.pop(("fabric-c", "fabric-d", "rxe1", "rxe1"))
others = sorted(gbps(r) for r in meet.values())
print("    | rxe1 d->c %.4f Gb/s; the others %.4f to %.4f" % (gbps(slow), others[0], others[-1]))
assert all(r["ok"] for r in meet.values()), [r["error"] for r in meet.values() if not r["ok"]]
assert gbps(slow) < 0.004 and gbps(slow) < others[0] / 2, (gbps(slow), others)
PY
check "--rails auto: rank 0 named the throttled meeting, by its rails, to meet again" python3 - "$WORK/rails-bw.jsonl" <<'PY'
import json, sys
ev = [json.loads(l[l.index("{"):])["outliers"] for l in open(sys.argv[1]) if '"event":"outliers"' in l]
assert ev and ev[0]["error"] is None, ev
again = [(p["server"], p["client"], p["server_rail"], p["client_rail"]) for p in ev[0]["retest_pairs"]]
assert ("fabric-c", "fabric-d", "rxe1", "rxe1") in again, again
assert ("fabric-c", "fabric-d", "rxe0", "rxe0") not in again, again
PY
# The report of those lines names the rail and nothing else: a plane per
# rail, judged by the rails' common bar.
"$SWEEP" report -j "$WORK/rails-bw.jsonl" >"$WORK/rails-bw.report" 2>/dev/null
check "report of every rail: c-d on rxe1 alone is bad, rxe1 the worst rail" python3 - "$WORK/rails-bw.report" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(r["a"], r["b"], r["a_rail"], r["b_rail"]) for r in d["results"] if r["state"] != "ok"]
assert bad == [("fabric-c", "fabric-d", "rxe1", "rxe1")], bad
assert d["summary"]["rail_names"] == ["rxe0", "rxe1"] and d["summary"]["worst_rails"] == [{"rail": "rxe1", "bad_pairs": 1}], d["summary"]
assert d["exit_code"] == 1 and d["summary"]["pairs"] == 12, d["summary"]
PY
check "report of every rail: a valid document" json_check "$WORK/rails-bw.report" 'd["summary"]["check"] == "bw"'
"$SWEEP" report "$WORK/rails-bw.jsonl" >"$WORK/rails-bw.text" 2>&1
check "report of every rail: the text names the pair on its rail" grep -q "fabric-c <-> fabric-d on rail rxe1: " "$WORK/rails-bw.text"
expect_rc 0 "report --rail rxe0: the other rail passes, judged by the common bar" "$SWEEP" report -j --rail rxe0 "$WORK/rails-bw.jsonl"
echo "    | --rails auto --check bw, one rail throttled: $((SECONDS - t0))s"

t1=$SECONDS
on b rdma link delete rxe1
rails_run rails-gone "${RAILS[@]}" --retests 0 --duration 500
rails_run rails-intra --address-file "$FABRIC_OUT/addresses" --json=lines --rails auto --check intra -C 20 --timeout 8000
on b rdma link add rxe1 type rxe netdev eth1
on b "$BED/rails-up"
check "--rails auto, fabric-b without rxe1: b named at the start, its rxe1 meetings failed for it, every other passed" \
  python3 - "$WORK/rails-gone.jsonl" <<'PY'
import json, sys
lines = [json.loads(l[l.index("{"):]) for l in open(sys.argv[1]) if l.strip()]
started = {e["started"]["host"]: e["started"] for e in lines if e.get("event") == "started"}
assert len(started) == 4 and all([r["name"] for r in s["rails"]] == ["rxe0", "rxe1"] for s in started.values()), started
assert started["fabric-b"]["rails"][1]["trouble"] == "no RDMA device rxe1 (1 rail here, 2 in the sweep)", started["fabric-b"]["rails"]
said = [e["result"] for e in lines if e.get("event") == "result"]
assert len(said) == 24, len(said)
why = "fabric-b cannot take part on rail rxe1: no RDMA device rxe1 (1 rail here, 2 in the sweep)"
for r in said:
    if "fabric-b" in (r["server"], r["client"]) and r["server_rail"] == "rxe1":
        assert not r["ok"] and r["error"] == why and r["elapsed_us"] < 1e6, r
    else:
        assert r["ok"], r
PY
check "--check intra: each host's rxe0 to its rxe1 passes but fabric-b's, failed for its missing device" \
  python3 - "$WORK/rails-intra.jsonl" <<'PY'
import json, sys
said = [json.loads(l[l.index("{"):])["result"] for l in open(sys.argv[1]) if '"event":"result"' in l]
got = {r["server"]: r for r in said}
assert len(said) == 4 and sorted(got) == ["fabric-a", "fabric-b", "fabric-c", "fabric-d"], said
for host, r in got.items():
    assert r["check"] == "intra" and r["client"] == host and (r["client_rail"], r["server_rail"]) == ("rxe0", "rxe1"), r
    if host == "fabric-b":
        assert not r["ok"] and "rxe1" in r["error"] and "no RDMA device" in r["error"], r
    else:
        assert r["ok"] and r["pings"] == 20, r
PY
"$SWEEP" report -j "$WORK/rails-gone.jsonl" >"$WORK/rails-gone.report" 2>/dev/null
"$SWEEP" report -j "$WORK/rails-intra.jsonl" >"$WORK/rails-intra.report" 2>/dev/null
check "report: fabric-b's three rxe1 pairs failed, b the worst host, rxe1 the worst rail; intra: b's own rails" \
  python3 - "$WORK/rails-gone.report" "$WORK/rails-intra.report" <<'PY'
import json, sys
gone, intra = (json.load(open(f)) for f in sys.argv[1:3])
# Failed, not merely bad: a half-second write without re-tests on loaded
# emulated guests may judge a healthy pair slow (a-b on rxe0 once was).
bad = sorted((r["a"], r["b"], r["a_rail"]) for r in gone["results"] if r["state"] == "failed")
assert bad == [("fabric-a", "fabric-b", "rxe1"), ("fabric-b", "fabric-c", "rxe1"), ("fabric-b", "fabric-d", "rxe1")], bad
assert all(r["state"] in ("ok", "slow") for r in gone["results"] if r["b_rail"] == "rxe0"), gone["results"]
assert gone["summary"]["worst_hosts"][0]["host"] == "fabric-b" and gone["summary"]["worst_rails"][0]["rail"] == "rxe1", gone["summary"]
bad = [(r["a"], r["b"], r["state"]) for r in intra["results"] if r["state"] != "ok"]
assert bad == [("fabric-b/rxe0", "fabric-b/rxe1", "failed")], bad
assert intra["summary"]["pairs"] == 4 and intra["summary"]["check"] == "intra", intra["summary"]
PY
echo "    | a rail's device removed, and --check intra: $((SECONDS - t1))s"

finish
