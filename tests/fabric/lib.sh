# Helpers for fabric test scripts; sourced by tests/fabric/*.test.sh, which
# run inside the Soft-RoCE guest (tests/fabric/bed) with the build's bin
# directory as their first argument.
#
#   . "$(dirname "$0")/lib.sh" "$@"
#   start_bg srv "$BIN/rping" -s -a "$FABRIC_ADDR" -C 10
#   wait_cm_listen 7174
#   expect_rc 0 "client gets 10 pings" "$BIN/rping" -c -a "$FABRIC_ADDR" -C 10
#   expect_bg srv 0 "server ends cleanly"
#   finish

set -u
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
ADDR=${FABRIC_ADDR:?run this inside the fabric bed}
# rdma-core's originals, for compatibility checks in both directions.
ORIG=/usr/bin
WORK=$(mktemp -d /tmp/fabric-test.XXXXXX)
LAST_OUT=$WORK/last.out   # stdout of the last run_capped/expect_rc
LAST_ERR=$WORK/last.err   # its stderr
_passed=0
_failed=0
declare -A _bg_pid=() _bg_rc=()

# Each line ends with the seconds since the check before: where a slow
# test spends its time.
_last_check=$SECONDS
pass() { echo "PASS: $* (+$((SECONDS - _last_check))s)"; _last_check=$SECONDS; _passed=$((_passed + 1)); }
fail() { echo "FAIL: $* (+$((SECONDS - _last_check))s)"; _last_check=$SECONDS; _failed=$((_failed + 1)); }

