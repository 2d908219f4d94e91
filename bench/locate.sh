#!/usr/bin/env bash
# fabric-sweep report --fabric at scale, on the host (no guest, no
# simulator): a synthetic three-level fat tree of n hosts, its fabric
# documents before and after (tests/subnet/fabric_inputs: one aggregation
# uplink's symbol errors risen), a whole sweep of its hosts whose pairs
# across that uplink are slow (bench/sweep-lines --slow-pairs), and the
# report with both documents, --html and --prometheus; the wall time, the
# peak RSS, and whether that uplink came first.
# Usage: bench/locate.sh BIN_DIR [N...]     (default N: 500 2000)
# bench-hosts: 0
set -euo pipefail
BIN=$1
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500 2000)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in "${sizes[@]}"; do
  "$BIN/../tests/fabric_inputs" "$work" --hosts "$n" 2>"$work/inputs"
  "$here/sweep-lines" "$n" --prefix host --slow-pairs "$work/bad-pairs" -o "$work/in.jsonl"
  input=$(du -m "$work/in.jsonl" | cut -f1)
  /usr/bin/time -v "$BIN/fabric-sweep" report -j --fabric "$work/before.json" --fabric "$work/after.json" \
    --html "$work/page.html" --prometheus "$work/sweep.prom" "$work/in.jsonl" >"$work/out.json" 2>"$work/time" || true
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
  first=$(/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]["suspects"]; print(" - ".join(e["description"] + " port " + str(e["port"]) for e in s[0]["ends"]) if s else "none")' "$work/out.json")
  printf 'report --fabric: %5d hosts, input %5d MB: %s wall, %d MB peak RSS; first suspect %s (%s)\n' "$n" "$input" "$wall" \
    $((rss / 1024)) "$first" "$(cat "$work/inputs")"
  rm -f "$work/in.jsonl"
done
