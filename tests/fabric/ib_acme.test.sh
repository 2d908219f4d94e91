#!/usr/bin/env bash
# ib_acme in the Soft-RoCE guest: -A/-O write what rdma-core's ib_acme
# writes from the same devices, atomically and safely; --probe sees rxe0;
# both tools resolve through the ACM stand-in on ibacm's default socket and
# TCP port file.
. "$(dirname "$0")/lib.sh" "$@"
OURS=$BIN/ib_acme
RESPONDER=$(cd "$(dirname "$0")/../acm" && pwd)/acm_responder.py

# -A and -O: the same files, byte for byte, and the same stdout.
for v in "" -V; do
  mkdir -p "$WORK/theirs$v" "$WORK/ours$v"
  expect_rc 0 "rdma-core ib_acme -A -O $v" "$ORIG/ib_acme" -A -O $v -D "$WORK/gen"
  cp "$WORK/gen/ibacm_addr.cfg" "$WORK/gen/ibacm_opts.cfg" "$WORK/theirs$v/"
  cp "$LAST_OUT" "$WORK/theirs$v/stdout"
  rm -rf "$WORK/gen"
  expect_rc 0 "our ib_acme -A -O $v" "$OURS" -A -O $v -D "$WORK/gen"
  cp "$WORK/gen/ibacm_addr.cfg" "$WORK/gen/ibacm_opts.cfg" "$WORK/ours$v/"
  cp "$LAST_OUT" "$WORK/ours$v/stdout"
  for f in ibacm_addr.cfg ibacm_opts.cfg stdout; do
    check "-A -O $v: $f identical to rdma-core's" cmp "$WORK/theirs$v/$f" "$WORK/ours$v/$f"
  done
  rm -rf "$WORK/gen"
done
check "the address file names rxe0" grep -q " rxe0 1 default$" "$WORK/ours/ibacm_addr.cfg"
check "-D is created with mode 755" bash -c "'$OURS' -O -D '$WORK/newdir' && [ \"\$(stat -c %a '$WORK/newdir')\" = 755 ]"
expect_rc 0 "-A FILE and -O FILE name the files" "$OURS" -A a.cfg -O o.cfg -D "$WORK/named"
check "named files written" test -s "$WORK/named/a.cfg" -a -s "$WORK/named/o.cfg"

# Failures: a one-line error, the documented exit code, nothing half-written.
expect_rc 8 "read-only target directory: exit 8" "$OURS" -O -D /usr/share/doc
check "one error line for the read-only target" grep -qx 'ib_acme: error: create a file in /usr/share/doc: Read-only file system' "$LAST_ERR"
expect_rc 2 "-D below a missing directory: exit 2" "$OURS" -O -D "$WORK/missing/deeper"
check "nothing created for the bad -D" test ! -e "$WORK/missing"
touch "$WORK/plainfile"
expect_rc 2 "-D naming a file: exit 2" "$OURS" -O -D "$WORK/plainfile"
mkdir -p "$WORK/trap"
echo "precious" >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/trap/ibacm_opts.cfg"
expect_rc 2 "a symlink planted at the target is refused: exit 2" "$OURS" -O -D "$WORK/trap"
check "the symlink's target is untouched" grep -qx precious "$WORK/victim"
check "the symlink is still a symlink" test -L "$WORK/trap/ibacm_opts.cfg"
check "no temporary file left behind" test -z "$(ls -A "$WORK/trap" | grep -v '^ibacm_opts.cfg$')"
expect_rc 2 "-A then -O into the trap: exit 2" "$OURS" -A -O -D "$WORK/trap" --json
check "JSON names the written file and the error" json_check "$LAST_OUT" \
  'd["exit_code"]==2 and "symbolic link" in d["error"] and kind("file")[0]["file"]=="addr"'

# --probe: rxe0 is RoCE, so the IB-only options are not usable.
expect_rc 0 "--probe" "$OURS" --probe --json
check "probe: rxe0 active, Ethernet" json_check "$LAST_OUT" \
  'any(p["device"]=="rxe0" and p["link_layer"]=="Ethernet" and p["state"]=="Active" and p["mtu"]==1024 for p in d["summary"]["probe_facts"]["ports"])'
check "probe: addr_prot acm not usable on RoCE" json_check "$LAST_OUT" \
  '[o for o in kind("check") if o["option"]=="addr_prot"][0]["usable"]==False and not kind("check")[0]["ok"]'
check "probe: ibacmp provider loads and fits" json_check "$LAST_OUT" \
  'any(p.get("name")=="ibacmp" and p["fits"] for p in d["summary"]["probe_facts"]["providers"])'

# Resolution through ibacm's default unix socket and its TCP port file.
timeout -k 2 120 python3 "$RESPONDER" --unix /run/ibacm-unix.sock --tcp 0 --port-file /run/ibacm-tcp.port \
  --ready "$WORK/ready" >"$WORK/responder.log" 2>&1 &
for _ in $(seq 100); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
expect_rc 0 "probe sees the service running" "$OURS" --probe --json
check "probe: service answers on the unix socket" json_check "$LAST_OUT" 'd["summary"]["probe_facts"]["service_status"]["running"] and d["summary"]["probe_facts"]["service_status"]["via"]=="unix"'
for svc in "" "-S localhost"; do
  run_capped 30 "$ORIG/ib_acme" $svc -d 10.0.0.5 -e; cp "$LAST_OUT" "$WORK/o1"
  expect_rc 0 "ours resolves ${svc:-on the default socket}" "$OURS" $svc -d 10.0.0.5 -e
  check "same output as rdma-core ${svc:-on the default socket}" cmp "$WORK/o1" "$LAST_OUT"
done
check "the service resolved 10.0.0.5" grep -q "dlid: 6" "$WORK/o1"

finish
