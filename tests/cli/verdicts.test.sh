#!/usr/bin/env bash
# fabric-sweep report's verdicts as a user meets them, on synthetic sweep
# lines (every pair of ten hosts, 1% noise, as the rules were first tried):
# faults in groups flag exactly the pairs that cross them, an expectation
# sets the bar, --expect-gbps auto judges each pair by its ports, and a
# re-run of the outliers is judged by its first run's bar, and a sweep of
# every rail is judged rail by rail against the rails' common bar. No RDMA
# needed.
#
# Usage: tests/cli/verdicts.test.sh BIN_DIR
set -u
. "$(dirname "$0")/lib.sh" "$@"
# report ARGS...: the report's document in $WORK/out, its status in $rc.
report() {
  rc=0
  timeout -k 2 60 "$BIN/fabric-sweep" report -j "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
}
doc() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$WORK/out')); sys.exit(0 if ($1) else 1)"; }

# fleet NAME CHECK HOSTS FIGURE [ADAPTER]: every pair's client line, the
# figure a Python expression of a and b (host indices), times 1% noise of a
# fixed seed; ADAPTER, a Python expression of h, adds each rank's started
# event with its port.
fleet() {
  /usr/bin/python3 - "$@" >"$WORK/$1.jsonl" <<'PY'
import json, random, sys
name, check, n, figure = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
adapter = sys.argv[5] if len(sys.argv) > 5 else None
random.seed(name)
hosts = [f"h{i:02}" for i in range(n)]
if adapter:
    for h in range(n):
        print(json.dumps({"tool": "fabric-sweep", "event": "started", "time": 1.7e9,
                          "started": {"rank": h, "host": hosts[h], "hosts": hosts, "run": "r1", "adapter": eval(adapter)}}))
for a in range(n):
    for b in range(a + 1, n):
        f = eval(figure) * random.gauss(1, 0.01)
        r = {"kind": "pair", "ok": True, "error": None, "round": 1, "sweep": 1, "retest": False,
             "server": hosts[a], "client": hosts[b], "side": "client", "check": check, "run": "r1"}
        if check == "bw":
            d = {"bytes": int(f * 1e9 / 8), "elapsed_us": 1e6, "gbps": f}
            r["bandwidth"] = {"server_to_client": d, "client_to_server": d}
        else:
            r["latency"] = {"count": 100, "p50_us": f, "p99_us": f * 1.2}
        print(json.dumps({"tool": "fabric-sweep", "event": "result", "time": 1.7e9 + 1, "result": r}))
PY
}
# slow_pairs EXPECTED: the report's slow pairs are exactly those the
# Python expression EXPECTED (of a and b, host indices) picks.
slow_pairs() {
  /usr/bin/python3 - "$WORK/out" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
idx = {h: i for i, h in enumerate(d["summary"]["hosts"])}
got = {(idx[r["a"]], idx[r["b"]]) for r in d["results"] if r["state"] == "slow"}
n = len(idx)
want = {(a, b) for a in range(n) for b in range(a + 1, n) if eval(sys.argv[2])}
if got != want:
    print("slow:", sorted(got), "\nwanted:", sorted(want), file=sys.stderr)
    sys.exit(1)
PY
}

# The issue's table, each case as a user runs it.
fleet uplink bw 10 '80 if (a < 3) != (b < 3) else 100'
report "$WORK/uplink.jsonl"
check "bw, 3 of 10 hosts behind an uplink at 80%: its 21 cross pairs slow, exit 1" \
  test "$rc" -eq 1 -a "$(doc 'd["summary"]["slow"] == 21' && echo y)" = y
check "bw, the uplink: exactly the cross pairs" slow_pairs '(a < 3) != (b < 3)'
check "bw, the uplink: the groups are named" doc 'any("h00, h01, h02 pass with each other" in n for n in d["summary"]["notes"])'
check "bw, the uplink: a valid document" "$VALIDATE" "$WORK/out"

fleet adapters bw 10 '80 if a < 3 or b < 3 else 100'
report "$WORK/adapters.jsonl"
check "bw, 3 of 10 hosts at 80% with every peer: their 24 pairs slow, exit 1" \
  test "$rc" -eq 1 -a "$(doc 'd["summary"]["slow"] == 24' && echo y)" = y
check "bw, the slow adapters: exactly their pairs; the fleet split in two" \
  slow_pairs 'a < 3 or b < 3'
