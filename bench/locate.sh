#!/usr/bin/env bash
# The report's locating at scale, on the host (no guest, no simulator): a
# synthetic fabric document of a three-level fat tree of n hosts, read back,
# and every pair located (bench/locate_bench.cpp); each stage's time and the
# peak RSS.
# Usage: bench/locate.sh BIN_DIR [N...]     (default N: 500 2000)
# bench-hosts: 0
set -euo pipefail
BIN=$1
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500 2000)
for n in "${sizes[@]}"; do
  "$BIN/../tests/locate_bench" "$n"
done
