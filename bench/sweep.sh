# fabric-sweep benchmark, run by bench/run on four guests (bed --hosts 4)
# under real Slurm: the whole sweep's time divided by the sum of its rounds'
# slowest pair (the floor for rounds in lockstep; goal: at most 1.2), and
# the number of rounds against n - 1.
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
python3 - "$out" "$n" <<'PY'
import json, sys
rounds, whole = {}, 0.0
for line in open(sys.argv[1]):
    j = json.loads(line[line.index("{"):])
    if j.get("event") == "pair":
        p = j["pair"]
        rounds[p["round"]] = max(rounds.get(p["round"], 0.0), p["elapsed_us"])
    elif "summary" in j and j["summary"].get("elapsed_us"):
        whole = max(whole, j["summary"]["elapsed_us"])
n = int(sys.argv[2])
floor = sum(rounds.values())
print(f"sweep: {n} hosts, {len(rounds)} rounds (n-1 = {n - 1})")
print(f"sweep: whole {whole / 1e3:.1f} ms, sum of rounds' slowest pair {floor / 1e3:.1f} ms, "
      f"overhead {whole / floor:.2f} (goal <= 1.2)")
PY
rm -f "$out"
