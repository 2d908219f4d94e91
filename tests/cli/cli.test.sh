#!/usr/bin/env bash
# Host-level checks of every tool's command line and JSON contract; no RDMA
# device needed: --help, --version, usage errors (a one-line error and exit
# 2, or a valid JSON document with -j in any spelling), runs that fail for
# want of a device or service (still one valid document, whatever bytes
# the arguments carry), the man pages against the schemas.
#
# Usage: tests/cli/cli.test.sh BIN_DIR
set -u
. "$(dirname "$0")/lib.sh" "$@"
TOOLS=(rping udaddy mckey ucmatose ib_acme fabric-sweep)

# run TOOL ARGS...: stdout in $WORK/out, stderr in $WORK/err, status in $rc.
run() {
  rc=0
  timeout -k 2 30 "$BIN/$1" "${@:2}" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
}
# interrupted SIGNAL CMD...: CMD in the background, sent SIGNAL a second
# later; its status in $rc, the milliseconds it took to end in $took. The
# process $feeder (what writes its input) is ended after it.
interrupted() {
  local signal=$1 pid t0
  shift
  "$@" >/dev/null 2>&1 &
  pid=$!
  sleep 1
  t0=$(date +%s%N)
  kill "-$signal" "$pid"
  rc=0
  wait "$pid" || rc=$?
  took=$((($(date +%s%N) - t0) / 1000000))
  kill "$feeder" 2>/dev/null
  wait "$feeder" 2>/dev/null
}
valid_document() { "$VALIDATE" "$WORK/out" 2>&1 | head -n 20 >&2; "$VALIDATE" "$WORK/out" 2>/dev/null; }
valid_lines() { "$VALIDATE" --lines "$WORK/out" 2>/dev/null; }
doc() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$WORK/out')); sys.exit(0 if ($1) else 1)"; }
one_line() { [ "$(wc -l <"$WORK/out")" -eq 1 ]; }

# Runs that go as far as they can on a host without RDMA: each tool's
# most common command line.
declare -A attempt=(
  [rping]="-c -a 127.0.0.1 -C 1 --timeout 2000"
  [udaddy]="-s 127.0.0.1 --timeout 2000"
  [mckey]="-m 239.1.1.1 --timeout 2000"
  [ucmatose]="-s 127.0.0.1 --timeout 2000"
  [ib_acme]="-d 127.0.0.1 -S /nonexistent/ibacm.sock --timeout 2000"
  # A rank waits up to five timeouts for rank 0: a short one.
  [fabric-sweep]="--hosts a,b --rank 1 --address 127.0.0.1 --timeout 400"
)
# A flag each tool has that takes no value, for -j clusters.
declare -A flag=([rping]=V [udaddy]= [mckey]=s [ucmatose]=m [ib_acme]=c [fabric-sweep]=)

