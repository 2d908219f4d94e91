# Helpers for the ACM host tests (no RDMA needed): a private work directory,
# the ACM stand-in, PASS/FAIL tally. Sourced with the build's bin directory
# as first argument.
set -u
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RESPONDER=$HERE/acm_responder.py
PY=/usr/bin/python3
ORIG=/usr/bin/ib_acme
WORK=$(mktemp -d /tmp/acm-test.XXXXXX)
_passed=0
_failed=0
_pids=()

pass() { echo "PASS: $*"; _passed=$((_passed + 1)); }
fail() { echo "FAIL: $*"; _failed=$((_failed + 1)); }

# responder NAME ARGS...: starts the stand-in on $WORK/NAME.sock (plus ARGS)
# and waits until it listens; its pid goes into RESPONDER_PID. With
# RESPONDER_AS=UID it runs as that user (the test must be root).
responder() {
  local name=$1; shift
  rm -f "$WORK/$name.ready"
  local as=()
  [ -n "${RESPONDER_AS:-}" ] && as=(setpriv --reuid="$RESPONDER_AS" --regid="$RESPONDER_AS" --clear-groups)
  timeout -k 2 300 "${as[@]}" "$PY" "$RESPONDER" --unix "$WORK/$name.sock" --ready "$WORK/$name.ready" "$@" \
    >"$WORK/$name.log" 2>&1 &
  RESPONDER_PID=$!
  _pids+=("$RESPONDER_PID")
  for _ in $(seq 100); do [ -e "$WORK/$name.ready" ] && return 0; sleep 0.05; done
  echo "    | responder $name did not start"; cat "$WORK/$name.log"
  return 1
}

stop_responder() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null || true; }

# capped SECONDS OUT CMD...: runs CMD with stdout in OUT, stderr in OUT.err.
capped() {
  local secs=$1 out=$2; shift 2
  timeout -k 2 "$secs" "$@" >"$out" 2>"$out.err"
}

# json_check FILE PYTHON_EXPR: FILE is one document valid against the
# installed vocabulary's schemas and EXPR holds of it (`d`; kind(K) is the
# list of its results of kind K).
json_check() {
  "$PY" - "$1" "$2" "$HERE/../json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
import fabric_json
with open(sys.argv[1]) as f:
    d = json.load(f)
try:
    fabric_json.check_all([d])
except ValueError as e:
    print("\n".join("    | " + p for p in str(e).splitlines()), file=sys.stderr)
    sys.exit(1)
kind = lambda k: [r for r in d["results"] if r["kind"] == k]
sys.exit(0 if eval("(" + sys.argv[2] + ")", {"d": d, "kind": kind}) else 1)
PY
}

finish() {
  local pid
  # Each pid is a timeout(1) wrapper; end what it runs too (opensm under
  # umad2sim does not always stop on the SIGTERM timeout forwards).
  for pid in "${_pids[@]}"; do
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null
  rm -rf "$WORK"
  echo "$_passed passed, $_failed failed"
  [ "$_failed" -eq 0 ]
}
