#!/usr/bin/env bash
# fabric-sweep in the Soft-RoCE guest: four ranks of one sweep as four
# processes of this host (each pair on its own port), merged by the report;
# then a sweep with one host dead from the start.
. "$(dirname "$0")/lib.sh" "$@"
SWEEP=$BIN/fabric-sweep
T="--timeout 4000"

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
    'lines[-1]["ok"] and lines[-1]["summary"]["pairs"] == 3 and lines[-1]["summary"]["rounds"] == 3'
done
# Four processes on the guest's two emulated cores make noisy times: the
# outlier rule is the unit tests' to check, here only that all pairs met.
expect_rc 0 "report: every pair passed" "$SWEEP" report --outlier-factor 1000 --html "$WORK/all.html" -j "$WORK/all.jsonl"
check "report: six pairs, all ok, a valid document" json_check "$LAST_OUT" \
  'd["summary"]["ok"] == 6 and d["summary"]["pairs"] == 6 and all(r["latency"]["p50_us"] > 0 for r in d["results"])'
check "report: the heat map is a page with an SVG" grep -q "<svg" "$WORK/all.html"
expect_rc 0 "report, human: the matrix" "$SWEEP" report --outlier-factor 1000 "$WORK/all.jsonl"
check "report, human: a row per host" test "$(grep -c '^h[1-4] ' "$LAST_OUT")" -eq 4

# Host h4 never starts: each of its peers loses one timeout, not more, and
# the report names it.
t0=$SECONDS
sweep dead 0 1 2
check "a dead host costs its peers a bounded wait" test $((SECONDS - t0)) -le 60
expect_rc 1 "report: the dead host's pairs fail (1)" "$SWEEP" report --outlier-factor 1000 -j "$WORK/dead.jsonl"
check "report: h4 is the worst host, its three pairs failed" json_check "$LAST_OUT" \
  'd["summary"]["failed"] == 3 and d["summary"]["ok"] == 3 and d["summary"]["worst_hosts"][0]["host"] == "h4"'

finish
