# ucmatose benchmark, run in the guest by bench/run: connections per second
# of ours and of rdma-core's ucmatose, each against its own server, for
# -c 100 and -c 500 (-C 1). Both tools print "cmatose: connecting" before
# resolving the first address and "receiving data transfers" once every
# connection is ESTABLISHED; the time between the two lines, taken as the
# client prints them, is the connection setup both tools are measured on.
# (Whole-run times under emulation are dominated by process start-up.)
# What each does before "connecting" is start-up: rdma-core's makes its
# rdma_cm ids; ours makes its ids and, on a host with one RDMA device,
# every connection's QP, as its server does before the first client comes.
# rdma-core's makes a connection's CQs and QP when its route resolves, on
# either side.
# Where the time goes: under perf in the guest (-c 500), three quarters of
# either of our processes' CPU time is spent in the kernel (the CM's MADs
# through Soft-RoCE, context switches, each QP's RTR resolving the peer's
# MAC on the kernel's one ordered address queue) and a few percent in our
# own code. Moving each QP's RTR and the CM answer after it to a helper
# thread, so that the event thread does not sleep through that resolution,
# was measured against the same build without it: 0.73 of its rate at
# -c 100 and 0.81 at -c 500 (medians of 13 rounds); the hand-offs' wake-ups
# cost more than the sleeps they save.
# The kernel's work queues over one -c 500 setup (ftrace, workqueue and
# sched_switch events): both tools make the kernel do the same work per
# connection (two CM work items, two MAD completion polls, four address
# resolutions: the client's address and each side's RTR finding its peer's
# MAC, one route). For ours, of the guest's two CPUs over the setup: its
# two processes 35% (mostly in system calls), the kernel's workers and soft
# interrupts 45%, idle 15-20%. The idle is mostly in the first 50 ms (the
# client resolving its first addresses while the server has no request
# yet) and the last 100 ms (the last connections' hand-offs through the
# kernel's queues, one after another, with few left to overlap them).
# Measured against the same build and found slower or no better: at most
# 12 or 40 connections in flight at a time, so that the tail is short
# (0.75 of the rate of all at once: fewer events come per wake-up), and
# taking each QP to RTS after its REP or RTU is sent instead of before, and
# asking the event channel again 10 or 50 times before sleeping on it (no
# difference beyond the rounds' spread). Ours' rate varies more from
# round to round than rdma-core's, which its own processes' CPU time bounds.
BIN=$1
ADDR=$FABRIC_ADDR

# setup_rate SERVER_BIN CLIENT_BIN CONNECTIONS: prints connections per
# second, the client's start-up in milliseconds (from "cmatose: starting
# client" to "cmatose: connecting": ours makes its QPs there), and where the
# guest's CPU time went during the setup: clock ticks of the client, of the
# server, of everything else that ran (the kernel's own threads and soft
# interrupts: the CM's MADs through Soft-RoCE and the loopback), and idle.
# Nothing when the client failed.
setup_rate() {
  local srv=$1 cli=$2 c=$3
  "$srv/ucmatose" -c "$c" -C 1 >/dev/null 2>&1 &
  local server=$!
  # The client starts once the server's start-up is over: it listens, and
  # the QPs it makes ahead of its clients (ours makes all of them, rdma-core's
  # none) are made. The figure is connection setup, not server start-up.
  for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.05; done
  local qps last=-1
  for _ in $(seq 300); do
    qps=$(rdma resource show qp 2>/dev/null | grep -c " type RC ")  # the server's: nothing else runs
    [ "$qps" -ge "$c" ] || [ "$qps" = "$last" ] && break
    last=$qps
    sleep 0.2
  done
  # The reader starts the client itself, so that it is up before the first line.
  python3 - "$c" "$server" stdbuf -oL "$cli/ucmatose" -s "$ADDR" -c "$c" -C 1 <<'PY'
import subprocess, sys, threading, time

def ticks(pid):  # user and system time of a process and its threads
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])

def guest():  # busy and idle time of every CPU
    t = [int(x) for x in open("/proc/stat").readline().split()[1:8]]
    return t[0] + t[1] + t[2] + t[5] + t[6], t[3] + t[4]

