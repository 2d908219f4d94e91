# ucmatose benchmark, run in the guest by bench/run: connections per second
# of ours and of rdma-core's ucmatose, each against its own server, for
# -c 100 and -c 500 (-C 1). Both tools print "cmatose: connecting" before
# resolving the first address and "receiving data transfers" once every
# connection is ESTABLISHED; the time between the two lines, taken as the
# client prints them, is the connection setup both tools are measured on.
# (Whole-run times under emulation are dominated by process start-up.)
BIN=$1
ADDR=$FABRIC_ADDR

# setup_rate SERVER_BIN CLIENT_BIN CONNECTIONS: prints connections per second.
setup_rate() {
  local srv=$1 cli=$2 c=$3
  "$srv/ucmatose" -c "$c" -C 1 >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.05; done
  # The reader starts the client itself, so that it is up before the first line.
  python3 - "$c" timeout 300 stdbuf -oL "$cli/ucmatose" -s "$ADDR" -c "$c" -C 1 <<'PY'
import subprocess, sys, time
seen = {}
client = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
for line in client.stdout:
    seen.setdefault(line.strip(), time.monotonic())
if client.wait() != 0 or "receiving data transfers" not in seen:
    sys.exit("bench: the client failed")
print("%.1f" % (int(sys.argv[1]) / (seen["receiving data transfers"] - seen["cmatose: connecting"])))
PY
  local rc=$?
  wait "$server" 2>/dev/null
  return "$rc"
}

for c in 100 500; do
  theirs=$(setup_rate /usr/bin /usr/bin "$c")
  ours=$(setup_rate "$BIN" "$BIN" "$c")
  echo "ucmatose: -c $c connection setup, connections/s: rdma-core ${theirs}, ours ${ours}"
  awk -v o="$ours" -v t="$theirs" -v c="$c" 'BEGIN {printf "ucmatose: -c %d ours / rdma-core = %.2f (target >= 1.5)\n", c, o / t}'
done
