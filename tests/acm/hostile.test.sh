#!/usr/bin/env bash
# ib_acme against a service that drips, fills its backlog, sends bytes that
# are not text or more counters than it should, or runs as a user nobody
# trusts; and -O into directories someone else controls. Every case ends
# within --timeout with its documented exit code and one error line.
. "$(dirname "$0")/lib.sh" "$@"
OURS=$BIN/ib_acme

# expect NAME WANT_RC ARGS...: runs ours (stdout $WORK/o, stderr $WORK/o.err).
expect() {
  local name=$1 want=$2; shift 2
  rc=0; capped 20 "$WORK/o" "$OURS" "$@" || rc=$?
  if [ "$rc" -eq "$want" ]; then pass "$name (exit $rc)"; else fail "$name: exit $rc, want $want"; cat "$WORK/o.err"; fi
}
one_error_line() { [ "$(wc -l <"$WORK/o.err")" -eq 1 ] && grep -q '^ib_acme: error: ' "$WORK/o.err"; }

# A reply that drips in, a byte every 50 ms, is bounded like a silent one.
responder drip --misbehave drip
t0=$SECONDS
expect "a dripping service: timeout" 6 -S "$WORK/drip.sock" -d 10.0.0.5 --timeout 700
if [ $((SECONDS - t0)) -le 3 ] && one_error_line; then pass "a dripping service costs --timeout, one error line"
else fail "dripping service took $((SECONDS - t0)) s"; cat "$WORK/o.err"; fi
stop_responder "$RESPONDER_PID"

# A full listen backlog is no connection: a timeout that says so.
responder full --misbehave backlog
t0=$SECONDS
expect "a full backlog: timeout" 6 -S "$WORK/full.sock" -d 10.0.0.5 --timeout 700
if [ $((SECONDS - t0)) -le 3 ] && grep -q "backlog is full" "$WORK/o.err"; then pass "a full backlog is named, within --timeout"
else fail "full backlog message"; cat "$WORK/o.err"; fi
expect "a full backlog, JSON" 6 -S "$WORK/full.sock" -d 10.0.0.5 --timeout 700 -j
if json_check "$WORK/o" "d['exit_code']==6 and not kind('service')[0]['reached']"; then pass "a full backlog: the service not reached"
else fail "full backlog JSON"; cat "$WORK/o"; fi
stop_responder "$RESPONDER_PID"

# A service that lists endpoints without end (the first one at every
# index, on each of 255 ports): -e stops at 1,024 listings with a warning,
# and the document holds them, where it would have asked 65,025 times and
# kept every one.
responder endless --misbehave endless
expect "endless endpoints: -e stops" 0 -S "$WORK/endless.sock" -e -j
if json_check "$WORK/o" "len(kind('endpoint')) == 1024" && grep -q "warning: the service listed 1024 endpoint ports" "$WORK/o.err"
then pass "endless endpoints: 1,024 listings kept, a warning says so"
else fail "endless endpoints"; head -c 600 "$WORK/o"; cat "$WORK/o.err"; fi
stop_responder "$RESPONDER_PID"

# Ctrl-C in the middle of -C's repetitions: the document has the lookup,
# with the repetitions it made.
responder reps
rc=0; timeout --preserve-status -s INT 2 "$OURS" -S "$WORK/reps.sock" -d 10.0.0.5 -C 100000000 -j >"$WORK/o" 2>"$WORK/o.err" || rc=$?
if [ "$rc" -eq 130 ] && json_check "$WORK/o" "d['exit_code'] == 130 and len(kind('lookup')) == 1 and kind('lookup')[0]['latency']['count'] > 10"
then pass "-C cut short by Ctrl-C: exit 130, the lookup and its repetitions reported"
else fail "-C cut short by Ctrl-C (exit $rc)"; head -c 800 "$WORK/o"; fi
stop_responder "$RESPONDER_PID"

