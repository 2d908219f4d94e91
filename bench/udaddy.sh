# udaddy benchmark, run in the guest by bench/run: datagrams per second,
# ours / rdma-core's, each client against a server of its own kind. A run
# sends -C messages on each of -c connections and gets as many replies; the
# rate counts both directions over the client's whole run, best of three.
BIN=$1
ADDR=$FABRIC_ADDR
CONNS=${UDADDY_BENCH_CONNECTIONS:-4}
COUNT=${UDADDY_BENCH_COUNT:-2000}
SIZE=${UDADDY_BENCH_SIZE:-512}

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# rate SERVER_BIN CLIENT_BIN: messages per second of the best of three runs.
rate() {
  local best=0 i t0 t1 server
  for i in 1 2 3; do
    "$1" -b "$ADDR" -c "$CONNS" -C "$COUNT" -S "$SIZE" >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 200); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
    t0=$(now_us)
    timeout 300 "$2" -s "$ADDR" -c "$CONNS" -C "$COUNT" -S "$SIZE" >/dev/null 2>&1 ||
      { echo "bench: $2 failed" >&2; kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; continue; }
    t1=$(now_us)
    wait "$server" 2>/dev/null
    best=$(awk -v b="$best" -v m=$((2 * CONNS * COUNT)) -v us=$((t1 - t0)) 'BEGIN {r = m * 1e6 / us; print (r > b ? r : b)}')
  done
  echo "$best"
}

theirs=$(rate udaddy udaddy)
ours=$(rate "$BIN/udaddy" "$BIN/udaddy")
printf 'udaddy: -c %s -C %s -S %s, messages/s: rdma-core %.0f, ours %.0f\n' "$CONNS" "$COUNT" "$SIZE" "$theirs" "$ours"
awk -v o="$ours" -v t="$theirs" 'BEGIN {
  if (t > 0) printf "udaddy: ours / rdma-core = %.2f (target >= 1.5)\n", o / t
  else print "udaddy: rdma-core run failed, no ratio"
}'
