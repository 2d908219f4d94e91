# rping benchmark, run in the guest by bench/run: time per ping of ours and
# rdma-core's (same -C and -S, each against its own server), and our
# --busy-poll time per ping against the stack's floor by operation: a
# ping's operations as perftest does them in this guest, one after another
# (4 one-way SENDs of ib_send_lat -R, a READ round trip of ib_read_lat -R,
# a one-way WRITE of ib_write_lat -R; the server's READ goes in one post
# with the SEND behind it, its WRITE in one post with its last SEND), and
# beside it 8 one-way SENDs, which leave out that Soft-RoCE's READ costs
# more than two SENDs. The floor's figures are perftest's t_typical,
# the median of its iterations, so the busy-poll figure held to it is our
# typical ping: the median of the client's per-ping times. The steady-state
# mean is shown beside it: the difference between runs of 2 x COUNT and
# COUNT pings (best of ROUNDS each), divided by COUNT, which leaves out
# process start and connection setup but counts every stall of the guest.
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

# The typical ping, as perftest's t_typical is the median of its
# iterations: the median of the client's per-ping times (-j, which times
# each ping; its two clock reads a ping are counted in), the median of
# ROUNDS runs. The mean above counts every stall of the guest, which the
# floor's medians leave out.
typical=()
for _ in $(seq "$ROUNDS"); do
  $SERVER >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  p50=$(timeout 300 "$BIN/rping" -c -a "$ADDR" -C "$COUNT" -S "$SIZE" --busy-poll -j 2>/dev/null |
    python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["summary"]["rtt"]["p50_us"])') ||
    { echo "bench: rping -j failed" >&2; kill "$server"; }
  wait "$server" 2>/dev/null
  typical+=("$p50")
done
busy_typical=$(printf '%s\n' "${typical[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')

# syscalls PINGS: the system calls a ping costs the --busy-poll client and its
# server, counted by strace -c (its own slowness aside: counts, not time),
# the difference of runs of 2 x COUNT and COUNT pings divided by COUNT.
syscalls() {
  strace -f -c -U calls -o "$work/server.calls" "$BIN/rping" -s -a "$ADDR" -S "$SIZE" --busy-poll >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 200); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  timeout 300 strace -f -c -U calls -o "$work/client.calls" "$BIN/rping" -c -a "$ADDR" -C "$1" -S "$SIZE" --busy-poll >/dev/null 2>&1
  wait "$server" 2>/dev/null
  echo "$(awk '$2 == "total" {print $1}' "$work/client.calls") $(awk '$2 == "total" {print $1}' "$work/server.calls")"
}
work=$(mktemp -d)
read -r c1 s1 <<<"$(syscalls "$COUNT")"
read -r c2 s2 <<<"$(syscalls $((2 * COUNT)))"
rm -rf "$work"

# typical_us TOOL SIZE: perftest's t_typical of TOOL -R -s SIZE in this guest.
typical_us() {
  "$1" -R -d "${FABRIC_DEV:-rxe0}" -s "$2" -n 2000 >/dev/null 2>&1 &
  local srv=$!
  sleep 1
  timeout 120 "$1" -R -d "${FABRIC_DEV:-rxe0}" -s "$2" -n 2000 "$ADDR" 2>/dev/null | awk -v s="$2" '$1 == s && NF >= 6 {print $5}'
  wait "$srv" 2>/dev/null
}
send=$(typical_us ib_send_lat 2)
read=$(typical_us ib_read_lat "$SIZE")
write=$(typical_us ib_write_lat "$SIZE")
floor8=$(awk -v s="$send" 'BEGIN {printf "%.1f", 8 * s}')
floor=$(awk -v s="$send" -v r="$read" -v w="$write" 'BEGIN {printf "%.1f", 4 * s + r + w}')

echo "rping: -C $COUNT -S $SIZE, whole run per ping (process start and connection setup included, event mode both): rdma-core ${theirs} us, ours ${ours} us"
echo "rping: ours --busy-poll, steady state per ping: ${busy} us (best of $ROUNDS runs of -C $COUNT: ${busy_n} us, of -C $((2 * COUNT)): ${busy_2n} us)"
echo "rping: ours --busy-poll, typical ping: ${busy_typical} us (median of the client's per-ping times, median of $ROUNDS runs of -C $COUNT: ${typical[*]})"
echo "rping: a ping: the client's SEND; the server's READ of that buffer with its go-ahead SEND in the same post (RC keeps their order; the READ's round trip overlaps the go-ahead and the client's answer); the client's SEND; the server's WRITE and SEND in one post"
echo "rping: floor by operation = a ping's operations as perftest does them here, one after another, busy-polled: 4 SENDs one way (ib_send_lat -R -s 2 t_typical ${send} us each) + a READ's round trip (ib_read_lat -R -s $SIZE t_typical ${read} us) + a WRITE one way (ib_write_lat -R -s $SIZE t_typical ${write} us) = ${floor} us"
echo "rping: (8 one-way SENDs: ${floor8} us)"
awk -v c1="$c1" -v c2="$c2" -v s1="$s1" -v s2="$s2" -v n="$COUNT" 'BEGIN {
  printf "rping: system calls per ping, --busy-poll (strace -c): client %.1f, server %.1f (a post is one: the rxe doorbell)\n",
         (c2 - c1) / n, (s2 - s1) / n }'
awk -v o="$ours" -v t="$theirs" -v b="$busy" -v p="$busy_typical" -v f="$floor" -v f8="$floor8" 'BEGIN {
  printf "rping: ours / rdma-core          = %.2f (target <= 0.5)\n", o / t
  printf "rping: ours --busy-poll / floor by operation = %.2f typical ping, the floor%s measure (target <= 1.2; against 8 one-way SENDs %.2f)\n", p / f, "\047s", p / f8
  printf "rping: steady-state mean / floor by operation = %.2f (against 8 one-way SENDs %.2f)\n", b / f, b / f8
}'