# Bytes from the service that are not text never reach the terminal raw,
# and JSON stays valid.
responder bytes --misbehave bytes
expect "endpoint names with stray bytes" 0 -S "$WORK/bytes.sock" -e
if ! grep -q $'\x1b' "$WORK/o" && ! LC_ALL=C grep -q $'\xff' "$WORK/o" && grep -q 'ib\\xffacmp' "$WORK/o"; then
  pass "stray bytes are escaped in human output"
else fail "stray bytes in human output"; od -c "$WORK/o" | head; fi
expect "endpoint names with stray bytes, JSON" 0 -S "$WORK/bytes.sock" -e -j
if json_check "$WORK/o" "len(kind('endpoint'))>0 and all('acmp' in e['prov'] for e in kind('endpoint'))"; then
  pass "stray bytes: a valid document"
else fail "stray bytes JSON"; head -c 600 "$WORK/o"; fi
stop_responder "$RESPONDER_PID"

# More counters than the seven known: each keeps its own key.
responder counters --misbehave counters
expect "ten counters" 0 -S "$WORK/counters.sock" -P -j
if json_check "$WORK/o" "len(kind('counters')[0]['counters'])==10 and kind('counters')[0]['counters']['counter_9']==1009"; then
  pass "counters past the seventh keep their own keys"
else fail "ten counters JSON"; head -c 800 "$WORK/o"; fi
stop_responder "$RESPONDER_PID"

# Providers that misbehave when --probe loads them, each in its child:
# one document, each provider reported, the child never running on.
PROVIDERS=$BIN/../tests/providers
expect "--probe with hostile providers" 0 --probe -j --provider-path "$PROVIDERS" -S "$WORK/none.sock" --timeout 500
if [ "$(grep -c '"schema"' "$WORK/o")" -eq 1 ] &&
   json_check "$WORK/o" "len(d['summary']['probe_facts']['providers'])==4"; then
  pass "--probe: one document whatever the providers do"
else fail "--probe with hostile providers"; head -c 1500 "$WORK/o"; cat "$WORK/o.err"; fi
# What a provider writes on the probe's pipe in its place: only facts of
# their type are taken, text made printable, stray keys left out; a flood
# is cut short.
provider() { echo "[p for p in d['summary']['probe_facts']['providers'] if p['file'].endswith('/$1.so')][0]"; }
if json_check "$WORK/o" "(p := $(provider lies))['loaded'] is False and p['interface_version'] is None and p['size'] is None and
                         p['fits'] is False and p['file'].endswith('/lies.so') and '\x1b' not in p['name'] and
                         '\x07' not in p['error'] and 'stray' not in p"; then
  pass "--probe: a provider's lies on the pipe are not believed"
else fail "--probe: a lying provider"; head -c 3000 "$WORK/o"; fi
if json_check "$WORK/o" "$(provider floods)['error'] == \"provider's answer too long\""; then
  pass "--probe: a provider flooding the pipe is cut short"
else fail "--probe: a flooding provider"; head -c 3000 "$WORK/o"; fi
expect "--probe with hostile providers, human" 0 --probe --provider-path "$PROVIDERS" --timeout 500
if [ "$(grep -c '^ACM option probe' "$WORK/o")" -eq 1 ] && ! grep -q $'\x1b' "$WORK/o"; then
  pass "--probe: one report, no raw escapes"; else fail "--probe human"; cat -v "$WORK/o" | head -30; fi

# Ctrl-C while a provider hangs ends the probe at once, with 130.
t0=$SECONDS
rc=0; timeout --preserve-status -s INT 1 "$OURS" --probe --provider-path "$BIN/../tests/providers-hang" --timeout 20000 \
  >"$WORK/o" 2>"$WORK/o.err" || rc=$?
if [ "$rc" -eq 130 ] && [ $((SECONDS - t0)) -le 3 ]; then pass "--probe: Ctrl-C during a hanging provider exits 130 at once"
else fail "--probe Ctrl-C: exit $rc after $((SECONDS - t0)) s"; cat "$WORK/o.err"; fi

