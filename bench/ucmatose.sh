# ucmatose benchmark, run in the guest by bench/run: connections per second
# of connection setup for -c 100 and -c 500, ours / rdma-core's, measured as
# the client's whole run (resolve, connect, one message each way, teardown)
# against a server of the same kind.
BIN=$1
ADDR=$FABRIC_ADDR

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# run_us SERVER_BIN CLIENT_BIN CONNECTIONS: the client's run time in microseconds.
run_us() {
  "$1" -c "$3" -C 1 >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.05; done
  local t0 t1
  t0=$(now_us)
  timeout 300 "$2" -s "$ADDR" -c "$3" -C 1 >/dev/null 2>&1 || echo "bench: $2 -c $3 failed" >&2
  t1=$(now_us)
  wait "$server" 2>/dev/null
  echo $((t1 - t0))
}

for n in 100 500; do
  theirs=$(run_us ucmatose ucmatose "$n")
  ours=$(run_us "$BIN/ucmatose" "$BIN/ucmatose" "$n")
  awk -v n="$n" -v o="$ours" -v t="$theirs" 'BEGIN {
    printf "ucmatose -c %d: rdma-core %.0f conn/s, ours %.0f conn/s, ours / rdma-core = %.2f (target >= 1.5)\n",
           n, n / (t / 1e6), n / (o / 1e6), t / o
  }'
done