server = int(sys.argv[2])
seen = {}
client = subprocess.Popen(sys.argv[3:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
hang = threading.Timer(300, client.kill)  # a client that hangs fails its round
hang.daemon = True
hang.start()
for line in client.stdout:
    line = line.strip()
    if line not in seen:
        seen[line] = time.monotonic()
        if line in ("cmatose: connecting", "receiving data transfers"):
            seen[line, "cpu"] = (ticks(client.pid), ticks(server), *guest())
if client.wait() != 0 or "receiving data transfers" not in seen:
    sys.exit("bench: the client failed")
begin, end = seen["cmatose: connecting"], seen["receiving data transfers"]
cli, srv, busy, idle = (b - a for a, b in zip(seen["cmatose: connecting", "cpu"], seen["receiving data transfers", "cpu"]))
print("%.1f %.0f %d %d %d %d" % (int(sys.argv[1]) / (end - begin), 1000 * (begin - seen["cmatose: starting client"]),
                                 cli, srv, busy - cli - srv, idle))
PY
  local rc=$?
  wait "$server" 2>/dev/null
  return "$rc"
}

# Runs of the two alternate (which goes first changes every round) and the
# figure is the median of the rounds' ratios: the guest's speed drifts over
# a run by more than the difference being measured. A round whose ratio is
# more than 15% off the median is named with the tool that was off its own
# median rate then (both at once: the guest was slow or fast).
ROUNDS=${UCMATOSE_BENCH_ROUNDS:-7}
for c in 100 500; do
  ratios=() whole=() rates=() cpu=()
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
      read -r theirs theirs_start theirs_cpu < <(setup_rate /usr/bin /usr/bin "$c")
      read -r ours ours_start ours_cpu < <(setup_rate "$BIN" "$BIN" "$c")
    else
      read -r ours ours_start ours_cpu < <(setup_rate "$BIN" "$BIN" "$c")
      read -r theirs theirs_start theirs_cpu < <(setup_rate /usr/bin /usr/bin "$c")
    fi
    if [ -z "$theirs" ] || [ -z "$ours" ]; then
      # The failed client said why on stderr; its round has no figure.
      echo "ucmatose: -c $c round $r left out: a client failed (connections/s: rdma-core ${theirs:-none}, ours ${ours:-none})"
      continue
    fi
    echo "ucmatose: -c $c round $r connection setup, connections/s: rdma-core ${theirs}, ours ${ours}" \
         "(client start-up, ms: rdma-core ${theirs_start}, ours ${ours_start})"
    ratios+=("$(awk -v o="$ours" -v t="$theirs" 'BEGIN {printf "%.2f", o / t}')")
    # The same with each client's start-up counted as part of its setup.
    whole+=("$(awk -v c="$c" -v o="$ours" -v os="$ours_start" -v t="$theirs" -v ts="$theirs_start" \
                'BEGIN {printf "%.2f", (c / t + ts / 1000) / (c / o + os / 1000)}')")
    rates+=("$r $theirs $ours")
    cpu+=("rdma-core $theirs_cpu" "ours $ours_cpu")
  done
  if [ "${#ratios[@]}" = 0 ]; then
    echo "ucmatose: -c $c: no round gave a figure"
    continue
  fi
  # Why a round's ratio is off the median: which tool was off its own
  # median rate in that round (both at once: the guest was).
  printf '%s\n' "${rates[@]}" | awk -v c="$c" '
    function median(v, n,   i, j, t, s) {
      for (i = 1; i <= n; i++) s[i] = v[i]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) {t = s[i]; s[i] = s[j]; s[j] = t}
      return s[int((n + 1) / 2)]
    }
    {round[NR] = $1; theirs[NR] = $2; ours[NR] = $3; ratio[NR] = $3 / $2}
    END {
      mt = median(theirs, NR); mo = median(ours, NR); mr = median(ratio, NR)
      for (i = 1; i <= NR; i++) {
        if (ratio[i] > 0.85 * mr && ratio[i] < 1.15 * mr) continue
        o = ours[i] / mo; t = theirs[i] / mt
        so = o < 0.9 ? "slow" : o > 1.1 ? "fast" : ""; st = t < 0.9 ? "slow" : t > 1.1 ? "fast" : ""
        why = so != "" && so == st ? "the guest: both tools " so \
            : so != "" && st != "" ? "ours " so ", rdma-core " st \
            : so != "" ? "ours " so : st != "" ? "rdma-core " st : "each a little off"
        printf "ucmatose: -c %d round %d ratio %.2f: ours at %.2f of its median rate, rdma-core at %.2f: %s\n",
               c, round[i], ratio[i], o, t, why
      }
    }'
  printf '%s\n' "${ratios[@]}" | sort -n | awk -v c="$c" '{a[NR] = $1}
    END {printf "ucmatose: -c %d ours / rdma-core = %.2f (median of %d rounds, %.2f..%.2f; target >= 2.0)\n",
                c, a[int((NR + 1) / 2)], NR, a[1], a[NR]}'
  printf '%s\n' "${whole[@]}" | sort -n | awk -v c="$c" '{a[NR] = $1}
    END {printf "ucmatose: -c %d with the client'"'"'s start-up counted: ours / rdma-core = %.2f (median of %d rounds)\n",
                c, a[int((NR + 1) / 2)], NR}'
  # Where the guest's CPU time went while connections were set up, over all
  # rounds: what the tools do themselves, and the kernel's share that both
  # meet alike (its threads and soft interrupts; idle: waiting on it).
  printf '%s\n' "${cpu[@]}" | awk -v c="$c" '
    {cli[$1] += $2; srv[$1] += $3; kern[$1] += $4; idle[$1] += $5}
    END {
      for (who in cli) {
        all = cli[who] + srv[who] + kern[who] + idle[who]
        if (all == 0) continue
        printf "ucmatose: -c %d %s, the guest'"'"'s CPU time while setting up (%d ticks over the rounds): " \
               "client %.0f%%, server %.0f%%, the kernel'"'"'s threads and interrupts %.0f%%, idle %.0f%%\n",
               c, who, all, 100 * cli[who] / all, 100 * srv[who] / all, 100 * kern[who] / all, 100 * idle[who] / all
      }
    }' | sort