# check NAME CMD...: passes when CMD succeeds.
check() {
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

# run_capped SECONDS CMD...: runs CMD with its stdout in $LAST_OUT and its
# stderr in $LAST_ERR, killed after SECONDS (status 124); returns CMD's status.
run_capped() {
  local secs=$1; shift
  timeout -k 2 "$secs" "$@" >"$LAST_OUT" 2>"$LAST_ERR"
}

# show FILE...: the errors that output files name (the first five) and
# their tail, indented, for a failure report.
show() { { grep -h -m 5 '"error": *"' "$@"; tail -q -n 30 "$@"; } 2>/dev/null | sed 's/^/    | /'; }

# expect_rc RC NAME CMD...: runs CMD (capped at 60 s) and passes when its
# exit status is RC; prints the output on failure.
expect_rc() {
  local want=$1 name=$2; shift 2
  local rc=0
  run_capped "${CAP:-60}" "$@" || rc=$?
  if [ "$rc" -eq "$want" ]; then
    pass "$name"
  else
    fail "$name (exit $rc, want $want): $*"
    show "$LAST_OUT" "$LAST_ERR"
  fi
}

# start_bg NAME CMD...: starts CMD in the background (capped at 120 s),
# stdout in $(bg_out NAME), stderr in $(bg_err NAME).
start_bg() {
  local name=$1; shift
  timeout -k 2 "${CAP_BG:-120}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  _bg_pid[$name]=$!
}

# wait_bg NAME [SECONDS]: waits for a background command, returns its
# status; after SECONDS (default 60) kills it and returns 124.
wait_bg() {
  local name=$1 pid=${_bg_pid[$1]} until=$((SECONDS + ${2:-60}))
  while [ $SECONDS -lt $until ]; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 124
  fi
  local rc=0
  wait "$pid" || rc=$?
  return "$rc"
}

# expect_bg NAME RC TEST_NAME [SECONDS]: waits for NAME and checks its status.
expect_bg() {
  local name=$1 want=$2 tname=$3 secs=${4:-60}
  local rc=0
  wait_bg "$name" "$secs" || rc=$?
  if [ "$rc" -eq "$want" ]; then
    pass "$tname"
  else
    fail "$tname (exit $rc, want $want)"
    show "$WORK/$name.out" "$WORK/$name.err"
  fi
}

# stop_bg NAME [SIGNAL]: signals a background command and reaps it; its
# exit status is then $(bg_rc NAME).
stop_bg() {
  local pid=${_bg_pid[$1]} rc=0
  # The command runs under timeout(1), which would not pass SIGKILL on:
  # signal the command itself.
  pkill "-${2:-TERM}" -P "$pid" 2>/dev/null || true
  wait_bg "$1" 10 || rc=$?
  _bg_rc[$1]=$rc
}
bg_rc() { echo "${_bg_rc[$1]:-}"; }

# bg_out NAME, bg_err NAME: the stdout and stderr files of a background command.
bg_out() { echo "$WORK/$1.out"; }
bg_err() { echo "$WORK/$1.err"; }

# cm_id_re STATE PORT [END]: matches a line of `rdma resource show cm_id`
# that shows an rdma_cm id in STATE (LISTEN; CONNECT once connected) on
# local port PORT, or on remote port PORT with END dst.
cm_id_re() { echo "state $1 .*${3:-src}-addr [^ ]*:$2( |\$)"; }

# cm_id_seen STATE PORT END SECONDS: waits until an rdma_cm id of this host
# matches cm_id_re STATE PORT END.
cm_id_seen() {
  local until=$((SECONDS + $4))
  until rdma resource show cm_id 2>/dev/null | grep -qE "$(cm_id_re "$1" "$2" "$3")"; do
    [ $SECONDS -lt $until ] || return 1
    sleep 0.1
  done
}

# wait_cm_listen PORT [SECONDS]: waits (default 20 s) until an rdma_cm id
# listens on PORT.
wait_cm_listen() {
  local port=$1
  cm_id_seen LISTEN "$port" src "${2:-20}" && return 0
  echo "    | nothing listens on rdma_cm port $port after ${2:-20}s"
  return 1
}

# peer_wait_cm STATE PORT [SECONDS]: waits (default 20 s) until an rdma_cm
# id of host B, in a two-host bed, is in STATE on port PORT.
peer_wait_cm() {
  local state=$1 port=$2 secs=${3:-20}
  # shellcheck disable=SC2016  # $0 is expanded on B
  if "$(dirname "${BASH_SOURCE[0]}")/on-peer" run timeout "$secs" bash -c \
    'until rdma resource show cm_id 2>/dev/null | grep -qE "$0"; do sleep 0.1; done' \
    "$(cm_id_re "$state" "$port")" >/dev/null 2>&1; then
    return 0
  fi
  echo "    | no rdma_cm id of host B in state $state on port $port after ${secs}s; B's ids and processes:"
  # shellcheck disable=SC2016  # expanded on B
  "$(dirname "${BASH_SOURCE[0]}")/on-peer" run bash -c \
    'timeout 10 rdma resource show cm_id; echo "(status $?)"; ps -e -o pid,stat,etime,wchan:20,comm | grep -Ev " (ps|grep|bash|sleep)$" | tail -n 8' 2>&1 |
    head -n 24 | sed 's/^/    |   /'
  return 1
}

# json_check FILE PYTHON_EXPR: parses FILE as one JSON document, validates it
# against its schema (schemas/), and evaluates the expression with the
# document bound to d; shows the document and what failed when not.
json_check() { _json_eval document "$@"; }

# In both, kind(K) is the list of the document's results of kind K.
#
# json_lines_check FILE PYTHON_EXPR: the same for the output of --json=lines:
# every line is validated, `lines` is the list of objects (events first, the
# document last) and `d` is the document.
json_lines_check() { _json_eval lines "$@"; }

# The checks are answered by one python process for the whole script
# (tests/json/check_server), started by the first: importing jsonschema
# costs seconds in the guest.
_json_eval() {
  if [ -z "${_json_pid:-}" ]; then
    coproc _JSON_SERVER { exec /usr/bin/python3 "$_JSON_LIB/check_server"; }
    _json_pid=$_JSON_SERVER_PID _json_in=${_JSON_SERVER[1]} _json_out=${_JSON_SERVER[0]}
  fi
  printf '%s\0%s\0%s\0' "$1" "$2" "$3" >&"$_json_in"
  local line
  while IFS= read -r line <&"$_json_out"; do
    case $line in
      "@@done "*) return "${line#@@done }" ;;
      *) printf '%s\n' "$line" ;;
    esac
  done
  echo "    | the JSON check server ended"
  return 1
}
_JSON_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../json" && pwd)

# show_why: what the other hosts' commands that on-peer had to kill were
# doing then (tests/fabric/on-peer), the evidence of why they ran so long.
show_why() {
  local f
  for f in "${FABRIC_JOB:-/nonexistent}"/peer*/*.why; do
    [ -e "$f" ] || continue
    echo "    | killed for running too long: ${f##*/}"
    sed 's/^/    | /' "$f"
  done
}

# finish: prints the tally and exits non-zero when anything failed.
finish() {
  local pid
  for pid in "${_bg_pid[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # The check server ends at the end of its requests.
  if [ -n "${_json_pid:-}" ]; then
    exec {_json_in}>&-
    wait "$_json_pid" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  [ "$_failed" -eq 0 ] || show_why
  echo "$_passed passed, $_failed failed"
  [ "$_failed" -eq 0 ]
}
