#!/usr/bin/env bash
# fabric-sweep report --fabric as a user meets it, on a synthetic fat tree
# (tests/subnet/fabric_inputs: its fabric documents before and after, the
# faulty link's symbol errors risen; bench/sweep-lines: a sweep whose pairs
# across that link are slow). The suspect named in every output; a check
# of the fabric alone; output unchanged without --fabric; and every
# hostile fabric document a one-line usage error that writes no file.
# No RDMA, no simulator.
#
# Usage: tests/cli/fabric.test.sh BIN_DIR
set -u
. "$(dirname "$0")/lib.sh" "$@"
INPUTS=$BIN/../tests/fabric_inputs
# report ARGS...: stdout in $WORK/out, stderr in $WORK/err, status in $rc.
report() {
  rc=0
  (cd "$WORK" && timeout -k 2 60 "$BIN/fabric-sweep" report "$@" >"$WORK/out" 2>"$WORK/err" </dev/null) || rc=$?
}
doc() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$WORK/out')); sys.exit(0 if ($1) else 1)"; }
[ -x "$INPUTS" ] || { echo "FAIL: $INPUTS missing"; exit 1; }

# Two levels, 4 leaves of 4 hosts, 2 spines; leaf02's uplink to spine02 bad.
"$INPUTS" "$WORK" --hosts 16 --leaves 4 --spines 2 --per-leaf 4 --pods 0 --bad leaf02:6 2>"$WORK/inputs.err" ||
  { cat "$WORK/inputs.err"; exit 1; }
"$SRC/bench/sweep-lines" 16 --prefix host --labels none --slow-pairs "$WORK/bad-pairs" -o "$WORK/sweep.jsonl"
B=$WORK/before.json A=$WORK/after.json L=$WORK/sweep.jsonl
first='{(e["description"], e["port"]) for e in d["summary"]["suspects"][0]["ends"]} == {("leaf02", 6), ("spine02", 2)}'

report -j --fabric "$B" --fabric "$A" "$L"
check "--fabric twice: exit 1, the document valid" [ $rc -eq 1 ] && check "  valid against the schema" "$VALIDATE" "$WORK/out"
check "  the faulty uplink first in summary.suspects, its counters and both ends" \
  doc "$first and d['summary']['suspects'][0]['counters'] == {'symbol_errors': 1000} and d['summary']['suspects'][0]['pairs_bad'] > 0"
check "  summary.located: two documents, every host found" \
  doc "d['summary']['located']['documents'] == 2 and d['summary']['located']['hosts_found'] == 16 and d['summary']['located']['hosts_not_found'] == 0"
check "  the verdict names the link" grep -q 'suspect link.* on the fabric, the first ' "$WORK/out"

# The same sweep on one rail, mlx5_0: each host's adapter of the rail is
# the CA "host mlx5_0"; the same pairs located, the same link first.
/usr/bin/python3 - "$L" "$WORK/rails.jsonl" <<'PY'
import json, sys
with open(sys.argv[1]) as src, open(sys.argv[2], "w") as out:
    for line in src:
        d = json.loads(line)
        pairs = [d["result"]] if d.get("event") == "result" else [r for r in d.get("results", []) if r.get("kind") == "pair"]
        for p in pairs:
            p["server_rail"] = p["client_rail"] = "mlx5_0"
        out.write(json.dumps(d) + "\n")
PY
report -j --fabric "$B" --fabric "$A" "$WORK/rails.jsonl"
check "on a rail: exit 1" [ $rc -eq 1 ]
check "  every host's rail adapter found, every pair located, the faulty uplink first" \
  doc "$first and d['summary']['located']['hosts_found'] == 16 and d['summary']['located']['pairs_not_located'] == 0 and d['summary']['located']['pairs_located'] == 120 and d['results'][0]['a_rail'] == 'mlx5_0'"

report -j "$L"
check "without --fabric: suspects and located null" doc "d['summary']['suspects'] is None and d['summary']['located'] is None"
report "$L"
cp "$WORK/out" "$WORK/plain.txt"
check "without --fabric: the text says nothing of the fabric" bash -c "! grep -qi 'suspect\|fabric:' '$WORK/plain.txt'"