for t in "${TOOLS[@]}"; do
  run "$t" --help
  check "$t --help: exit 0, lists --json=lines" test "$rc" -eq 0 -a -n "$(grep -e '--json' "$WORK/out")"
  run "$t" --version
  check "$t --version names the toolkit" grep -q "^$t (fabric-toolkit) " "$WORK/out"

  run "$t" --no-such-option
  check "$t bad option: exit 2" test "$rc" -eq 2
  check "$t bad option: nothing on stdout" test ! -s "$WORK/out"
  check "$t bad option: one error line that says where to look" \
    test "$(grep -c "^$t: error: .* (see $t --help)$" "$WORK/err")" -eq 1 -a "$(wc -l <"$WORK/err")" -eq 1

  # Counts are decimal, as rdma-core reads them (atoi: 010 is ten, not octal
  # eight); what is not a whole number is a usage error that says so. An
  # option given twice takes its last value, as getopt's loop does (rping's
  # attempt has -C 1 already).
  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]} -C 010 -j
  check "$t -C 010: a count of ten" doc 'd["options"]["count"] == 10'
  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]} -C 0x10
  check "$t -C 0x10: exit 2, one line naming the value" \
    test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep -F -e "--count: '0x10' is not a whole number" "$WORK/err")"

  # A 100,000-digit count: the error quotes it cut to its head and tail.
  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]} -C "$(head -c 100000 /dev/zero | tr '\0' 7)"
  check "$t -C of 100,000 digits: exit 2, one short line that says what it left out" \
    test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a "$(wc -c <"$WORK/err")" -le 1200 -a -n "$(grep -F 'bytes left out] ' "$WORK/err")"

  spellings=("-j" "--json" "--json=document" "--json=true")
  [ -n "${flag[$t]}" ] && spellings+=("-j${flag[$t]}" "-${flag[$t]}j")
  for spelling in "${spellings[@]}"; do
    run "$t" $spelling --no-such-option
    check "$t $spelling, bad option: exit 2 and a valid document" valid_document
    check "$t $spelling, bad option: the document says usage" \
      doc 'd["exit_code"] == 2 and d["ok"] is False and "no-such-option" in d["error"] and d["tool"] == "'"$t"'"'
    check "$t $spelling, bad option: stderr stays quiet" test ! -s "$WORK/err"
  done
  run "$t" --json=lines --no-such-option
  check "$t --json=lines, bad option: one line, the document" valid_lines
  check "$t --json=lines, bad option: exactly one line" one_line
  run "$t" --json=bogus
  check "$t --json=bogus: a usage error, still as JSON" doc 'd["exit_code"] == 2 and "bogus" in d["error"]'

  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]} -j
  check "$t without RDMA: fails (exit $rc), not a crash" test "$rc" -ne 0 -a "$rc" -lt 100
  check "$t without RDMA: a valid document with the options in force" valid_document
  check "$t without RDMA: the document's error is the reason" doc 'd["error"] and d["exit_code"] == '"$rc"
  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]}
  check "$t without RDMA: the error line on stderr" grep -q "^$t: error: " "$WORK/err"
  # shellcheck disable=SC2086
  run "$t" ${attempt[$t]} --json=lines
  check "$t without RDMA, --json=lines: valid lines, the document last" valid_lines
done

# What --timeout bounds is said once: each page of the five tools takes its
# words from man/timeout.roff when installed, and each --help says the same;
# so do the exit statuses every tool shares (man/exit-common.roff).
for t in rping udaddy mckey ucmatose ib_acme fabric-sweep; do
  check "$t.1: --timeout in the words of man/timeout.roff" grep -qx '@TIMEOUT_PARAGRAPH@' "$SRC/man/$t.1"
  check "$t.1: the shared exit statuses in the words of man/exit-common.roff" \
    grep -qx '@EXIT_STATUS_COMMON@' "$SRC/man/$t.1"
  run "$t" --help
  check "$t --help: --timeout's one meaning" grep -q -e 'Longest any one wait may take' "$WORK/out"
done

