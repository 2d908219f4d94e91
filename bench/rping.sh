# rping benchmark, run in the guest by bench/run: time per ping of ours and
# rdma-core's (same -C and -S, each against its own server), and our
# --busy-poll time per ping against the wire floor, 8 x perftest's
# ib_send_lat -R t_typical (a ping is two SEND round trips plus a READ and a
# WRITE: eight one-way trips).
BIN=$1
ADDR=$FABRIC_ADDR
COUNT=${RPING_BENCH_COUNT:-2000}
SIZE=64

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# per_ping_us CLIENT_ARGS...: starts $SERVER, runs the client, prints the
# client's whole run time divided by the ping count, in microseconds.
per_ping_us() {
  $SERVER >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  local t0 t1
  t0=$(now_us)
  timeout 300 "$@" >/dev/null 2>&1 || { echo "bench: $* failed" >&2; kill "$server"; return 1; }
  t1=$(now_us)
  wait "$server" 2>/dev/null
  echo $(( (t1 - t0) / COUNT ))
}

SERVER="rping -s -a $ADDR -S $SIZE"
theirs=$(per_ping_us rping -c -a "$ADDR" -C "$COUNT" -S "$SIZE")
SERVER="$BIN/rping -s -a $ADDR -S $SIZE"
ours=$(per_ping_us "$BIN/rping" -c -a "$ADDR" -C "$COUNT" -S "$SIZE")
SERVER="$BIN/rping -s -a $ADDR -S $SIZE --busy-poll"
busy=$(per_ping_us "$BIN/rping" -c -a "$ADDR" -C "$COUNT" -S "$SIZE" --busy-poll)

ib_send_lat -R -d "${FABRIC_DEV:-rxe0}" -s 2 -n 2000 >/dev/null 2>&1 &
srv=$!
sleep 1
typical=$(timeout 120 ib_send_lat -R -d "${FABRIC_DEV:-rxe0}" -s 2 -n 2000 "$ADDR" 2>/dev/null |
          awk '$1 == 2 && NF >= 6 {print $5}')
wait "$srv" 2>/dev/null
floor=$(awk -v t="$typical" 'BEGIN {printf "%.1f", 8 * t}')

echo "rping: -C $COUNT -S $SIZE, per ping: rdma-core ${theirs} us, ours ${ours} us, ours --busy-poll ${busy} us"
echo "rping: floor 8 x ib_send_lat -R t_typical (${typical} us) = ${floor} us"
awk -v o="$ours" -v t="$theirs" -v b="$busy" -v f="$floor" 'BEGIN {
  printf "rping: ours / rdma-core          = %.2f (target <= 0.8)\n", o / t
  printf "rping: ours --busy-poll / floor  = %.2f (target <= 2.0)\n", b / f
}'
