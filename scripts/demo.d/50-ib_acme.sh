# ib_acme: configuration files from the local devices (identical to
# rdma-core's), the ACM option probe, and resolution through an ACM service
# (the tests' stand-in on ibacm's default socket: the real ibacm needs an
# InfiniBand port).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d /tmp/demo-acme.XXXXXX)
trap 'kill $srv 2>/dev/null; rm -rf "$work"' EXIT
rc=0

timeout 30 "$BIN/ib_acme" -A -O -D "$work/ours" || rc=1
timeout 30 ib_acme -A -O -D "$work/theirs" >/dev/null || rc=1
for f in ibacm_addr.cfg ibacm_opts.cfg; do
  if cmp -s "$work/ours/$f" "$work/theirs/$f"; then echo "   -A -O: $f identical to rdma-core's"; else echo "   -A -O: $f DIFFERS"; rc=1; fi
done
grep -v '^#' "$work/ours/ibacm_addr.cfg" | sed 's/^/   addr.cfg: /'

timeout 30 "$BIN/ib_acme" --probe | sed 's/^/   /' || rc=1

timeout 60 python3 "$here/tests/acm/acm_responder.py" --unix /run/ibacm-unix.sock --ready "$work/ready" >/dev/null 2>&1 &
srv=$!
for _ in $(seq 100); do [ -e "$work/ready" ] && break; sleep 0.05; done
timeout 30 "$BIN/ib_acme" -d 10.0.0.[5-6] -v -C 100 --stats | sed 's/^/   /'
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
timeout 30 "$BIN/ib_acme" -d 10.0.0.250 --json >"$work/fail.json"
status=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d["results"] if x["kind"]=="lookup"][0]; print("   --json: %s -> ok=%s status=%s, exit %d" % (r["dest"], r["ok"], r["status"], d["exit_code"]))' "$work/fail.json" || rc=1
[ "$status" -eq 1 ] || rc=1
exit $rc