# A host without any RDMA device: the device's lack, not the address's.
if [ ! -d /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  run rping -c -a 127.0.0.1 -C 1
  check "rping on a host without RDMA devices: exit 3 (no_device)" test "$rc" -eq 3
fi

# A cluster whose second letter is no option: still a usage error in JSON.
run udaddy -jV
check "udaddy -jV: a usage error as a valid document" valid_document
check "udaddy -jV: exit 2, nothing else printed" test "$rc" -eq 2 -a ! -s "$WORK/err"

# A usage error found after parsing prints no test lines first.
run udaddy -s 10.0.0.1 -f mac
check "udaddy -f mac: exit 2, nothing on stdout" test "$rc" -eq 2 -a ! -s "$WORK/out"
# Buffers beyond the documented limit: a usage error, not a huge allocation.
run udaddy -s 10.0.0.1 -c 65536 -S 1048576
check "udaddy -c 65536 -S 1048576: a usage error naming the limit" \
  test "$rc" -eq 2 -a ! -s "$WORK/out" -a -n "$(grep 'limit of 1024 MiB' "$WORK/err")"
run mckey -m 239.1.1.1 -c 1024 -S 1048576 -j
check "mckey -c 1024 -S 1048576 -j: a usage error document" doc 'd["exit_code"] == 2 and "limit" in d["error"]'

# Bytes that are not UTF-8 in an argument that reaches the document.
run rping -c -a $'\xff\xfe-host' -j --timeout 1000
check "rping: a non-UTF-8 address still gives a valid document" valid_document
check "rping: the stray bytes are replaced, not dropped" doc '"\ufffd" in d["error"] or "\ufffd" in d["options"]["addr"]'
run ib_acme -d $'node\xff' -S /nonexistent/ibacm.sock -j --timeout 1000
check "ib_acme: a non-UTF-8 destination still gives a valid document" valid_document

# Input quoted in a message is escaped (fabric::printable): a terminal
# escape in an option, a file name or a host name reaches stderr and
# stdout as text (\x1b), never as the byte, and the JSON error says the
# same. raw_free: nothing on stdout or stderr but printable ASCII, tabs and
# newlines. (Host names that udaddy and mckey look up are checked in the
# fabric tests: here they stop at the missing device first.)
raw_free() {
  local f
  for f in "$WORK/out" "$WORK/err"; do [ "$(LC_ALL=C tr -d '\11\12\40-\176' <"$f" | wc -c)" -eq 0 ] || return 1; done
}
E=$'\e[2J'
T=$'\e]0;pwned\a'   # a title change: host names with [ are ranges to ib_acme
mkdir -m 700 "$WORK/cfg"
ln -s /dev/null "$WORK/cfg/ibacm${E}.cfg"   # a file -O must refuse to replace
# NAME|ARGS (split on spaces); a NAME ending in "(warning)" fails for
# another reason than the input, which only a warning quotes; one ending in
# "(json)" asks for JSON output itself.
hostile=(
  "ib_acme bad range|ib_acme -f n -d evil${E}name"
  "ib_acme bad source range|ib_acme -s a[${E}] -d 1"
  "ib_acme unknown --service-user|ib_acme -d 1 --service-user u${E}"
  "ib_acme -O into a missing -D|ib_acme -O -D $WORK/no/such${E}dir"
  "ib_acme -O onto a symbolic link|ib_acme -O ibacm${E}.cfg -D $WORK/cfg"
  "ib_acme unreachable service|ib_acme -d 1 -S /nonexistent/s${T}.sock"
  "ib_acme service host name|ib_acme -d 1 -S h${T}.invalid"
  "udaddy -f|udaddy -s 10.0.0.1 -f m${E}ac"
  "udaddy -P|udaddy -P u${E}"
  "udaddy -p|udaddy -p 0x${E}"
  "udaddy -C, not a number|udaddy -C 1${E}"
  "udaddy -t|udaddy -s 10.0.0.1 -t 999${E}"
  "udaddy -t, not a number (warning)|udaddy -s 10.0.0.1 -t x${E} --timeout 1000"
  "mckey -p|mckey -m 239.1.1.1 -p ${E}"
  "rping --retry|rping -c -a 10.0.0.1 --retry r${E}"
  "--json value (json)|rping --json=d${E}"
  "fabric-sweep --hosts|fabric-sweep --hosts n[1-${E}] --rank 0"
  "unknown option|udaddy --no-such${E}"
)
for entry in "${hostile[@]}"; do
  name=${entry%%|*}
  IFS=' ' read -r -a argv <<<"${entry#*|}"
  run "${argv[@]}"
  check "escaped: $name (exit $rc): no raw bytes on stdout or stderr" raw_free
  [[ $name == *"(json)" ]] || check "escaped: $name: stderr quotes it as \\x1b" grep -qF '\x1b' "$WORK/err"
  [[ $name == *"(warning)" ]] && continue
  run "${argv[@]}" -j
  check "escaped: $name, -j: the JSON error quotes it the same" doc '"\\x1b" in d["error"]'
done

# fabric-sweep report's HTML page renders: the page parses, its heat map
# is well-formed SVG with a cell for each ordered pair of hosts, a hostile
# host name is text (no markup of its own), and nothing is fetched.
/usr/bin/python3 - "$WORK/sweep.jsonl" <<'PY'
import json, sys
hosts = ["n1", "n2", "<script>alert(1)</script>", "n4"]
def pair(s, c, r, ok, p50):
    p = {"kind": "pair", "check": "ping", "ok": ok, "error": None if ok else "no answer in time", "sweep": 1,
         "round": r, "retest": False, "server": s, "client": c, "side": "client", "elapsed_us": 1000.0}
    if ok:
        p["latency"] = {"count": 10, "min_us": p50, "p50_us": p50, "p99_us": p50, "max_us": p50}
    return {"tool": "fabric-sweep", "event": "result", "result": p}
lines = [{"tool": "fabric-sweep", "event": "started", "started": {"rank": 0, "host": "n1", "hosts": hosts, "rounds": 3}},
         pair("n1", "n2", 1, True, 20), pair(hosts[2], "n4", 1, True, 21), pair("n1", hosts[2], 2, True, 19),
         pair("n2", "n4", 2, False, 0), pair("n1", "n4", 3, True, 22), pair("n2", hosts[2], 3, True, 200)]
with open(sys.argv[1], "w") as f:
    for l in lines:
        f.write("0: " + json.dumps(l) + "\n")
PY
mkdir -m 700 "$WORK/page"
run fabric-sweep report --html "$WORK/page/sweep.html" "$WORK/sweep.jsonl"
check "fabric-sweep report --html: exit 1 (a failed and a slow pair), the page written" test "$rc" -eq 1 -a -s "$WORK/page/sweep.html"
check "fabric-sweep report --html: the page renders, its heat map whole" /usr/bin/python3 - "$WORK/page/sweep.html" <<'PY'
import html.parser, re, sys, xml.etree.ElementTree as ET
page = open(sys.argv[1], encoding="utf-8").read()
tags = []
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        tags.append(tag)
        for _, v in attrs:
            assert not (v or "").startswith(("http:", "https:", "//")) or v == "http://www.w3.org/2000/svg", v
P().feed(page)
assert tags[:2] == ["html", "head"] and "svg" in tags and "script" not in tags, tags
svg = ET.fromstring(re.search(r"<svg.*?</svg>", page, re.S).group(0))
ns = "{http://www.w3.org/2000/svg}"
cells = [r for r in svg.iter(ns + "rect")]
assert len(cells) == 4 * 3, len(cells)
titles = [t.text for t in svg.iter(ns + "title")]
assert sum("failed" in t for t in titles) == 2 and sum("slow" in t for t in titles) == 2, titles
assert any("<script>alert(1)</script>" in t for t in titles), titles
PY

# fabric-sweep report's command line: inputs that cannot be read, numbers
# that are not finite, options of another mode, each a usage error (2) on
# one line; the files it writes; Ctrl-C while it reads.
LINES=$SRC/bench/sweep-lines
mkdir -m 700 "$WORK/out-dir"
run fabric-sweep report "$WORK/out-dir"
check "fabric-sweep report DIRECTORY: exit 2, one error line" \
  test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep "a directory" "$WORK/err")"
