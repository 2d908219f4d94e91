#!/usr/bin/env bash
# fabric-sweep discover and report --fabric on simulated InfiniBand fat
# trees (ibsim, routed by OpenSM, reached through libumad2sim): discover
# before and after a fault set through ibsim's console, a sweep's pair
# lines made up from the routes (tests/subnet/pairs: those that cross the
# faulty link slow or failed), and the report's summary.suspects: the
# faulty link first, no healthy link among the first three. The faults: a leaf's uplink with symbol errors
# (PerformanceSet), an uplink unlinked and the routes moved (Unlink), and,
# on a three-level tree, a link trained at 1X. discover's nodes and links
# are compared with rdma-core's ibnetdiscover, and routes with ibtracert.
. "$(dirname "$0")/../acm/lib.sh" "$@"
SWEEP=$BIN/fabric-sweep
SUB=$HERE/../subnet
SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
for f in "$SIM" /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/ibnetdiscover /usr/sbin/ibtracert; do
  [ -e "$f" ] || { echo "SKIP: $f missing (scripts/install-deps installs ibsim-utils, opensm, infiniband-diags)"; finish; exit; }
done
cd "$WORK" || exit 1

# bed NAME NETFILE: ibsim (its console on a FIFO held open) and OpenSM on
# the first switch, on a socket of the bed's own; waits until discover
# sees every CA with a LID.
bed() {
  local name=$1 net=$2
  export IBSIM_SOCKNAME=fabric-subnet-$name-$$
  mkfifo "$WORK/$name.console"
  timeout -k 2 300 sleep 300 >"$WORK/$name.console" &
  _pids+=($!)
  timeout -k 2 300 ibsim -s "$net" <"$WORK/$name.console" >"$WORK/$name.ibsim.log" 2>&1 &
  _pids+=($!)
  exec {console}>"$WORK/$name.console"
  eval "CONSOLE_$name=$console"
  sleep 1
  local first
  first=$(sed -n 's/^Switch [0-9]* "\(.*\)"$/\1/p' "$net" | head -1)
  SIM_HOST=$first LD_PRELOAD=$SIM timeout -k 2 280 opensm -f "$WORK/$name.opensm.log" -s 2 >"$WORK/$name.opensm.out" 2>&1 &
  _pids+=($!)
  local cas
  cas=$(grep -c '^Hca' "$net")
  for _ in $(seq 60); do
    if sim 30 "$SWEEP" discover -o "$WORK/$name.ready.json" >/dev/null 2>&1 &&
       "$PY" - "$WORK/$name.ready.json" "$cas" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cas = [n for n in d["results"] if n["type"] == "ca"]
sys.exit(0 if len(cas) == int(sys.argv[2]) and all(n["ports"][0]["lid"] for n in cas)
         and all(n["lft"] and len(n["lft"]) > max(c["ports"][0]["lid"] for c in cas) for n in d["results"] if n["type"] == "switch") else 1)
PY
    then return 0; fi
    sleep 1
  done
  fail "$name: the subnet did not come up"; tail -5 "$WORK/$name.ibsim.log" "$WORK/$name.opensm.log"
  return 1
}
sim() { local secs=$1; shift; SIM_HOST=${SIM_HOST:-host001 mlx5_0} LD_PRELOAD=$SIM timeout -k 2 "$secs" "$@"; }
console() { local fd; eval "fd=\$CONSOLE_$1"; echo "$2" >&"$fd"; }

# locate NAME BEFORE [AFTER] LINES: fabric-sweep report -j --fabric on the
# pair lines, its document in $WORK/NAME.locate: valid against the schema,
# and exit 1 (a suspect or a bad pair fails the report).
locate() {
  local name=$1 rc=0; shift
  local docs=("${@:1:$#-1}") args=()
  for f in "${docs[@]}"; do args+=(--fabric "$f"); done
  timeout -k 2 120 "$SWEEP" report -j "${args[@]}" "${@: -1}" >"$WORK/$name.locate" 2>"$WORK/$name.locate.err" </dev/null || rc=$?
  [ $rc -eq 1 ] && json_check "$WORK/$name.locate" 'd["summary"]["suspects"] is not None' && return 0
  fail "$name: report --fabric (exit $rc)"; cat "$WORK/$name.locate.err"; head -c 2000 "$WORK/$name.locate"
  return 1
}

# check_first NAME BEFORE [AFTER] LINES NODE:PORT NODE:PORT: the link between
# the two ports is the report's first suspect, and no other link among the
# first three.
check_first() {
  local name=$1; shift
  local a=${*: -2:1} b=${*: -1}
  locate "$name" "${@:1:$#-2}" || return
  if "$PY" - "$WORK/$name.locate" "$a" "$b" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))["summary"]
want = {tuple(x.rsplit(":", 1)) for x in sys.argv[2:4]}
ends = lambda s: {(e["description"], str(e["port"])) for e in s["ends"]}
s = d["suspects"]
print("    | %d suspects; first: %s (score %.2f): %s" % (len(s), sorted(ends(s[0])) if s else None, s[0]["score"] if s else 0, s[0]["reason"] if s else ""))
for x in s[1:3]:
    print("    | then: %s (score %.2f): %s" % (sorted(ends(x)), x["score"], x["reason"]))