check "bw, the slow adapters: the split in summary.bar" \
  doc 'd["summary"]["bar"]["by"] == "fleet" and d["summary"]["bar"]["split"]["slower_pairs"] == 24'

fleet half bw 10 '70 if (a < 5) != (b < 5) else 100'
report "$WORK/half.jsonl"
check "bw, 5 of 10 behind a link at 70%: its 25 cross pairs slow, exit 1" \
  test "$rc" -eq 1 -a "$(doc 'd["summary"]["slow"] == 25' && echo y)" = y
check "bw, half behind a link: exactly the cross pairs" slow_pairs '(a < 5) != (b < 5)'

fleet ping-half ping 10 '60 if (a < 5) != (b < 5) else 20'
report "$WORK/ping-half.jsonl"
check "ping, 5 of 10 behind a link at 3x: its 25 cross pairs slow, exit 1" \
  test "$rc" -eq 1 -a "$(doc 'd["summary"]["slow"] == 25' && echo y)" = y
check "ping, half behind a link: judged by the healthy pairs' median" \
  doc 'abs(d["summary"]["median_p50_us"] - 20) < 1 and d["summary"]["bar"]["bar_us"] < 60'

fleet expected bw 4 '110 if (a, b) == (0, 1) else 100'
report --expect-gbps 95 "$WORK/expected.jsonl"
check "bw, 4 hosts, one pair at 110, five at 100, --expect-gbps 95: none slow, exit 0" \
  test "$rc" -eq 0 -a "$(doc 'd["summary"]["slow"] == 0 and d["summary"]["bar"]["by"] == "expected"' && echo y)" = y
report "$WORK/expected.jsonl"
check "bw, the same 4 hosts by the fleet's bar: the lucky pair sets no bar, exit 0" test "$rc" -eq 0

# --expect-gbps auto: h03's port came up at QDR among EDR hosts; its pairs
# run at what its port can do, h01-h02 is a slow link.
fleet ports bw 4 '31 if b == 3 else 60 if (a, b) == (1, 2) else 97' \
  '{"device": "mlx5_0", "port": 1, "link_layer": "InfiniBand", "mtu": 4096, "width": "4X", "speed": "QDR" if h == 3 else "EDR", "rate_gbps": 40 if h == 3 else 100}'
report --expect-gbps auto "$WORK/ports.jsonl"
check "bw --expect-gbps auto: the slow link alone, not the QDR host's pairs (exit 1)" \
  test "$rc" -eq 1 -a "$(slow_pairs '(a, b) == (1, 2)' && echo y)" = y
check "bw --expect-gbps auto: each pair's bar from its ports" \
  doc '[round(r["bandwidth"]["bar_gbps"], 1) for r in d["results"] if r["b"] == "h03"] == [29.6, 29.6, 29.6] and d["summary"]["bar"]["by"] == "ports" and d["options"]["expect_gbps_auto"]'
check "bw --expect-gbps auto: a valid document" "$VALIDATE" "$WORK/out"
rc=0
"$BIN/fabric-sweep" report --expect-gbps fast "$WORK/ports.jsonl" >/dev/null 2>"$WORK/err" || rc=$?
check "--expect-gbps fast: a usage error (2) naming the value" test "$rc" -eq 2 -a -n "$(grep -e "fast" "$WORK/err")"
rc=0
"$BIN/fabric-sweep" report --expect-us 0 "$WORK/ports.jsonl" >/dev/null 2>"$WORK/err" || rc=$?
check "--expect-us 0: a usage error (2)" test "$rc" -eq 2

# A re-run of the outliers, judged by its first run: ten hosts, h09 at 3x
# with h00..h03; the outliers file carries the bar; the re-run meets those
# four pairs alone, still at 3x, and its ranks carry the bar in their lines.
fleet first ping 10 '60 if b == 9 and a < 4 else 20'
rc=0
"$BIN/fabric-sweep" report --outliers "$WORK/suspects" "$WORK/first.jsonl" >/dev/null 2>&1 || rc=$?
check "re-run: the first run's report writes the outliers and their bar" \
  test "$rc" -eq 1 -a "$(grep -c '^#bar ping ' "$WORK/suspects")" -eq 1
