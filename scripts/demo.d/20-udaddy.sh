# udaddy: 4 UD connections through SIDR, 100 verified datagrams each way on
# each, with rdma-core's client against our server, then ours against ours.
"$BIN/udaddy" -b "$ADDR" -c 4 -C 100 >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.1; done
timeout 60 udaddy -s "$ADDR" -c 4 -C 100 >/dev/null 2>&1 && echo "   rdma-core udaddy client -> our server: 4 x 100 datagrams each way"
rc=$?
wait "$server" || rc=1
[ "$rc" -eq 0 ] || exit "$rc"
"$BIN/udaddy" -b "$ADDR" -c 4 -C 100 --verify >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.1; done
timeout 60 "$BIN/udaddy" -s "$ADDR" -c 4 -C 100 --verify --stats | grep -E '^udaddy: ([0-9]|connect )' | sed 's/^/   /'
rc=${PIPESTATUS[0]}
wait "$server" || rc=1
exit "$rc"