sys.exit(0 if s and ends(s[0]) == want and all(ends(x) == want for x in s[1:3]) else 1)
PY
    pass "$name: the faulty link first, no healthy link among the first three"
  else fail "$name"; head -c 3000 "$WORK/$name.locate"; fi
}

# compare_ibnetdiscover NAME DOC: the same nodes and links as rdma-core's.
compare_ibnetdiscover() {
  sim 60 ibnetdiscover >"$WORK/$1.ibnet" 2>/dev/null
  if "$PY" - "$2" "$WORK/$1.ibnet" <<'PY'; then
import json, re, sys
d = json.load(open(sys.argv[1]))
ours_nodes = {int(n["node_guid"], 16) for n in d["results"]}
ours_links = set()
for n in d["results"]:
    for p in n["ports"]:
        if p["remote"]:
            ours_links.add(frozenset({(int(n["node_guid"], 16), p["port"]), (int(p["remote"]["node_guid"], 16), p["remote"]["port"])}))
theirs_nodes, theirs_links, here = set(), set(), None
for line in open(sys.argv[2]):
    m = re.match(r'^(Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]+)"', line)
    if m:
        here = int(m.group(2), 16); theirs_nodes.add(here); continue
    m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\]', line)
    if m and here is not None:
        theirs_links.add(frozenset({(here, int(m.group(1))), (int(m.group(2), 16), int(m.group(3)))}))
print(f"    | ours {len(ours_nodes)} nodes {len(ours_links)} links; ibnetdiscover {len(theirs_nodes)} nodes {len(theirs_links)} links")
sys.exit(0 if ours_nodes == theirs_nodes and ours_links == theirs_links and ours_links else 1)
PY
    pass "$1: discover's nodes and links are ibnetdiscover's"
  else fail "$1: discover and ibnetdiscover differ"; fi
}

# compare_ibtracert DOC SRC DST: the pairs helper's route is ibtracert's.
compare_ibtracert() {
  local lids
  lids=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); l={n["description"]:n["ports"][0]["lid"] for n in d["results"] if n["type"]=="ca"}; print(l[sys.argv[2]], l[sys.argv[3]])' "$1" "$2" "$3")
  # shellcheck disable=SC2086
  sim 30 ibtracert $lids 2>/dev/null | sed -n 's/^\[\([0-9]*\)\] -> .*"\(.*\)"$/\1 \2/p' >"$WORK/trace"
  "$SUB/pairs" "$1" --route "$2" "$3" >"$WORK/ours"
  "$PY" - "$WORK/trace" "$WORK/ours" "$2" <<'PY'
import sys
trace = [l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
# ibtracert: "[out] -> ... "next node"": the out port of the node before.
names = [sys.argv[3]] + [n for _, n in trace]
hops = [f"{names[i]}[{trace[i][0]}]" for i in range(len(trace))]
ours = open(sys.argv[2]).read().split("\n")[:-1]
sys.exit(0 if hops and hops == ours else 1)
PY
}