report --fabric "$B" --fabric "$A" --html page.html --csv pairs.csv --suspects-csv links.csv --prometheus sweep.prom "$L"
check "text: a section naming the suspect, its reason below" \
  grep -qE '^  1\. (spine02 port 2 - leaf02 port 6|leaf02 port 6 - spine02 port 2): ' "$WORK/out"
check "text: the rest as without --fabric" bash -c "diff <(grep -v '^fabric:\|^suspect links\|^ \{1,3\}[0-9]*\. \|^     [^ ]\|^note: ' '$WORK/out') <(grep -v '^note: ' '$WORK/plain.txt') >/dev/null"
check "page: the suspect links, the view by switch, the bad pairs' link" \
  bash -c "grep -q '<h2 id=\"suspects\">Suspect links: ' '$WORK/page.html' && grep -q 'id=\"by-switch\"' '$WORK/page.html' && grep -q 'suspect link #1: ' '$WORK/page.html'"
check "csv: a suspect_link column" bash -c "head -1 '$WORK/pairs.csv' | grep -q ',error,a_rail,b_rail,suspect_link'"
check "--suspects-csv: a header and a row a suspect" bash -c "sed -n 2p '$WORK/links.csv' | grep -q '^1,'"
check "prometheus: gauges per suspect link" grep -q '^fabric_sweep_suspect_link_score{' "$WORK/sweep.prom"

# A check of the fabric alone: no pair lines.
report -j --fabric "$B" --fabric "$A"
check "the fabric alone: exit 1, the link whose counters rose" [ $rc -eq 1 ]
check "  valid against the schema" "$VALIDATE" "$WORK/out"
check "  that link first" doc "$first"
report --fabric "$B" --fabric "$B"
check "the fabric alone, nothing rose: exit 0, says so" bash -c "[ $rc -eq 0 ] && grep -q 'a check of the fabric alone' '$WORK/out' && grep -q 'suspect links: none' '$WORK/out'"

# Usage errors: a clear line, exit 2, and no output file begun.
hostile() {
  local name=$1 want=$2; shift 2
  rm -f "$WORK/h.html" "$WORK/h.csv"
  report --html h.html --suspects-csv h.csv "$@" "$L"
  if [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "$want" "$WORK/err" && [ ! -e "$WORK/h.html" ] && [ ! -e "$WORK/h.csv" ]; then
    pass "$name: exit 2, one line, no file written"
  else
    fail "$name (exit $rc)"; head -c 600 "$WORK/err"
  fi
}
hostile "--fabric three times" "given 3 times" --fabric "$B" --fabric "$A" --fabric "$A"
report --suspects-csv x.csv "$L"
check "--suspects-csv without --fabric: exit 2" [ $rc -eq 2 ]
hostile "a document that is not there" "nothere.json" --fabric "$WORK/nothere.json"
head -c 3000 "$B" >"$WORK/truncated.json"
hostile "a truncated document" "truncated.json: " --fabric "$WORK/truncated.json"
printf '\xff\xfe{"schema":' >"$WORK/latin.json"
hostile "a document that is not UTF-8" "latin.json: " --fabric "$WORK/latin.json"
/usr/bin/python3 - "$B" "$WORK" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
other = dict(d, schema="fabric-toolkit/fabric-sweep/2")
json.dump(other, open(sys.argv[2] + "/other.json", "w"))
big = json.loads(json.dumps(d))
big["results"][0]["lft"] = [70000] * 4
json.dump(big, open(sys.argv[2] + "/range.json", "w"))
guid = json.loads(json.dumps(d))
guid["results"][0]["ports"][0]["lid"] = 1 << 40
json.dump(guid, open(sys.argv[2] + "/lid.json", "w"))
PY
hostile "a document of another schema" "other.json: " --fabric "$WORK/other.json"
hostile "an LFT entry out of range" "range.json: " --fabric "$WORK/range.json"
hostile "a LID out of range" "lid.json: " --fabric "$WORK/lid.json"
head -c $((129 << 20)) /dev/zero | tr '\0' ' ' >"$WORK/huge.json"
hostile "a document of more than 128 MiB" "more than 128 MiB" --fabric "$WORK/huge.json"
rm -f "$WORK/huge.json"

check "completions: --fabric and --suspects-csv, files" \
  bash -c "'$BIN/fabric-sweep' --print-completion bash | grep -q -- '--fabric' && '$BIN/fabric-sweep' --print-completion bash | grep -q -- '--suspects-csv'"

echo "fabric.test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