bar=$(awk '/^#bar ping /{print $3}' "$WORK/suspects")
/usr/bin/python3 - "$WORK/rerun.jsonl" "$bar" <<'PY'
import json, sys
out = open(sys.argv[1], "w")
hosts = [f"h{i:02}" for i in range(10)]
for h in (0, 1, 2, 3, 9):
    peers = ["h09"] if h != 9 else ["h00", "h01", "h02", "h03"]
    out.write(json.dumps({"tool": "fabric-sweep", "event": "started", "time": 1.8e9, "started": {
        "rank": h, "host": hosts[h], "hosts": hosts, "run": "r2", "peers": peers,
        "first_run": {"bar_us": float(sys.argv[2]), "bar_gbps": None}}}) + "\n")
for a in range(4):
    out.write(json.dumps({"tool": "fabric-sweep", "event": "result", "time": 1.8e9 + 1, "result": {
        "kind": "pair", "ok": True, "error": None, "round": 1, "sweep": 1, "retest": False, "server": hosts[a],
        "client": "h09", "side": "client", "check": "ping", "run": "r2",
        "latency": {"count": 100, "p50_us": 60 + a, "p99_us": 70}}}) + "\n")
PY
report "$WORK/rerun.jsonl"
check "re-run: its four pairs still at 3x are slow by the first run's bar (exit 1)" \
  test "$rc" -eq 1 -a "$(doc 'd["summary"]["slow"] == 4 and d["summary"]["bar"]["by"] == "first_run"' && echo y)" = y
check "re-run: a note says so" doc 'any("judged by the first run" in n for n in d["summary"]["notes"])'
report --expect-us 30 "$WORK/rerun.jsonl"
check "re-run: an expectation given to the report judges over it (exit 0)" test "$rc" -eq 0

# ---- every rail: a plane per rail, judged by the rails' common bar ------
# Two rails of six hosts; rail rxe1 of h04 at 60% with every peer (its
# adapter): those five pairs only, and rxe1 the worst rail.
/usr/bin/python3 - >"$WORK/rails.jsonl" <<'PY'
import json, random
random.seed("rails")
hosts = [f"h{i:02}" for i in range(6)]
for rail in ("rxe0", "rxe1"):
    for a in range(6):
        for b in range(a + 1, 6):
            f = (60 if rail == "rxe1" and 4 in (a, b) else 100) * random.gauss(1, 0.01)
            d = {"bytes": int(f * 1e9 / 8), "elapsed_us": 1e6, "gbps": f}
            print(json.dumps({"tool": "fabric-sweep", "event": "result", "time": 1.7e9, "result": {
                "kind": "pair", "ok": True, "error": None, "round": 1, "sweep": 1, "retest": False,
                "server": hosts[a], "client": hosts[b], "side": "client", "check": "bw", "run": "r1",
                "server_rail": rail, "client_rail": rail,
                "bandwidth": {"server_to_client": d, "client_to_server": d}}}))
PY
report "$WORK/rails.jsonl"
check "rails: h04's five pairs on rxe1 are slow, nothing else (exit 1)" test "$rc" -eq 1 -a "$(doc '
sorted((r["a"], r["b"], r["a_rail"]) for r in d["results"] if r["state"] != "ok") ==
    sorted((a, b, "rxe1") for a, b in [("h00", "h04"), ("h01", "h04"), ("h02", "h04"), ("h03", "h04"), ("h04", "h05")])
' && echo y)" = y
check "rails: rxe1 is the worst rail, h04 the worst host" \
  doc 'd["summary"]["worst_rails"] == [{"rail": "rxe1", "bad_pairs": 5}] and d["summary"]["worst_hosts"][0]["host"] == "h04"'
check "rails: a valid document" "$VALIDATE" "$WORK/out"
report --rail rxe0 "$WORK/rails.jsonl"
check "rails: --rail rxe0 alone passes (exit 0), judged by the common bar" \
  test "$rc" -eq 0 -a "$(doc 'd["summary"]["pairs"] == 15 and d["summary"]["bar"]["fleet_pairs"] == 30' && echo y)" = y
report --rail mlx5_7 "$WORK/rails.jsonl"
check "rails: --rail of no rail is a usage error (exit 2) naming the rails, in a valid document" \
  test "$rc" -eq 2 -a "$(doc '"rxe0, rxe1" in d["error"]' && echo y)" = y
check "rails: the error document is valid" "$VALIDATE" "$WORK/out"
rc=0
timeout -k 2 60 "$BIN/fabric-sweep" report "$WORK/rails.jsonl" >"$WORK/text" 2>&1 </dev/null || rc=$?
check "rails: the text has a matrix per rail and names the slow rail's pairs" \
  grep -q "^slow: h04 <-> 5 hosts on rail rxe1: " "$WORK/text"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