# ---- two levels: 8 leaves, 4 spines, 32 CAs -----------------------------------
"$SUB/fat-tree" --leaves 8 --spines 4 --hosts 4 -o "$WORK/two.net"
t0=$SECONDS
if bed two "$WORK/two.net"; then
  pass "two levels: OpenSM routed 32 CAs, 8 leaves, 4 spines ($((SECONDS - t0)) s)"
  rc=0; sim 60 "$SWEEP" discover -o "$WORK/a.before.json" -j >"$WORK/a.doc" 2>"$WORK/a.err" || rc=$?
  if [ $rc -eq 0 ] && json_check "$WORK/a.doc" 'd["summary"]["switches"]==12 and d["summary"]["channel_adapters"]==32 and d["summary"]["links"]==64 and d["role"]=="discover"' &&
     cmp -s <("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$WORK/a.before.json") <(echo 44); then
    pass "discover -o -j: a valid document, 12 switches, 32 CAs, 64 links, the file written"
  else fail "discover (exit $rc)"; cat "$WORK/a.err"; fi
  compare_ibnetdiscover two "$WORK/a.before.json"
  ok=1
  for p in "host001 mlx5_0|host030 mlx5_0" "host030 mlx5_0|host001 mlx5_0" "host009 mlx5_0|host017 mlx5_0" "host005 mlx5_0|host006 mlx5_0"; do
    compare_ibtracert "$WORK/a.before.json" "${p%|*}" "${p#*|}" || { ok=0; echo "    | route ${p%|*} -> ${p#*|} differs"; }
  done
  [ $ok = 1 ] && pass "the routes walked through the document's tables are ibtracert's" || fail "routes differ from ibtracert's"

  # A leaf's uplink with symbol errors and link error recoveries.
  console two 'PerformanceSet "leaf03"[6] PortCounters.SymbolErrorCounter=1000'
  console two 'PerformanceSet "spine02"[3] PortCounters.LinkErrorRecoveryCounter=3'
  sleep 1
  sim 60 "$SWEEP" discover -o "$WORK/a.after.json" >/dev/null 2>&1
  "$SUB/pairs" "$WORK/a.before.json" --bad leaf03:6 -o "$WORK/a.pairs" 2>"$WORK/a.pairs.err"
  sed 's/^/    | /' "$WORK/a.pairs.err"
  check_first "errors on leaf03's uplink (PerformanceSet)" "$WORK/a.before.json" "$WORK/a.after.json" "$WORK/a.pairs" leaf03:6 spine02:3
  if "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]["suspects"][0]; sys.exit(0 if s["counters"]=={"symbol_errors":1000,"link_error_recovery":3} else 1)' "$WORK/errors on leaf03's uplink (PerformanceSet).locate"; then
    pass "the counters that rose are named with their increase"; else fail "the counters of the suspect"; fi
  : >"$WORK/empty"
  locate check "$WORK/a.before.json" "$WORK/a.after.json" "$WORK/empty" &&
  if "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]["suspects"]; e={(x["description"],x["port"]) for x in s[0]["ends"]}; sys.exit(0 if len(s)==1 and e=={("leaf03",6),("spine02",3)} else 1)' "$WORK/check.locate"; then
    pass "without pairs, a fabric check: the link whose counters rose, alone"; else fail "fabric check"; cat "$WORK/check.locate"; fi

  # An uplink unlinked: OpenSM moves the routes; the pairs that crossed it failed.
  console two 'Unlink "leaf05"[7]'
  moved=0
  for _ in $(seq 40); do
    sleep 1
    sim 60 "$SWEEP" discover -o "$WORK/b.after.json" >/dev/null 2>&1 || continue
    if "$PY" - "$WORK/a.after.json" "$WORK/b.after.json" <<'PY'; then moved=1; break; fi
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
lft = lambda d: {n["description"]: n["lft"] for n in d["results"] if n["type"] == "switch"}
sys.exit(0 if lft(a)["leaf05"] != lft(b)["leaf05"] and b["summary"]["links"] == 63 else 1)
PY
  done
  [ $moved = 1 ] && pass "Unlink: 63 links, OpenSM moved leaf05's routes" || fail "Unlink: the routes did not move"
  "$SUB/pairs" "$WORK/a.after.json" --bad leaf05:7 --failed -o "$WORK/b.pairs" 2>"$WORK/b.pairs.err"
  sed 's/^/    | /' "$WORK/b.pairs.err"
  check_first "leaf05's uplink unlinked (Unlink)" "$WORK/a.after.json" "$WORK/b.after.json" "$WORK/b.pairs" leaf05:7 spine03:5

  # A CA that answers no MAD: named, the walk goes on, exit 1, the document
  # written all the same.
  console two 'Error "host032 mlx5_0"[1] 100'
  sleep 1
  rc=0; sim 60 "$SWEEP" discover --timeout 300 -o "$WORK/d.json" -j >"$WORK/d.doc" 2>"$WORK/d.err" || rc=$?
  if [ $rc -eq 1 ] && json_check "$WORK/d.doc" 'd["summary"]["channel_adapters"]==31 and len(d["summary"]["unanswered"])==1
      and d["summary"]["unanswered"][0]["port"]==4 and "leaf08 port 4" in d["error"]' && [ -s "$WORK/d.json" ]; then
    pass "a CA that answers no MAD: named (leaf08 port 4), the walk goes on, exit 1, the file written"
  else fail "a silent CA (exit $rc)"; cat "$WORK/d.err"; head -c 600 "$WORK/d.doc"; fi
fi

# ---- three levels: 4 pods of 2 edges and 2 aggregation switches, 4 cores ------
"$SUB/fat-tree" --pods 4 --leaves 2 --spines 2 --cores 2 --hosts 4 --narrow agg03-1:3 -o "$WORK/three.net"
t0=$SECONDS
if bed three "$WORK/three.net"; then
  pass "three levels: OpenSM routed 32 CAs, 20 switches ($((SECONDS - t0)) s)"
  SIM_HOST="host017 mlx5_0" sim 60 "$SWEEP" discover -o "$WORK/c.json" >/dev/null 2>&1
  compare_ibnetdiscover three "$WORK/c.json"
  "$SUB/pairs" "$WORK/c.json" --bad agg03-1:3 -o "$WORK/c.pairs" 2>"$WORK/c.pairs.err"
  sed 's/^/    | /' "$WORK/c.pairs.err"
  check_first "agg03-1's uplink at 1X" "$WORK/c.json" "$WORK/c.pairs" agg03-1:3 core1-01:3
  if "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]["suspects"][0]; sys.exit(0 if (s["width"],s["width_supported"])==("1X","4X") else 1)' "$WORK/agg03-1's uplink at 1X.locate"; then
    pass "the narrow link's width: 1X of 4X"; else fail "the narrow link's width"; fi
fi

finish
