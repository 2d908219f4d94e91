#!/usr/bin/env bash
# ib_acme -v and --probe against a real Subnet Administrator: OpenSM on a
# simulated InfiniBand subnet (ibsim), reached through libumad2sim. The
# stand-in ACM service hands out path records taken from the SA (saquery),
# once exact and once with a wrong SL: ours must confirm the first field by
# field and name the SL of the second.
. "$(dirname "$0")/lib.sh" "$@"
OURS=$BIN/ib_acme
NET=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
for f in "$NET" "$SIM" /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/saquery; do
  [ -e "$f" ] || { echo "SKIP: $f missing (scripts/install-deps installs ibsim-utils, opensm)"; finish; exit; }
done
# A private simulator: its socket name is ours alone.
# umad2sim writes its simulated sysfs (sys-PID/) into the working directory.
cd "$WORK" || exit 1
export IBSIM_SOCKNAME=fabric-acm-$$
timeout -k 2 300 ibsim -s -n "$NET" >"$WORK/ibsim.log" 2>&1 &
_pids+=($!)
sleep 1
# umad2sim attaches each program to a node: OpenSM to the first switch (the
# SM port), our tools and saquery to an HCA.
sim() { LD_PRELOAD=$SIM timeout -k 2 "$@"; }
SIM_HOST=Switch1 LD_PRELOAD=$SIM timeout -k 2 280 opensm -f "$WORK/opensm.log" >"$WORK/opensm.out" 2>&1 &
_pids+=($!)

export SIM_HOST=Hca1
up=0
for _ in $(seq 60); do
  if sim 15 "$OURS" --probe --json >"$WORK/probe" 2>"$WORK/probe.err" &&
     json_check "$WORK/probe" 'any(p["sa"]["answered"] for p in d["summary"]["probe_facts"]["ports"])'; then up=1; break; fi
  sleep 1
done
if [ $up -eq 1 ]; then pass "OpenSM answers PathRecord queries on the simulated subnet"; else
  fail "no SA on the simulated subnet"; tail -5 "$WORK/opensm.log" "$WORK/probe.err" "$WORK/ibsim.log"; finish; exit; fi

if json_check "$WORK/probe" '[p for p in d["summary"]["probe_facts"]["ports"] if p["sa"]["answered"]][0]["link_layer"]=="InfiniBand"
    and [p for p in d["summary"]["probe_facts"]["ports"] if p["sa"]["answered"]][0]["state"]=="Active"
    and [p for p in d["summary"]["probe_facts"]["ports"] if p["sa"]["answered"]][0]["sm_lid"]>0
    and [o for o in kind("check") if o["option"]=="route_prot" and o["value"]=="sa"][0]["usable"]
    and [o for o in kind("check") if o["option"]=="addr_prot"][0]["usable"]
    and d["summary"]["probe_facts"]["service_status"]["running"]==False'; then
  pass "--probe: active IB port, SM LID, SA answers, route_prot sa and addr_prot acm usable"
else fail "--probe JSON"; head -c 2000 "$WORK/probe"; fi
rc=0; sim 20 "$OURS" --probe >"$WORK/probe.txt" 2>/dev/null || rc=$?
if [ $rc -eq 0 ] && grep -Eq '^ibsim0 .* InfiniBand +Active .* answers' "$WORK/probe.txt" && grep -Eq '^  route_prot +sa +yes' "$WORK/probe.txt"; then
  pass "--probe human table"; else fail "--probe table (exit $rc)"; cat "$WORK/probe.txt"; fi

