# udaddy benchmark, run in the guest by bench/run: datagrams per second,
# ours / rdma-core's, each client against a server of its own kind. A run
# sends -C messages on each of -c connections and gets as many replies; the
# rate counts both directions over the client's whole run (process start,
# connection setup, both transfers, teardown); what that run is made of is
# printed after the figure.
BIN=$1
ADDR=$FABRIC_ADDR
CONNS=${UDADDY_BENCH_CONNECTIONS:-4}
COUNT=${UDADDY_BENCH_COUNT:-2000}
SIZE=${UDADDY_BENCH_SIZE:-512}
ROUNDS=${UDADDY_BENCH_ROUNDS:-5}

now_us() { echo $(( $(date +%s%N) / 1000 )); }

# run_us SERVER CLIENT COUNT: the client's whole run in microseconds, with
# -C COUNT; fails when the client does.
run_us() {
  local t0 t1 server rc=0
  "$1" -b "$ADDR" -c "$CONNS" -C "$3" -S "$SIZE" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 200); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.05; done
  t0=$(now_us)
  timeout 300 "$2" -s "$ADDR" -c "$CONNS" -C "$3" -S "$SIZE" >/dev/null 2>&1 || rc=$?
  t1=$(now_us)
  if [ "$rc" != 0 ]; then
    echo "bench: $2 failed ($rc)" >&2
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    return 1
  fi
  wait "$server" 2>/dev/null
  echo $((t1 - t0))
}

# round SERVER CLIENT: "messages/s whole-run-us one-message-run-us": the
# rate of a -C COUNT run, and both runs' times. A -C 1 run is what a run
# costs besides its messages: process start (under emulation most of it:
# loading libibverbs and its providers), the connections' setup, teardown.
round() {
  local whole one
  whole=$(run_us "$1" "$2" "$COUNT") && one=$(run_us "$1" "$2" 1) || return 1
  awk -v m=$((2 * CONNS * COUNT)) -v us="$whole" -v one="$one" 'BEGIN {printf "%.0f %d %d\n", m * 1e6 / us, us, one}'
}

# Runs of the two alternate (which goes first changes every round) and the
# figure is the median of the rounds' ratios: the guest's speed drifts over
# a run by more than the difference being measured.
ratios=() parts=()
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    read -r theirs theirs_us theirs_one < <(round udaddy udaddy) &&
      read -r ours ours_us ours_one < <(round "$BIN/udaddy" "$BIN/udaddy") || continue
  else
    read -r ours ours_us ours_one < <(round "$BIN/udaddy" "$BIN/udaddy") &&
      read -r theirs theirs_us theirs_one < <(round udaddy udaddy) || continue
  fi
  echo "udaddy: -c $CONNS -C $COUNT -S $SIZE round $r, messages/s: rdma-core $theirs, ours $ours" \
       "(a -C 1 run, ms: rdma-core $((theirs_one / 1000)), ours $((ours_one / 1000)))"
  ratios+=("$(awk -v o="$ours" -v t="$theirs" 'BEGIN {printf "%.2f", o / t}')")
  parts+=("$theirs_one $ours_one $(awk -v t="$theirs_us" -v to="$theirs_one" -v o="$ours_us" -v oo="$ours_one" \
            'BEGIN {if (o > oo && t > to) printf "%.2f", (t - to) / (o - oo); else print "none"}')")
done
if [ ${#ratios[@]} -eq 0 ]; then
  echo "udaddy: no round completed, no ratio"
  exit 1
fi
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR] = $1}
  END {printf "udaddy: ours / rdma-core = %.2f (median of %d rounds, %.2f..%.2f; target >= 1.5)\n",
              a[int((NR + 1) / 2)], NR, a[1], a[NR]}'
# What the figure is made of: the part of a run both tools pay besides
# their messages (a -C 1 run), and the messages alone (a -C COUNT run less
# a -C 1 run): the longer the former, the nearer the whole-run figure is to 1.
printf '%s\n' "${parts[@]}" | awk '
  function median(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) {t = v[i]; v[i] = v[j]; v[j] = t}
    return v[int((n + 1) / 2)]
  }
  {theirs[NR] = $1 / 1000; ours[NR] = $2 / 1000; if ($3 != "none") msg[++m] = $3}
  END {
    printf "udaddy: a -C 1 run (process start, setup, teardown), median ms: rdma-core %.0f, ours %.0f\n",
           median(theirs, NR), median(ours, NR)
    if (m) printf "udaddy: the messages alone (a -C %d run less a -C 1 run): ours / rdma-core = %.2f (median of %d rounds)\n",
                  '"$COUNT"', median(msg, m), m
  }'
