# ib_acme benchmark, run in the guest by bench/run: lookups per second of
# ours and rdma-core's for -C COUNT resolutions of one address against the
# same ACM stand-in (a fresh one per run, so both see the same cache state),
# best of ROUNDS, alternating which tool goes first.
BIN=$1
COUNT=${ACM_BENCH_COUNT:-10000}
ROUNDS=${ACM_BENCH_ROUNDS:-5}
RESPONDER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/acm" && pwd)/acm_responder.py
WORK=$(mktemp -d /tmp/acm-bench.XXXXXX)

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# lookups_per_sec TOOL: one timed run against a fresh stand-in.
lookups_per_sec() {
  rm -f "$WORK/ready"
  timeout 300 python3 "$RESPONDER" --unix "$WORK/acm.sock" --ready "$WORK/ready" >/dev/null 2>&1 &
  local srv=$!
  for _ in $(seq 200); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
  local t0 t1
  t0=$(now_us)
  timeout 300 "$1" -S "$WORK/acm.sock" -d 10.0.0.5 -C "$COUNT" >/dev/null 2>&1 || { echo "bench: $1 failed" >&2; kill $srv; echo 0; return; }
  t1=$(now_us)
  kill $srv; wait $srv 2>/dev/null
  awk -v n="$COUNT" -v us=$((t1 - t0)) 'BEGIN {printf "%.0f", n / (us / 1e6)}'
}

best_ours=0 best_theirs=0
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then o=$(lookups_per_sec "$BIN/ib_acme"); t=$(lookups_per_sec /usr/bin/ib_acme)
  else t=$(lookups_per_sec /usr/bin/ib_acme); o=$(lookups_per_sec "$BIN/ib_acme"); fi
  [ "$o" -gt "$best_ours" ] && best_ours=$o
  [ "$t" -gt "$best_theirs" ] && best_theirs=$t
done

# Our own view of the same run: latency percentiles per lookup.
timeout 300 python3 "$RESPONDER" --unix "$WORK/acm.sock" --ready "$WORK/ready2" >/dev/null 2>&1 &
srv=$!
for _ in $(seq 200); do [ -e "$WORK/ready2" ] && break; sleep 0.05; done
stats=$(timeout 300 "$BIN/ib_acme" -S "$WORK/acm.sock" -d 10.0.0.5 -C "$COUNT" --stats | grep '^Lookups:')
kill $srv; wait $srv 2>/dev/null
rm -rf "$WORK"

echo "ib_acme: -C $COUNT against the ACM stand-in, best of $ROUNDS: rdma-core ${best_theirs}/s, ours ${best_ours}/s"
echo "ib_acme: ours --stats: ${stats#Lookups: }"
awk -v o="$best_ours" -v t="$best_theirs" 'BEGIN {
  printf "ib_acme: ours / rdma-core lookups/s = %.2f (target >= 1.0)\n", (t > 0 ? o / t : 0) }'
