# fabric-sweep benchmark, run by bench/run on four guests (bed --hosts 4)
# under real Slurm: the whole sweep's time divided by the sum of its rounds'
# slowest pair (the floor for rounds in lockstep; goal: at most 1.2), and
# the number of rounds against n - 1.
# bench-hosts: 4
BIN=$1
BED=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/fabric" && pwd)
COUNT=${SWEEP_BENCH_COUNT:-200}
n=$FABRIC_HOSTS
for h in b c d; do "$BED/on-peer" --host "$h" run "$BED/slurm-up" "$n" >/dev/null; done
"$BED/slurm-up" "$n" >/dev/null
export SLURM_CONF=/run/slurm/slurm.conf
for _ in $(seq 60); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && break; sleep 0.5; done
printf 'fabric-%s 10.0.0.%d\n' a 1 b 2 c 3 d 4 >"$FABRIC_OUT/addresses"
out=$(mktemp)
srun -N "$n" --ntasks-per-node=1 --label "$BIN/fabric-sweep" --address-file "$FABRIC_OUT/addresses" \
  -C "$COUNT" --json=lines >"$out" 2>/dev/null
"$BIN/fabric-sweep" report -j "$out" >"$out.report" || true
python3 - "$out.report" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
n = len(s["hosts"])
print("sweep: %d hosts, %d rounds (n-1 = %d), %d of %d pairs ok" % (n, s["rounds"], n - 1, s["passed"], s["pairs"]))
if s["sweep_us"] and s["rounds_slowest_us"]:
    print("sweep: whole %.1f ms, sum of the rounds' slowest pairs %.1f ms, overhead %.2f (goal <= 1.2)"
          % (s["sweep_us"] / 1e3, s["rounds_slowest_us"] / 1e3, s["sweep_us"] / s["rounds_slowest_us"]))
PY
rm -f "$out.report"
rm -f "$out"