run fabric-sweep report "$WORK/no-such-file"
check "fabric-sweep report MISSING: exit 2, one error line" \
  test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep 'cannot read it' "$WORK/err")"
# A subcommand's bad option points to that subcommand's own --help.
for sub in report health; do
  run fabric-sweep $sub --no-such-option
  check "fabric-sweep $sub bad option: exit 2, one line pointing to its own --help" \
    test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep -F "(see fabric-sweep $sub --help)" "$WORK/err")"
done
# An empty value never takes the next argument as its own (the input
# written over as the CSV), and an empty argument is no silent no-op.
cp "$WORK/sweep.jsonl" "$WORK/keep.jsonl"
for flag in --csv= --html= --prometheus= --outliers=; do
  run fabric-sweep report "$flag" "$WORK/keep.jsonl"
  check "fabric-sweep report $flag FILE: a usage error (2), the file untouched" \
    test "$rc" -eq 2 -a -n "$(grep -e "${flag%=}: the value after '=' is empty" "$WORK/err")" \
    -a -n "$(cmp "$WORK/keep.jsonl" "$WORK/sweep.jsonl" && echo same)"
done
run fabric-sweep report --html "" "$WORK/sweep.jsonl"
check "fabric-sweep report --html '': a usage error (2)" test "$rc" -eq 2 -a -n "$(grep -e '--html: an empty value' "$WORK/err")"
# A standard output that fails is said, on stderr, with a failing status.
for mode in "" -j --json=lines; do
  rc=0
  # shellcheck disable=SC2086
  "$BIN/fabric-sweep" report $mode "$WORK/sweep.jsonl" >/dev/full 2>"$WORK/err" || rc=$?
  check "fabric-sweep report $mode >/dev/full: exit 8 and one error line" \
    test "$rc" -eq 8 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep 'No space left' "$WORK/err")"
