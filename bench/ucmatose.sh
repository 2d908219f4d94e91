# ucmatose benchmark, run in the guest by bench/run: connections per second
# of ours and of rdma-core's ucmatose, each against its own server, for
# -c 100 and -c 500 with one message each way (-C 1). A run's rate is its
# connections divided by the client's whole run time (resolution, connect,
# messages, disconnect, teardown): the only figure rdma-core's tool gives.
BIN=$1
ADDR=$FABRIC_ADDR

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# rate SERVER_BIN CLIENT_BIN CONNECTIONS: prints connections per second.
rate() {
  local srv=$1 cli=$2 c=$3
  "$srv/ucmatose" -c "$c" -C 1 >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.05; done
  local t0 t1
  t0=$(now_us)
  timeout 300 "$cli/ucmatose" -s "$ADDR" -c "$c" -C 1 >/dev/null 2>&1 || { echo "bench: $cli/ucmatose -c $c failed" >&2; kill "$server"; return 1; }
  t1=$(now_us)
  wait "$server" 2>/dev/null
  awk -v c="$c" -v us=$((t1 - t0)) 'BEGIN {printf "%.1f", c * 1e6 / us}'
}

for c in 100 500; do
  theirs=$(rate /usr/bin /usr/bin "$c")
  ours=$(rate "$BIN" "$BIN" "$c")
  echo "ucmatose: -c $c connections/s: rdma-core ${theirs}, ours ${ours}"
  awk -v o="$ours" -v t="$theirs" -v c="$c" 'BEGIN {printf "ucmatose: -c %d ours / rdma-core = %.2f (target >= 1.5)\n", c, o / t}'
done
