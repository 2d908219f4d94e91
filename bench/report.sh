#!/usr/bin/env bash
# fabric-sweep report at scale, on the host (no guest, no RDMA): the lines
# of a whole sweep of n hosts (bench/sweep-lines: srun labels, both sides
# of every pair, outliers events, every rank's document; a slow host, a
# dead one and a lossy pair) merged with --html and --prometheus; the wall
# time, the peak RSS and the page's size for each n.
# Usage: bench/report.sh BIN_DIR [N...]     (default N: 250 1000 2000)
# bench-hosts: 0
set -euo pipefail
BIN=$1
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(250 1000 2000)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in "${sizes[@]}"; do
  "$here/sweep-lines" "$n" --slow node0003 --dead node0007 --lossy node0001,node0002 -o "$work/in.jsonl"
  input=$(du -m "$work/in.jsonl" | cut -f1)
  /usr/bin/time -v "$BIN/fabric-sweep" report --html "$work/page.html" --prometheus "$work/sweep.prom" \
    "$work/in.jsonl" >/dev/null 2>"$work/time" || true
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
  page=$(du -k "$work/page.html" | cut -f1)
  printf 'report: %5d hosts, input %5d MB: %s wall, %d MB peak RSS, page %d KB\n' "$n" "$input" "$wall" $((rss / 1024)) "$page"
  rm -f "$work/in.jsonl"
done