done
for bad in "--outlier-factor nan report" "report --outlier-factor inf" "report --bw-fraction nan" "--expect-gbps -inf report"; do
  # shellcheck disable=SC2086
  run fabric-sweep $bad "$WORK/sweep.jsonl"
  check "fabric-sweep $bad: a usage error (2)" test "$rc" -eq 2
done
# A hostile --rails (bytes that are not UTF-8, a thousand rails, an empty
# item, a mistyped template): one error line, the usage status, before
# any device or peer is touched; the completion offers auto.
thousand=$(printf '{host}-ib%d,' $(seq 1000)); thousand=${thousand%,}
declare -A hostile_rails=([not UTF-8]=$'mlx5_0,\xff\xfe' [1000 rails]="$thousand" [an empty item]="mlx5_0,,mlx5_1"
  [a mistyped template]="{hots}-ib0" [a template and a device]="{host}-ib0,node-ib1")
for what in "${!hostile_rails[@]}"; do
  run fabric-sweep --hosts a,b --rank 0 --rails "${hostile_rails[$what]}"
  check "fabric-sweep --rails, $what: a usage error (2), one line naming --rails" \
    test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep -e '--rails: ' "$WORK/err")"
done
run fabric-sweep --print-completion bash
check "fabric-sweep's bash completion: --rails offers auto, --check offers intra" \
  /usr/bin/python3 -c 'import re, sys; t = open(sys.argv[1]).read(); assert re.search(r"--rails\)\n[^;]*auto", t) and re.search(r"--check\)\n[^;]*intra", t), t' "$WORK/out"
# The report judges as the sweep did: a bw sweep run with --bw-fraction 0.2
# (its ranks' documents say so) passes as rank 0 passed it; the option
# given to the report, before or after "report", judges otherwise.
/usr/bin/python3 - "$WORK/bw.jsonl" <<'PY'
import json, sys
hosts = ["a", "b", "c", "d"]
def pair(s, c, gbps):
    d = {"bytes": int(gbps * 1e9 / 8), "elapsed_us": 1e6, "gbps": gbps}
    p = {"kind": "pair", "check": "bw", "ok": True, "error": None, "sweep": 1, "round": 1, "retest": False,
         "server": s, "client": c, "side": "client", "elapsed_us": 1e6, "latency": None,
         "bandwidth": {"server_to_client": d, "client_to_server": d}}
    return {"tool": "fabric-sweep", "event": "result", "result": p}
lines = [pair("a", "b", 95), pair("a", "c", 96), pair("a", "d", 24), pair("b", "c", 95), pair("b", "d", 24), pair("c", "d", 24)]
lines += [{"tool": "fabric-sweep", "role": "rank", "host": h, "ok": True, "error": None, "exit_code": 0,
           "options": {"outlier_factor": 2.5, "bw_fraction": 0.2, "expect_gbps": None}, "results": []} for h in hosts]
with open(sys.argv[1], "w") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")
PY
run fabric-sweep report "$WORK/bw.jsonl"
check "fabric-sweep report: a bw sweep judged by its own --bw-fraction 0.2 passes, and says so" \
  test "$rc" -eq 0 -a -n "$(grep "note: judged by the sweep's own --bw-fraction 0.2;" "$WORK/out")"
run fabric-sweep report -j "$WORK/bw.jsonl"
check "fabric-sweep report -j: the options it judged by" doc 'd["options"]["bw_fraction"] == 0.2 and d["summary"]["slow"] == 0'
for given in "report --bw-fraction 0.93" "--bw-fraction 0.93 report"; do
  # shellcheck disable=SC2086
  run fabric-sweep $given "$WORK/bw.jsonl"
  check "fabric-sweep $given: the report's own fraction, d's three pairs slow (1)" \
    test "$rc" -eq 1 -a -n "$(grep 'pairs: 3 ok, 3 slow' "$WORK/out")"
done
for bad in "report --hosts a,b" "--rank 1 report" "report --retests 2" "health --hosts a,b" "health --retests 2" \
  "health --repeat 3" "health --check ud" "health --group 239.1.1.1" "health --rank 0"; do
  # shellcheck disable=SC2086
  run fabric-sweep $bad
  opt=$(sed 's/.*\(--[a-z-]*\).*/\1/' <<<"$bad")
  check "fabric-sweep $bad: a usage error naming $opt" test "$rc" -eq 2 -a -n "$(grep -e "$opt: not an option" "$WORK/err")"