if [ "$(id -u)" -eq 0 ]; then
  # A service run by someone else: refused, unless --service-user names them.
  chmod 711 "$WORK"
  mkdir -m 777 "$WORK/svc"
  RESPONDER_AS=65534 responder svc/nobody
  expect "a service run by nobody is refused" 5 -S "$WORK/svc/nobody.sock" -d 10.0.0.5
  if grep -q "uid 65534.*not trusted" "$WORK/o.err" && grep -q "unable to contact service" "$WORK/o"; then
    pass "the refusal names the user"; else fail "refusal message"; cat "$WORK/o" "$WORK/o.err"; fi
  expect "--service-user trusts it" 0 -S "$WORK/svc/nobody.sock" -d 10.0.0.5 --service-user 65534
  expect "--service-user by name" 0 -S "$WORK/svc/nobody.sock" -d 10.0.0.5 --service-user nobody
  stop_responder "$RESPONDER_PID"
  # The same over TCP within this host: the owner of the service's socket.
  port=$(( 20000 + RANDOM % 20000 ))
  setpriv --reuid=65534 --regid=65534 --clear-groups timeout -k 2 60 "$PY" "$RESPONDER" --tcp "$port" \
    --ready "$WORK/svc/tcp.ready" >"$WORK/tcp.log" 2>&1 &
  _pids+=($!)
  for _ in $(seq 100); do [ -e "$WORK/svc/tcp.ready" ] && break; sleep 0.05; done
  echo "$port" >"$WORK/port"
  expect "a TCP service run by nobody is refused" 5 -S 127.0.0.1 --port-file "$WORK/port" -d 10.0.0.5
  expect "a TCP service: --service-user trusts it" 0 -S 127.0.0.1 --port-file "$WORK/port" -d 10.0.0.5 --service-user nobody
  expect "an unknown --service-user is a usage error" 2 -S 127.0.0.1 -d 10.0.0.5 --service-user no-such-user-here

  # -O into a directory owned by someone else, through a link they own, or
  # one anyone can write to: refused (2), nothing written.
  mkdir -p "$WORK/theirs" "$WORK/open" "$WORK/mine"
  chown 65534:65534 "$WORK/theirs"
  chmod 777 "$WORK/open"
  ln -s "$WORK/mine" "$WORK/link"
  chown -h 65534:65534 "$WORK/link"
  for d in theirs open link; do
    expect "-O into an unsafe directory ($d) is refused" 2 -O -D "$WORK/$d"
    if [ ! -e "$WORK/$d/ibacm_opts.cfg" ] && one_error_line; then pass "-O $d: nothing written, one error line"
    else fail "-O $d wrote or said too much"; cat "$WORK/o.err"; fi
  done
  # A file replaced keeps its mode and owner.
  echo old >"$WORK/mine/ibacm_opts.cfg"
  chmod 600 "$WORK/mine/ibacm_opts.cfg"
  chown 65534:65534 "$WORK/mine/ibacm_opts.cfg"
  expect "-O replaces a file" 0 -O -D "$WORK/mine"
  if [ "$(stat -c '%a %u' "$WORK/mine/ibacm_opts.cfg")" = "600 65534" ] && grep -q '^server_mode unix$' "$WORK/mine/ibacm_opts.cfg"; then
    pass "-O keeps the replaced file's mode and owner"
  else fail "-O mode/owner: $(stat -c '%a %u' "$WORK/mine/ibacm_opts.cfg")"; fi
  # A directory the user may not write to is the same usage error.
  mkdir -m 755 "$WORK/svc/ro"
  rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups timeout 20 "$OURS" -O -D "$WORK/svc/ro" >"$WORK/o" 2>"$WORK/o.err" || rc=$?
  if [ "$rc" -eq 2 ]; then pass "-O where the user cannot write: 2 as documented"; else fail "-O no permission: exit $rc"; cat "$WORK/o.err"; fi
else
  echo "SKIP: service identity and directory ownership need root"
fi

finish
