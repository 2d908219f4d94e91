# Bandwidth benchmark, run by bench/run on two guests (bed --hosts 2): the
# RDMA WRITE bandwidth of fabric-sweep --check bw between the two guests
# against perftest's ib_write_bw between the same two guests in the same
# run, at the same write size, for the same time; one direction (A writes
# to B), then both at once. Goal: ours at least 0.9 of ib_write_bw.
# bench-hosts: 2
BIN=$1
BED=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/fabric" && pwd)
SIZE=${BW_BENCH_SIZE:-1048576}
SECONDS_EACH=${BW_BENCH_SECONDS:-3}
ROUNDS=${BW_BENCH_ROUNDS:-3}
printf 'b %s\na %s\n' "$FABRIC_PEER" "$FABRIC_ADDR" >"$FABRIC_OUT/bw-addresses"
# rank 0 (b) serves, rank 1 (a) is the client, which writes in one direction.
SWEEP=(--hosts b,a --address-file "$FABRIC_OUT/bw-addresses" --check bw -S "$SIZE"
       --duration $((SECONDS_EACH * 1000)) --timeout $((SECONDS_EACH * 1000 + 20000)) --retests 0 -j)

# perftest FLAGS...: ib_write_bw's average Gb/s, server on B, client on A;
# with -b each direction's, as perftest sums both.
perftest() {
  "$BED/on-peer" start bwsrv ib_write_bw -d "$FABRIC_DEV" -s "$SIZE" -D "$SECONDS_EACH" -F --report_gbits "$@"
  sleep 2
  local out
  out=$(timeout 120 ib_write_bw -d "$FABRIC_DEV" -s "$SIZE" -D "$SECONDS_EACH" -F --report_gbits "$@" "$FABRIC_PEER" 2>/dev/null)
  "$BED/on-peer" wait bwsrv 60 >/dev/null || true
  echo "$out" | awk -v size="$SIZE" -v both="$*" '$1 == size && NF >= 4 {v = $4} END {if (both ~ /-b/) v /= 2; print v}'
}

# ours FLAGS...: the lower of our measured directions, in Gb/s.
ours() {
  "$BED/on-peer" start bwours "$BIN/fabric-sweep" "${SWEEP[@]}" --rank 0 "$@"
  timeout 120 "$BIN/fabric-sweep" "${SWEEP[@]}" --rank 1 "$@" >"$FABRIC_OUT/bw-ours.json" 2>/dev/null
  "$BED/on-peer" wait bwours 60 >/dev/null || true
  python3 - "$FABRIC_OUT/bw-ours.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["results"][0]["bandwidth"]
print(min(d["gbps"] for d in p.values() if d))
PY
}

# best OF FLAGS...: the best of ROUNDS runs of perftest or ours.
best() {
  local f=$1 b=0 v; shift
  for _ in $(seq "$ROUNDS"); do
    v=$("$f" "$@") || return 1
    b=$(awk -v a="$b" -v c="$v" 'BEGIN {print (c > a ? c : a)}')
  done
  echo "$b"
}

uni_theirs=$(best perftest)
uni_ours=$(best ours --unidirectional)
bi_theirs=$(best perftest -b)
bi_ours=$(best ours)
echo "bandwidth: $SIZE-byte writes for ${SECONDS_EACH} s, best of $ROUNDS runs between two guests"
printf "bandwidth: one direction:  ib_write_bw %.3f Gb/s, fabric-sweep --check bw %.3f Gb/s\n" "$uni_theirs" "$uni_ours"
printf "bandwidth: both at once:   ib_write_bw -b %.3f Gb/s each way, fabric-sweep --check bw %.3f Gb/s (the lower way)\n" "$bi_theirs" "$bi_ours"
awk -v uo="$uni_ours" -v ut="$uni_theirs" -v bo="$bi_ours" -v bt="$bi_theirs" 'BEGIN {
  printf "bandwidth: ours / ib_write_bw, one direction = %.2f (target >= 0.9)\n", (ut > 0 ? uo / ut : 0)
  printf "bandwidth: ours / ib_write_bw -b, each way   = %.2f (target >= 0.9)\n", (bt > 0 ? bo / bt : 0)
}'