done
# fabric-sweep health's words: width, speed and --expect-pcie in any case,
# --device a list (comma-separated, repeated, each device once), each bad
# value a one-line usage error; on a host without RDMA a chosen device that
# is not there is named (3), in a valid document.
run fabric-sweep health --expect-width 4x --expect-speed edr --expect-pcie X16Gen4 --device mlx5_0,mlx5_1 --device mlx5_0 -j
check "fabric-sweep health: 4x, edr and X16Gen4 read in any case; the devices a list" doc \
  'd["options"]["expect_width"] == "4X" and d["options"]["expect_speed"] == "EDR" and d["options"]["expect_pcie"] == "x16gen4" and d["options"]["device"] == "mlx5_0,mlx5_1"'
check "fabric-sweep health --device of devices not here: 3, each named, a valid document" \
  test "$rc" -eq 3 -a -n "$(doc 'd["error"] == "no port of mlx5_0, mlx5_1"' && valid_document && echo ok)"
for bad in "--expect-pcie x15" "--expect-pcie gen7" "--expect-pcie x16-gen4" "--expect-pcie 16" "--expect-width 5x" \
  "--expect-speed fast" "--expect-ports 0" "--device mlx5_0,,mlx5_1" "--device ," "--device ../mlx5_0" "--device a\ b"; do
  eval "run fabric-sweep health $bad"
  check "fabric-sweep health $bad: a usage error (2) on one line" \
    test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep -F -e "${bad%% *}" "$WORK/err")"
done
run fabric-sweep health --device , -j
check "fabric-sweep health --device , -j: -j is no device name" test "$rc" -eq 2 -a -n "$(doc 'd["exit_code"] == 2' && echo ok)"
"$LINES" 12 --slow node0003 --dead node0009 --lossy node0001,node0002 -o "$WORK/twelve.jsonl"
run fabric-sweep report --csv "$WORK/page/pairs.csv" --outliers "$WORK/page/again.txt" \
  --prometheus "$WORK/page/$(printf 'p%.0s' $(seq 245)).prom" -j "$WORK/twelve.jsonl"
check "fabric-sweep report -j of 12 hosts: exit 1, a valid document" valid_document
check "fabric-sweep report -j: schema version 2, its count of passed pairs summary.passed, no summary.ok" \
  doc 'd["schema"] == "fabric-toolkit/fabric-sweep/2" and isinstance(d["summary"]["passed"], int) and "ok" not in d["summary"]'
check "fabric-sweep report -j: a slow host, a dead one, a lossy pair" \
  doc 'd["summary"]["slow"] == 10 and d["summary"]["failed"] == 12 and d["summary"]["run"] == "run-1" and not d["summary"]["notes"][:-1]'
check "fabric-sweep report --csv: a header and a row per pair" test "$(wc -l <"$WORK/page/pairs.csv")" -eq 67
check "fabric-sweep report --outliers: 22 pairs, no host twice in a round" /usr/bin/python3 - "$WORK/page/again.txt" <<'PY'
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
assert len(rows) == 22 and all(len(r) == 3 and int(r[0]) >= 1 for r in rows), rows
busy = collections.defaultdict(list)
for r, a, b in rows:
    busy[r] += [a, b]
assert all(len(v) == len(set(v)) for v in busy.values()), busy
PY
check "fabric-sweep report --prometheus: a name of 250 bytes is written" test -s "$WORK/page/$(printf 'p%.0s' $(seq 245)).prom"
# report new.jsonl old-docs.jsonl: the old run's documents, saved with -j
# (indented, no time), take no time from the new run's lines, which stay
# the latest run.
"$LINES" 6 --run r2 --labels none --time 2e9 -o "$WORK/new.jsonl"
"$LINES" 6 --run r1 --labels none --time 1.9e9 --dead node0003 | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if "event" not in d:
        print(json.dumps(d, indent=2))' >"$WORK/old-docs.jsonl"
