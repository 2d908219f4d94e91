# rping benchmark, run in the guest by bench/run: time per ping of ours and
# rdma-core's (same -C and -S, each against its own server), and our
# --busy-poll time per ping against the wire floor, 8 x perftest's
# ib_send_lat -R t_typical (a ping is two SEND round trips plus a READ and a
# WRITE: eight one-way trips). The floor is a steady-state time per
# iteration, so the busy-poll figure is one too: the difference between runs
# of 2 x COUNT and COUNT pings (best of ROUNDS each), divided by COUNT, which
# leaves out process start and connection setup.
BIN=$1
ADDR=$FABRIC_ADDR
COUNT=${RPING_BENCH_COUNT:-2000}
ROUNDS=${RPING_BENCH_ROUNDS:-3}
SIZE=64

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# run_us CLIENT_ARGS...: starts $SERVER, runs the client, prints the
# client's whole run time in microseconds.
run_us() {
  $SERVER >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  local t0 t1
  t0=$(now_us)
  timeout 300 "$@" >/dev/null 2>&1 || { echo "bench: $* failed" >&2; kill "$server"; return 1; }
  t1=$(now_us)
  wait "$server" 2>/dev/null
  echo $(( t1 - t0 ))
}

# best_us CLIENT_ARGS...: the shortest of ROUNDS runs.
best_us() {
  local best=0 t
  for _ in $(seq "$ROUNDS"); do
    t=$(run_us "$@") || return 1
    if [ "$best" -eq 0 ] || [ "$t" -lt "$best" ]; then best=$t; fi
  done
  echo "$best"
}

SERVER="rping -s -a $ADDR -S $SIZE"
theirs=$(( $(run_us rping -c -a "$ADDR" -C "$COUNT" -S "$SIZE") / COUNT ))
SERVER="$BIN/rping -s -a $ADDR -S $SIZE"
ours=$(( $(run_us "$BIN/rping" -c -a "$ADDR" -C "$COUNT" -S "$SIZE") / COUNT ))
SERVER="$BIN/rping -s -a $ADDR -S $SIZE --busy-poll"
busy_n=$(best_us "$BIN/rping" -c -a "$ADDR" -C "$COUNT" -S "$SIZE" --busy-poll)
busy_2n=$(best_us "$BIN/rping" -c -a "$ADDR" -C $((2 * COUNT)) -S "$SIZE" --busy-poll)
busy=$(( (busy_2n - busy_n) / COUNT ))

ib_send_lat -R -d "${FABRIC_DEV:-rxe0}" -s 2 -n 2000 >/dev/null 2>&1 &
srv=$!
sleep 1
typical=$(timeout 120 ib_send_lat -R -d "${FABRIC_DEV:-rxe0}" -s 2 -n 2000 "$ADDR" 2>/dev/null |
          awk '$1 == 2 && NF >= 6 {print $5}')
wait "$srv" 2>/dev/null
floor=$(awk -v t="$typical" 'BEGIN {printf "%.1f", 8 * t}')

echo "rping: -C $COUNT -S $SIZE, whole run per ping: rdma-core ${theirs} us, ours ${ours} us"
echo "rping: ours --busy-poll, steady state per ping: ${busy} us (best of $ROUNDS runs of -C $COUNT: ${busy_n} us, of -C $((2 * COUNT)): ${busy_2n} us)"
echo "rping: floor 8 x ib_send_lat -R t_typical (${typical} us) = ${floor} us"
awk -v o="$ours" -v t="$theirs" -v b="$busy" -v f="$floor" 'BEGIN {
  printf "rping: ours / rdma-core          = %.2f (target <= 0.8)\n", o / t
  printf "rping: ours --busy-poll / floor  = %.2f (target <= 2.0)\n", b / f
}'
