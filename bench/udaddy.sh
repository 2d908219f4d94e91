# udaddy benchmark, run in the guest by bench/run: datagrams per second,
# ours / rdma-core's, each client against a server of its own kind. A run
# sends -C messages on each of -c connections and gets as many replies; the
# rate counts both directions over the client's whole run (process start,
# connection setup, both transfers, teardown).
BIN=$1
ADDR=$FABRIC_ADDR
CONNS=${UDADDY_BENCH_CONNECTIONS:-4}
COUNT=${UDADDY_BENCH_COUNT:-2000}
SIZE=${UDADDY_BENCH_SIZE:-512}
ROUNDS=${UDADDY_BENCH_ROUNDS:-5}

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# rate SERVER CLIENT: messages per second of one run; fails when the client does.
rate() {
  local t0 t1 server rc=0
  "$1" -b "$ADDR" -c "$CONNS" -C "$COUNT" -S "$SIZE" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 200); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  t0=$(now_us)
  timeout 300 "$2" -s "$ADDR" -c "$CONNS" -C "$COUNT" -S "$SIZE" >/dev/null 2>&1 || rc=$?
  t1=$(now_us)
  if [ "$rc" != 0 ]; then
    echo "bench: $2 failed ($rc)" >&2
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    return 1
  fi
  wait "$server" 2>/dev/null
  awk -v m=$((2 * CONNS * COUNT)) -v us=$((t1 - t0)) 'BEGIN {printf "%.0f", m * 1e6 / us}'
}

# Runs of the two alternate (which goes first changes every round) and the
# figure is the median of the rounds' ratios: the guest's speed drifts over
# a run by more than the difference being measured.
ratios=()
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    theirs=$(rate udaddy udaddy) && ours=$(rate "$BIN/udaddy" "$BIN/udaddy") || continue
  else
    ours=$(rate "$BIN/udaddy" "$BIN/udaddy") && theirs=$(rate udaddy udaddy) || continue
  fi
  echo "udaddy: -c $CONNS -C $COUNT -S $SIZE round $r, messages/s: rdma-core $theirs, ours $ours"
  ratios+=("$(awk -v o="$ours" -v t="$theirs" 'BEGIN {printf "%.2f", o / t}')")
done
if [ ${#ratios[@]} -eq 0 ]; then
  echo "udaddy: no round completed, no ratio"
  exit 1
fi
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR] = $1}
  END {printf "udaddy: ours / rdma-core = %.2f (median of %d rounds, %.2f..%.2f; target >= 1.5)\n",
              a[int((NR + 1) / 2)], NR, a[1], a[NR]}'