run fabric-sweep report -j "$WORK/new.jsonl" "$WORK/old-docs.jsonl"
check "fabric-sweep report new.jsonl old-docs.jsonl: the new run is the latest, all passed (exit 0)" \
  doc 'd["summary"]["run"] == "r2" and d["summary"]["earlier_runs"] == 1 and d["summary"]["failed"] == 0 and d["exit_code"] == 0'
# A --pairs file is read as it comes: endless blank lines still hear
# SIGTERM, and an endless word is refused at once, its memory never held
# (a rank once ignored SIGTERM for minutes, and took 1.85 GB for a word).
mkfifo "$WORK/pairs-fifo"
yes '' >"$WORK/pairs-fifo" 2>/dev/null &
feeder=$!
interrupted TERM "$BIN/fabric-sweep" --hosts a,b --rank 1 --address 127.0.0.1 --timeout 400 --pairs "$WORK/pairs-fifo"
check "fabric-sweep --pairs of endless blank lines, SIGTERM: exit 130 within a second (${took} ms)" \
  test "$rc" -eq 130 -a "$took" -lt 1000
tr '\0' x </dev/zero >"$WORK/pairs-fifo" 2>/dev/null &
feeder=$!
run fabric-sweep --hosts a,b --rank 1 --address 127.0.0.1 --timeout 400 --pairs "$WORK/pairs-fifo"
kill "$feeder" 2>/dev/null
wait "$feeder" 2>/dev/null
check "fabric-sweep --pairs of an endless word: a usage error (2) at once, naming the line" \
  test "$rc" -eq 2 -a -n "$(grep -F -e "pairs-fifo:1: a word longer than 255 bytes" "$WORK/err")"
# report --check of a check the lines do not have: a usage error that
# says what they have (it once said "28 missing" and failed as a sweep).
"$LINES" 8 -o "$WORK/ping8.jsonl"
run fabric-sweep report --check bw "$WORK/ping8.jsonl"
check "fabric-sweep report --check bw of ping lines: exit 2, one line naming what the input has" \
  test "$rc" -eq 2 -a "$(wc -l <"$WORK/err")" -eq 1 -a -n "$(grep -F -e "--check bw: the input has no bw pair lines, only pair lines of ping (112)" "$WORK/err")"
run fabric-sweep report -j --check bw "$WORK/ping8.jsonl"
check "fabric-sweep report -j --check bw of ping lines: a valid document of the usage error" \
  doc 'd["exit_code"] == 2 and "no bw pair lines" in d["error"]'
# The meeting before the first round, on loopback: rank 0 holds every
# rank's connection until it answers them all, more than a soft limit of
# 48 open files allows; it raises the limit (within the hard one) and hears
# all 80. The pairs then fail at once, for want of an RDMA device.
if [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1024 ]; then
  mkdir "$WORK/many"
  for r in $(seq 0 79); do echo "n$r 127.0.0.1"; done >"$WORK/many/addresses"
  (
    ulimit -Sn 48
    for r in $(seq 0 79); do
      timeout -k 2 60 "$BIN/fabric-sweep" --hosts "n[0-79]" --rank "$r" --address-file "$WORK/many/addresses" \
        --port $((20000 + $$ % 20000)) --timeout 3000 --json=lines >"$WORK/many/$r.jsonl" 2>/dev/null </dev/null &
    done
    wait
  )
  check "fabric-sweep, 80 ranks on loopback under ulimit -n 48: every rank came to the start" /usr/bin/python3 - \
    "$WORK/many/0.jsonl" <<'PY'
import json, sys
start = [json.loads(l)["started"] for l in open(sys.argv[1]) if '"event":"started"' in l][0]
assert len(start["hosts"]) == 80 and start["absent"] == [], start["absent"]
outliers = [json.loads(l)["outliers"] for l in open(sys.argv[1]) if '"event":"outliers"' in l]
assert len(outliers) == 1 and outliers[0]["retest_pairs"] == [], outliers
PY
  check "fabric-sweep, 80 ranks on loopback: rank 0's lines are valid" "$VALIDATE" --lines "$WORK/many/0.jsonl"