done

# What a connection costs in system calls, whole run (start-up, setup, one
# message each way, teardown), each tool against its own server: the calls
# of -c 500 less those of -c 100, over 400, counted by strace -c (counts,
# not time: strace slows a run down). Setting a connection up through
# librdmacm costs both tools the same calls, and librdmacm adds queries of
# its own to the events (the request's address, GID and path; the resolved
# address; the route's path). What rdma-core's makes per connection and
# ours does not is a PD, two CQs and an MR (ioctls, and mmaps of the rxe
# queues): ours shares them; its QPs it makes too, but ahead of the setup.
# calls SERVER_BIN CLIENT_BIN CONNECTIONS: "client server" calls by kind.
calls() {
  local srv=$1 cli=$2 c=$3 work
  work=$(mktemp -d)
  strace -f -c -U calls,name -o "$work/server" "$srv/ucmatose" -c "$c" -C 1 >/dev/null 2>&1 &
  local server=$!
  for _ in $(seq 200); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.05; done
  timeout 300 strace -f -c -U calls,name -o "$work/client" "$cli/ucmatose" -s "$ADDR" -c "$c" -C 1 >/dev/null 2>&1
  wait "$server" 2>/dev/null
  for side in client server; do
    awk '$2 == "write" {w = $1} $2 == "ioctl" {i = $1} $2 == "mmap" || $2 == "munmap" {m += $1}
         $2 == "total" {t = $1} END {printf "%d %d %d %d ", t, w, i, m}' "$work/$side"
  done
  rm -rf "$work"
}
for who in rdma-core ours; do
  dir=$BIN
  [ "$who" = rdma-core ] && dir=/usr/bin
  read -r -a few <<<"$(calls "$dir" "$dir" 100)"
  read -r -a many <<<"$(calls "$dir" "$dir" 500)"
  [ "${#few[@]}" = 8 ] && [ "${#many[@]}" = 8 ] || { echo "ucmatose: $who: system calls not counted"; continue; }
  per=()
  for k in $(seq 0 7); do per+=("$(awk -v a="${few[$k]}" -v b="${many[$k]}" 'BEGIN {printf "%.1f", (b - a) / 400}')"); done
  echo "ucmatose: $who, system calls per connection (strace -c, whole run):" \
       "client ${per[0]} (write ${per[1]}, ioctl ${per[2]}, mmap/munmap ${per[3]})," \
       "server ${per[4]} (write ${per[5]}, ioctl ${per[6]}, mmap/munmap ${per[7]})"
done