# A real path record from the SA, from our port to another HCA.
sim 20 saquery -p >"$WORK/pr" 2>/dev/null
mygid=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([p for p in d["summary"]["probe_facts"]["ports"] if p["sa"]["answered"]][0]["gid"])' "$WORK/probe")
"$PY" - "$WORK/pr" "$mygid" "$WORK/paths.json" <<'PY'
import ipaddress, json, sys
recs, cur = [], {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("PathRecord dump"):
        cur = {}; recs.append(cur); continue
    if "..." in line:
        k, v = line.split(".", 1)[0], line.rsplit(".", 1)[1]
        cur[k] = v
me = str(ipaddress.IPv6Address(sys.argv[2]))
r = next(r for r in recs if str(ipaddress.IPv6Address(r["sgid"])) == me and r["dgid"] != r["sgid"])
i = lambda k: int(r[k], 0)
hfr = i("hop_flow_raw")
path = {"dgid": r["dgid"], "sgid": r["sgid"], "dlid": i("dlid"), "slid": i("slid"),
        "flow_label": (hfr >> 8) & 0xFFFFF, "hop_limit": hfr & 0xFF, "tclass": i("tclass"),
        "reversible": bool(i("num_path_revers") & 0x80), "numb_path": i("num_path_revers") & 0x7F,
        "pkey": i("pkey"), "qos_class": i("qos_class"), "sl": i("sl"),
        "mtu_selector": i("mtu") >> 6, "mtu": i("mtu") & 0x3F, "rate_selector": i("rate") >> 6, "rate": i("rate") & 0x3F,
        "packet_life_time_selector": i("pkt_life") >> 6, "packet_life_time": i("pkt_life") & 0x3F}
wrong = dict(path, sl=(path["sl"] + 3) & 0xF)
json.dump({"10.0.0.5": path, "10.0.0.6": wrong}, open(sys.argv[3], "w"))
PY
[ -s "$WORK/paths.json" ] && pass "saquery gives a path record from our port" || { fail "no path record from saquery"; head "$WORK/pr"; }

responder sa --paths "$WORK/paths.json"
rc=0; sim 30 "$OURS" -S "$WORK/sa.sock" -d 10.0.0.5 -v >"$WORK/v" 2>"$WORK/v.err" || rc=$?
if [ $rc -eq 0 ] && grep -q '^SA verification: success$' "$WORK/v" && grep -q '^SA path record: match (ibsim0/1)$' "$WORK/v"; then
  pass "-v: the SA's own record matches the service's, field by field"
else fail "-v match (exit $rc)"; cat "$WORK/v" "$WORK/v.err"; fi
rc=0; sim 30 "$OURS" -S "$WORK/sa.sock" -d 10.0.0.6 -v >"$WORK/v" 2>"$WORK/v.err" || rc=$?
if [ $rc -eq 1 ] && grep -Eq '^SA path record: mismatch \(ibsim0/1\): sl acm [0-9]+ sa [0-9]+$' "$WORK/v"; then
  pass "-v: a wrong SL from the service is caught (exit 1)"
else fail "-v mismatch (exit $rc)"; cat "$WORK/v" "$WORK/v.err"; fi
rc=0; sim 30 "$OURS" -S "$WORK/sa.sock" -d 10.0.0.[5-6] -v --json >"$WORK/vj" 2>"$WORK/vj.err" || rc=$?
if [ $rc -eq 1 ] && json_check "$WORK/vj" 'kind("lookup")[0]["verification"]["sa"]["match"] and kind("lookup")[0]["verification"]["acm"]
    and kind("lookup")[0]["verification"]["sa"]["record"]["dlid"]==kind("lookup")[0]["path"]["dlid"]
    and not kind("lookup")[1]["ok"] and [m["field"] for m in kind("lookup")[1]["verification"]["sa"]["mismatches"]]==["sl"]'; then
  pass "-v --json: the SA record and the mismatching fields"
else fail "-v --json (exit $rc)"; head -c 1500 "$WORK/vj"; fi
# rdma-core's ib_acme verifies through the service only; it agrees.
rc=0; sim 30 "$ORIG" -S "$WORK/sa.sock" -d 10.0.0.5 -v >"$WORK/o" 2>/dev/null || rc=$?
if [ $rc -eq 0 ] && grep -q '^SA verification: success$' "$WORK/o"; then pass "rdma-core's ib_acme -v through the stand-in"
else fail "rdma-core's ib_acme -v (exit $rc)"; cat "$WORK/o"; fi

# Ctrl-C while the SA does not answer (OpenSM paused): the wait ends at
# once with 130, not at --timeout.
pkill -STOP -f "opensm -f $WORK/opensm.log" 2>/dev/null
sleep 0.5
t0=$SECONDS
rc=0; sim --preserve-status -s INT 2 "$OURS" -S "$WORK/sa.sock" -d 10.0.0.5 -v --timeout 30000 >"$WORK/i" 2>"$WORK/i.err" || rc=$?
if [ $rc -eq 130 ] && [ $((SECONDS - t0)) -le 6 ]; then pass "-v: Ctrl-C while the SA is silent exits 130 at once"
else fail "-v Ctrl-C: exit $rc after $((SECONDS - t0)) s"; cat "$WORK/i" "$WORK/i.err"; fi

finish