fi
# Ctrl-C while the report waits for more input: 130 within a second, no file.
mkdir -m 700 "$WORK/int"
mkfifo "$WORK/fifo"
(cat "$WORK/twelve.jsonl"; sleep 20) >"$WORK/fifo" &
feeder=$!
interrupted INT "$BIN/fabric-sweep" report --html "$WORK/int/page.html" --csv "$WORK/int/pairs.csv" "$WORK/fifo"
check "fabric-sweep report, SIGINT while reading: exit 130 within a second (${took} ms)" test "$rc" -eq 130 -a "$took" -lt 1000
check "fabric-sweep report, SIGINT: no file written, none half-written" test -z "$(ls -A "$WORK/int")"
# Ctrl-C while a slow reader holds the document's results back: the
# document still ends whole and true, its verdict 130, the exit code too.
"$LINES" 60 -o "$WORK/sixty.jsonl"
mkfifo "$WORK/doc"
"$BIN/fabric-sweep" report -j "$WORK/sixty.jsonl" >"$WORK/doc" 2>/dev/null &
reporter=$!
exec 3<"$WORK/doc"
sleep 1
kill -INT "$reporter"
cat <&3 >"$WORK/cut.json"
exec 3<&-
rc=0
wait "$reporter" || rc=$?
check "fabric-sweep report -j, SIGINT while writing its results: exit 130" test "$rc" -eq 130
check "fabric-sweep report -j, SIGINT while writing: a whole, valid document that says so" /usr/bin/python3 - "$WORK/cut.json" "$SRC" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["exit_code"] == 130 and "interrupted" in d["error"], (d["ok"], d["exit_code"], d["error"])
assert 0 < len(d["results"]) < 1770 and d["summary"]["pairs"] == 1770, len(d["results"])
subprocess.run([sys.argv[2] + "/tests/json/validate", sys.argv[1]], check=True)
PY

# The page in a real browser (headless Chromium): the overview of 150 hosts
# renders without a console error, with its groups and the bad pairs'
# table; a screenshot of a small page stays in the build tree.
ART=$BIN/../test-artifacts
mkdir -p "$ART"
"$LINES" 150 --slow node0007 --dead node0100 -o "$WORK/big.jsonl"
run fabric-sweep report --html "$WORK/page/big.html" "$WORK/big.jsonl"
check "fabric-sweep report --html of 150 hosts: the page written" test "$rc" -eq 1 -a -s "$WORK/page/big.html"
# Named from the page's folder, so that its options show no test paths.
"$LINES" 6 --slow node0003 -o "$WORK/page/six.jsonl"
(cd "$WORK/page" && run fabric-sweep report --html six.html six.jsonl)
chrome() {
  local profile
  profile=$(mktemp -d "$WORK/chrome.XXXXXX")
  timeout -k 5 90 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}
if command -v chromium >/dev/null; then
  chrome --dump-dom "file://$WORK/page/big.html" >"$WORK/big.dom" 2>"$WORK/big.log"
  check "Chromium: the 150-host page renders with no console error" test -s "$WORK/big.dom" -a -z "$(grep ':CONSOLE' "$WORK/big.log")"
  check "Chromium: the overview, the filter and a row per bad pair" /usr/bin/python3 - "$WORK/big.dom" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
assert 'id="overview"' in dom and 'id="filter"' in dom, "no overview"
assert len(re.findall(r"<rect", dom)) == 2 * 30 * 31 // 2 - 30, len(re.findall(r"<rect", dom))
bad = dom[dom.index('<table id="bad">'):]
rows = re.findall(r"<tr><td>", bad[:bad.index("</table>")])
assert len(rows) == 149 + 148, len(rows)
assert not re.search(r'(src|href)="(https?:)?//', dom)
PY
  chrome --screenshot="$ART/fabric-sweep-report.png" --window-size=900,760 "file://$WORK/page/six.html" >/dev/null 2>"$WORK/six.log"
  check "Chromium: a screenshot of the small page, no console error" test -s "$ART/fabric-sweep-report.png" -a -z "$(grep ':CONSOLE' "$WORK/six.log")"
else
  fail "Chromium is not installed (scripts/install-deps)"
fi

# The schemas are themselves valid, and every man page lists the fields its
# tool's schema declares.
check "man pages and schemas agree" "$SRC/tests/json/man_agrees" "$SRC/schemas" "$SRC/man" "${TOOLS[@]}"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
